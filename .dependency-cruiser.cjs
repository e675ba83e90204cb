// Import rules for agentplane, checked by dependency-cruiser (`make lint`, also run by `make test`).
// The layering they keep is described in docs/architecture.md ("Import rules").
//
// A .cjs file because package.json says "type": "module"; this is the name `depcruise --init`
// picks for such a package. Paths in the rules are regular expressions on the path of a file
// relative to the repository root, e.g. "pkg/api/meta.ts".

/** Every source folder of the project; anything else (node_modules, node: built-ins) is not ours. */
const PROJECT = "^(cmd|pkg|plugins|test|bench|clients)/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "api-is-a-leaf",
      comment:
        "pkg/api holds the resource types and their schemas that every other layer, the plugins " +
        "and the clients share. It must import nothing else of the project, or the contract " +
        "drags an implementation along and the layers above it become one.",
      severity: "error",
      from: { path: "^pkg/api/" },
      to: { path: PROJECT, pathNot: "^pkg/api/" },
    },
    {
      name: "plugins-use-the-contract",
      comment:
        "A plugin sees the service only through the plugin contract (pkg/plugin) and the API " +
        "types (pkg/api), plus the files of its own folder. Reaching into the controllers, the " +
        "registry or another plugin ties it to internals that change without notice.",
      severity: "error",
      from: { path: "^plugins/([^/]+)/" },
      to: { path: PROJECT, pathNot: ["^pkg/plugin/", "^pkg/api/", "^plugins/$1/"] },
    },
    {
      name: "controllers-act-through-the-runtime",
      comment:
        "Controllers drive agents through the runtime interface (pkg/runtime), so they work the " +
        "same embedded and on Kubernetes; they must not talk to the worker side (pkg/worker) or " +
        "to the HTTP layer (pkg/server) directly.",
      severity: "error",
      from: { path: "^pkg/controller/" },
      to: { path: "^pkg/(worker|server)/" },
    },
    {
      name: "server-not-worker",
      comment:
        "The API server serves resources; the worker process is reached through the runtime. " +
        "pkg/server importing pkg/worker would put worker code into the server's process.",
      severity: "error",
      from: { path: "^pkg/server/" },
      to: { path: "^pkg/worker/" },
    },
    {
      name: "server-reaches-workers-through-the-store",
      comment:
        "The APIs act on agents by writing them; the controllers act on what is written, through " +
        "the runtime. pkg/server importing pkg/runtime would open a second route to a worker " +
        "beside the controllers (steering is a follow-up stored on the agent: " +
        "pkg/server/services/agent-service.ts). What a route needs of a runtime part is an interface " +
        "of its own, which the runtime fits (pkg/server/routes/worker-channel.ts).",
      severity: "error",
      from: { path: "^pkg/server/" },
      to: { path: "^pkg/runtime/" },
    },
    {
      name: "plugin-contract-stands-alone",
      comment:
        "pkg/plugin is the contract plugins see: narrow interfaces of its own, which the service's " +
        "registry, informers and controllers fit. Importing pkg/controller, pkg/runtime or the " +
        "registry's internals would hand plugins the internals again and tie pkg/plugin and " +
        "pkg/controller into a cycle. The one exception is the event store interface that plugins " +
        "implement (pkg/registry/events.ts, which imports only pkg/api).",
      severity: "error",
      from: { path: "^pkg/plugin/" },
      to: { path: "^pkg/(controller|runtime|registry)/", pathNot: "^pkg/registry/events\\.ts$" },
    },
    {
      name: "clients-stand-alone",
      comment:
        "The typed clients (clients/, clients/README.md) are packages of their own, published " +
        "apart from the server: they know the API only through the types generated from its " +
        "OpenAPI document. An import of the project's code would not exist in the package.",
      severity: "error",
      from: { path: "^clients/" },
      to: { path: "^(cmd|pkg|plugins|test|bench)/" },
    },
    {
      name: "no-test-code-in-product",
      comment:
        "Product code (cmd, pkg, plugins) ships; test/ and bench/ do not. An import from there " +
        "breaks the build of a release or smuggles fakes into production.",
      severity: "error",
      from: { path: "^(pkg|plugins|cmd)/" },
      to: { path: "^(test|bench)/" },
    },
    {
      name: "no-circular",
      comment:
        "A cycle between modules of pkg makes load order matter and the layers impossible to " +
        "separate.",
      severity: "error",
      from: { path: "^pkg/" },
      to: { circular: true },
    },
    {
      name: "no-unresolvable-imports",
      comment:
        "Guards the checker itself: an import it cannot resolve to a file (e.g. a '.js' " +
        "specifier whose '.ts' source is missing) would slip past every rule above.",
      severity: "error",
      from: { path: PROJECT },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ["node_modules"] },
    // Parse the TypeScript sources before compilation: type-only imports (`import type`,
    // `import { type X }`, `import('./x.js').T`) count too, as they couple the layers just the same.
    tsPreCompilationDeps: true,
    // NodeNext resolution from tsconfig.json: `../api/meta.js` resolves to pkg/api/meta.ts.
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".json", ".d.ts"],
      mainFields: ["module", "main", "types", "typings"],
    },
    skipAnalysisNotInRules: true,
  },
};
