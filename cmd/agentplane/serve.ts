// Wiring of the service, in one place: a home (homes.ts) provides state, secrets, TLS and auth;
// everything else is the same in both homes. Each part is a runnable of the manager, started in the order added
// and stopped in reverse.

import { accessSync, chmodSync, constants as fsConstants, mkdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Agent } from '../../pkg/api/agent.js';
import { type TemplateConfig, templateConfigs } from '../../pkg/api/template-settings.js';
import type { Connector } from '../../pkg/api/connector.js';
import { storageFault } from '../../pkg/api/storage-errors.js';
import type { Squad } from '../../pkg/api/squad.js';
import { urlEgressRefusal } from '../../pkg/connector/egress.js';
import { ConnectorGateway } from '../../pkg/connector/gateway.js';
import { attachEgressProxy, EgressProxy } from '../../pkg/egress/proxy.js';
import { AgentController } from '../../pkg/controller/agent-controller.js';
import { Controller } from '../../pkg/controller/framework/controller.js';
import { candidateIdentity, LeaderElector } from '../../pkg/controller/framework/leader-election.js';
import { SquadController } from '../../pkg/controller/squad-controller.js';
import { ConnectorController } from '../../pkg/controller/connector-controller.js';
import { ConnectorAccess } from '../../pkg/connector/access.js';
import { ConnectorChecker } from '../../pkg/connector/check.js';
import { Manager } from '../../pkg/manager/manager.js';
import { CredentialRegistry, MODEL_PROXY_PATH, ModelProxy, type ModelProxyEvents, ModelReports, type RetryPolicy, UsageMeter } from '../../pkg/modelproxy/index.js';
import { componentLogger, createLogger, type Logger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { Hooks } from '../../pkg/plugin/hooks.js';
import { CORE_NEEDS, loadPlugins } from '../../pkg/plugin/loader.js';
import type { PluginContext } from '../../pkg/plugin/types.js';
import { AdmissionChain, readThrough, storageReader } from '../../pkg/registry/admission/admission.js';
import { connectorInUse } from '../../pkg/registry/admission/connector-in-use.js';
import { connectorSecretBinding } from '../../pkg/registry/admission/connector-secret-binding.js';
import { connectorsExist } from '../../pkg/registry/admission/connectors-exist.js';
import { squadMembership } from '../../pkg/registry/admission/squad-membership.js';
import { templateExists } from '../../pkg/registry/admission/template-exists.js';
import { cancelRunningTask } from '../../pkg/registry/agent/requests.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { ReadCache } from '../../pkg/registry/cache/reads.js';
import { WatermarkedStore } from '../../pkg/registry/cache/watermark.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { EventLog } from '../../pkg/registry/event-log.js';
import { DEFAULT_EVENTS_PER_AGENT, type EventStore } from '../../pkg/registry/events.js';
import { Registry } from '../../pkg/registry/registry.js';
import { loadSecretsKey } from '../../pkg/registry/secrets/secrets-key.js';
import { indexMembership } from '../../pkg/registry/squad/membership.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';
import { defaultMaxWorkers } from '../../pkg/runtime/local/capacity.js';
import type { LocalRuntime } from '../../pkg/runtime/local/local-runtime.js';
import type { AgentRuntime } from '../../pkg/runtime/runtime.js';
import { NO_SANDBOX, resolveSandbox, type SandboxMode } from '../../pkg/runtime/local/sandbox.js';
import { startScriptedModel, type ScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { createApp, type HttpTimeouts } from '../../pkg/server/app.js';
import { aggregatedApiRoutes } from '../../pkg/server/aggregated/index.js';
import { type AuditLevel, installAuditLog, levelPolicy, loadAuditPolicy, openAuditSink, writesAnything } from '../../pkg/server/audit/index.js';
import { ALWAYS_ALLOW_PATHS, BYPASS_PATHS, installAuthFilter } from '../../pkg/server/auth/filter.js';
import { DEFAULT_RATE_LIMIT, installRateLimit } from '../../pkg/server/rate-limit.js';
import type { OidcOptions } from '../../pkg/server/auth/oidc.js';
import { isLoopbackHost } from '../../pkg/server/auth/token-file.js';
import { AgentService } from '../../pkg/server/rest/agent-service.js';
import { ConnectorService } from '../../pkg/server/rest/connector-service.js';
import { SecretService } from '../../pkg/server/rest/secret-service.js';
import { SquadService } from '../../pkg/server/rest/squad-service.js';
import { installLeaderOnly } from '../../pkg/server/leader-only.js';
import { routesOf } from '../../pkg/server/route-table.js';
import { agentFileRoutes } from '../../pkg/server/routes/agent-files.js';
import { agentStreamRoutes } from '../../pkg/server/routes/agent-stream.js';
import { agentRoutes } from '../../pkg/server/routes/agents.js';
import { agentOpRoutes } from '../../pkg/server/routes/agent-ops.js';
import { AgentCompaction } from '../../pkg/server/rest/agent-compaction.js';
import { AgentCosts } from '../../pkg/server/rest/agent-costs.js';
import { connectorRoutes } from '../../pkg/server/routes/connectors.js';
import { secretRoutes } from '../../pkg/server/routes/secrets.js';
import { squadRoutes } from '../../pkg/server/routes/squads.js';
import { type ReadinessCheck, systemRoutes } from '../../pkg/server/routes/system.js';
import { uiRoutes } from '../../pkg/server/routes/ui.js';
import { openWorkspaceFile, readWorkspacePath } from '../../pkg/runtime/local/workspace-files.js';
import { modelProxyRoutes } from '../../pkg/server/routes/model-proxy.js';
import { connectorGatewayRoutes } from '../../pkg/server/routes/connector-gateway.js';
import { modelReportRoutes } from '../../pkg/server/routes/model-reports.js';
import { workerChannelRoutes } from '../../pkg/server/routes/worker-channel.js';
import type { ChannelLimits } from '../../pkg/runtime/channel/limits.js';
import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';
import { embeddedHome, type KubernetesHomeOptions, kubernetesHome } from './homes.js';
import { buildRuntime, type ModelProxyMode, type PodOptions, type RuntimeKind } from './runtimes.js';
import { DEFAULT_SECRET_NAME as DEFAULT_MIRROR_SECRET } from '../../plugins/credential-mirror/credential-mirror.js';

/** The worker's entry script, which the local runtime runs for each agent. */
const WORKER_MAIN = fileURLToPath(new URL('../agentplane-worker/main.js', import.meta.url));

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  plugins: string[];
  pluginOptions?: Record<string, unknown>;
  /** Start the scripted model and point workers at it (no key needed). */
  demo?: boolean;
  /**
   * The model endpoint and key; default from the environment. Only the server's model proxy
   * holds them: workers get the proxy's URL and a per-agent credential.
   */
  model?: { apiKey?: string; baseUrl?: string };
  /** The model proxy's retries (docs/security.md "Model proxy"); defaults in pkg/modelproxy/retry.ts. */
  modelRetry?: Partial<RetryPolicy>;
  logger?: Logger;
  /** Where worker processes' log lines go; default stdout. */
  workerLogSink?: (line: string) => void;
  /**
   * The local runtime's worker entry script (run with node); default cmd/agentplane-worker.
   * The event benchmark substitutes a worker that only streams events (test/support/firehose-worker.ts).
   */
  workerMain?: string;
  /**
   * The worker control channel's limits where they differ from the defaults (docs/decisions.md
   * "Limits"): for that stand-in worker, which sends events far faster and longer than an engine.
   */
  workerChannelLimits?: Partial<ChannelLimits>;
  /**
   * Allow connector URLs at loopback and private addresses (127/8, ::1, localhost, 10/8,
   * 172.16/12, 192.168/16, fc00::/7); link-local and metadata addresses stay refused. Default false.
   */
  allowPrivateConnectorUrls?: boolean;
  /**
   * The connector controller's checks: how often a Ready connector is checked again and the cap
   * of the backoff of a failing one (docs/connectors.md "Status"); false runs no checks (tests
   * of the API machinery that count watch events).
   */
  connectorChecks?: false | { resyncMs?: number; maxBackoffMs?: number };
  /** How workers and their tools are confined (docs/security.md "Tool sandbox"); default auto. */
  sandbox?: SandboxMode;
  /**
   * Pod templates agents may name in `templateRef`, besides "default" (TemplateExists admission):
   * names, or `{name, modelTaskDeadlineSeconds}` (pkg/api/template-settings.ts). Each name a
   * DNS-1123 name; start-up fails on another or on a bad setting.
   */
  templates?: (string | TemplateConfig)[];
  /**
   * Embedded home: bearer tokens with their scopes (docs/auth.md "Embedded home"). Without it
   * the API is open, so only a loopback `host` is accepted.
   */
  tokenFile?: string;
  /** Embedded home with a token file: OIDC ID tokens too, scoped by the file's grants. */
  oidc?: OidcOptions;
  /** Embedded home with a token file: whether /metrics needs a token too (default true; false leaves it open). */
  metricsAuth?: boolean;
  /**
   * Host names requests may name besides loopback and the bound address (DNS rebinding;
   * pkg/server/browser-guard.ts). In Kubernetes mode the Host check is off unless this is given.
   */
  allowedHosts?: string[];
  /** How often the token file is re-read; default 2 s. */
  tokenFileReloadMs?: number;
  /**
   * The key file (32 random bytes, mode 0600) that encrypts stored secret values. Default
   * <dataDir>/secrets.key, created on first start; a file named here must exist.
   */
  secretsKeyFile?: string;
  /**
   * The audit log (docs/audit.md): mutating requests as audit.k8s.io/v1 Events, one JSON line
   * each, appended to `path` ("-" for stdout). `level` defaults to Metadata; None writes nothing.
   * `policyFile`: an audit.k8s.io/v1 Policy whose rules set the level per request; `level` is
   * the level of a request no rule matches. Read at start-up; a bad file stops it.
   */
  audit?: { path: string; level?: AuditLevel; policyFile?: string };
  /** Kubernetes mode: state in Kubernetes, TLS, delegated auth. Embedded mode when absent. */
  kubernetes?: KubernetesHomeOptions;
  /**
   * Where agents run: `local` worker processes (the embedded home's default) or `kubernetes`
   * pods (the cluster home's default; needs Kubernetes mode). docs/kubernetes-runtime.md.
   */
  runtime?: RuntimeKind;
  /** The Kubernetes runtime's settings: image, install namespace, worker listener, claims. */
  pods?: PodOptions;
  /** Live event sockets one agent may have at once; default DEFAULT_WS_CLIENTS_PER_AGENT (100). */
  wsClientsPerAgent?: number;
  /**
   * Requests per second per user (per client IP without auth); 0 turns it off. Default:
   * DEFAULT_RATE_LIMIT (100) when callers authenticate (token file, Kubernetes), off on the open
   * loopback-only embedded home.
   */
  rateLimit?: number;
  /** The rate limit's burst; default twice the rate. */
  rateLimitBurst?: number;
  /** Events kept per agent, the oldest trimmed; default DEFAULT_EVENTS_PER_AGENT (10 000). */
  eventsPerAgent?: number;
  /**
   * Several replicas of the cluster home: only the holder of a coordination.k8s.io Lease runs
   * the reconcilers and serves workers; every replica serves the APIs
   * (docs/high-availability.md). Absent: this replica always leads.
   */
  leaderElection?: LeaderElectionSettings;
  /** Idle time after which a solo agent's worker and engine exit (ms; 0 never; default 10 min). */
  idleTimeoutMs?: number;
  /**
   * Workers (each with its engine) that run at once in the local runtime; 0 no limit. Default
   * defaultMaxWorkers(): what the machine's memory holds. Pods are placed by the scheduler.
   */
  maxWorkers?: number;
  /**
   * Workers the local runtime keeps started ahead of any agent, for new solo agents to claim
   * (docs/performance.md "Warm pool"); default 0, none. Pods: not yet.
   */
  warmPool?: number;
  /** The public listener's client timeouts; default DEFAULT_HTTP_TIMEOUTS (docs/reliability.md). */
  httpTimeouts?: Partial<HttpTimeouts>;
}

export interface LeaderElectionSettings {
  /** The Lease's name; default "agentplane". */
  name?: string;
  /** The Lease's namespace; default the install namespace. */
  namespace?: string;
  /** This replica's identity; default $POD_NAME, else hostname_pid. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /**
   * Called when this replica lost the Lease while leading (it could not renew in time): its
   * reconcilers have stopped. Default: the server closes. `agentplane serve` exits 1, so that the
   * pod restarts as a candidate, as controller-runtime's managers do.
   */
  onLost?: () => void;
}

export const DEFAULT_LEASE_NAME = 'agentplane';

export interface RunningServer {
  /** Every (method, url) the public app serves, as registered. */
  routes: () => { method: string; url: string }[];
  url: string;
  port: number;
  dataDir: string;
  logger: Logger;
  agents: Registry<Agent>;
  controller: AgentController;
  events: EventLog;
  runtime: AgentRuntime;
  /** The local runtime's diagnostics (tests, benches); absent when agents run as pods. */
  local?: LocalRuntime;
  /** The model proxy: its URL (as workers see it) and its credentials (tests and benches). */
  modelProxy: { url: string; credentials: CredentialRegistry };
  model?: ScriptedModel;
  /** Whether this replica runs the reconcilers now (always true without leader election). */
  isLeader(): boolean;
  close(): Promise<void>;
}

/** A data dir the server cannot write would fail its first write: say so at start instead. */
function checkWritable(dataDir: string): void {
  try {
    accessSync(dataDir, fsConstants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const fix = storageFault(err) === 'StorageReadOnly' ? 'its file system is mounted read-only; remount it read-write' : 'give the server’s user write access to it';
    throw new Error(`the data directory ${dataDir} is not writable (${code}): ${fix}`);
  }
}

export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const templates = templateConfigs(o.templates ?? []);
  const logger = o.logger ?? createLogger();
  // Before anything starts: an open API must not be reachable from elsewhere.
  if (!o.kubernetes && !o.tokenFile && !isLoopbackHost(o.host)) throw new Error(openBindRefusal(o.host));
  if (o.oidc && !o.tokenFile) throw new Error('OIDC needs a token file: its "grants" say what OIDC users and groups may do (docs/auth.md "OIDC")');
  const auditDefault = o.audit?.level ?? 'Metadata';
  const auditPolicy = o.audit?.policyFile ? loadAuditPolicy(o.audit.policyFile, auditDefault) : levelPolicy(o.audit ? auditDefault : 'None');
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  checkWritable(dataDir);
  // Only the server's user may read its state, also in a directory an older version made 0755.
  try {
    chmodSync(dataDir, 0o700);
  } catch (err) {
    logger.warn({ dataDir, err: (err as Error).message }, 'cannot make the data directory private (mode 0700); other users of this host may read it');
  }
  const manager = new Manager(componentLogger(logger, 'manager'));
  const child = (component: string): Logger => componentLogger(logger, component);

  try {
    // First, so that --sandbox bwrap without a usable bubblewrap stops before anything starts.
    // Agents in pods have the pod for a sandbox: only local workers need bubblewrap.
    const runtimeKind: RuntimeKind = o.runtime ?? (o.kubernetes ? 'kubernetes' : 'local');
    const sandbox = runtimeKind === 'local' ? resolveSandbox(o.sandbox ?? 'auto', dataDir, child('runtime')) : NO_SANDBOX;
    const metrics = new Metrics({ defaultMetrics: true });
    const hooks = new Hooks();
    const embedded = {
      ...(o.tokenFile ? { tokenFile: o.tokenFile } : {}),
      ...(o.oidc ? { oidc: o.oidc } : {}),
      ...(o.metricsAuth !== undefined ? { metricsAuth: o.metricsAuth } : {}),
      ...(o.tokenFileReloadMs !== undefined ? { tokenFileReloadMs: o.tokenFileReloadMs } : {}),
    };
    // The key of the stored secrets: a missing (named), exposed or wrong-sized key file stops start-up.
    const secretsKey = o.secretsKeyFile
      ? loadSecretsKey(resolve(o.secretsKeyFile))
      : loadSecretsKey(join(dataDir, 'secrets.key'), { createIfAbsent: true });
    const home = o.kubernetes
      ? await kubernetesHome(o.kubernetes, dataDir, secretsKey, logger)
      : await embeddedHome(dataDir, secretsKey, embedded, logger);
    manager.onStop('home', () => home.close());

    // Storage: one admission chain for every registry (the rules across objects, for every
    // writer), and shared informers that controllers and admission read.
    // kube-controller-manager's garbage collector serves the cluster home only (propagationPolicy).
    const admission = new AdmissionChain();
    // Each store notes the newest write it acknowledged: consistent reads from the caches wait for it.
    const stores = {
      agents: new WatermarkedStore(home.state.store<Agent>('Agent')),
      squads: new WatermarkedStore(home.state.store<Squad>('Squad')),
      connectors: new WatermarkedStore(home.state.store<Connector>('Connector')),
    };
    const regOpts = { garbageCollector: !!o.kubernetes };
    const agents = new Registry<Agent>(stores.agents, agentStrategy, admission, regOpts);
    const squads = new Registry<Squad>(stores.squads, squadStrategy, admission, regOpts);
    const connectorRegistry = new Registry<Connector>(stores.connectors, connectorStrategy, admission, regOpts);
    const informers = {
      agents: new Informer(agents, child('informer')),
      squads: new Informer(squads, child('informer')),
      connectors: new Informer(connectorRegistry, child('informer')),
    };
    // What the APIs' get, list and Table requests read (docs/aggregated-api.md "Reads"). With
    // several replicas (leader election) the others write too: consistent reads go to storage.
    const readOpts = (kind: string, written: () => number) => ({ written, otherWriters: !!o.leaderElection, onRead: (source: string) => metrics.apiReads.inc({ kind, source }) });
    const reads = {
      agents: new ReadCache(informers.agents, agents, readOpts('Agent', () => stores.agents.written())),
      squads: new ReadCache(informers.squads, squads, readOpts('Squad', () => stores.squads.written())),
      connectors: new ReadCache(informers.connectors, connectorRegistry, readOpts('Connector', () => stores.connectors.written())),
    };
    indexMembership(informers.agents, informers.squads);
    manager.add({
      name: 'informers',
      start: async () => void (await Promise.all(Object.values(informers).map((i) => i.start()))),
      stop: () => Object.values(informers).forEach((i) => i.stop()),
    });

    // Where agents run. Workers dial the control channel once its listener is bound (below).
    const model = o.demo ? await startScriptedModel({ apiKey: 'agentplane-demo' }) : undefined;
    if (model) {
      manager.onStop('scripted model', () => model.close());
      logger.info({ modelUrl: model.url }, 'demo mode: agents use the scripted model');
    }
    const modelEnv = model
      ? { apiKey: 'agentplane-demo', baseUrl: model.url }
      : (o.model ?? { apiKey: process.env.ANTHROPIC_API_KEY, baseUrl: process.env.ANTHROPIC_BASE_URL });
    if (!modelEnv.apiKey) logger.warn('ANTHROPIC_API_KEY is not set: tasks will fail to reach the model (use --demo to try without a key)');
    const channel = new ChannelEndpoint();
    // The model key stays here: workers reach the model through the proxy (mounted with the
    // worker channel below) with a per-agent credential the runtime issues and revokes.
    const modelCredentials = new CredentialRegistry();
    // A task's retry deadline is its template's when the template sets one (the runtime knows templates).
    const usageMeter = new UsageMeter(metrics, { deadlineMs: (template) => built.modelTaskDeadlineMs(template) });
    // Set once the agent controller exists: the proxy reports retries and failures into tasks.
    let proxyEvents: Pick<AgentController, 'taskEvent' | 'failTask'> | undefined;
    const proxyEventSink: ModelProxyEvents = {
      retry: (g, payload) => void proxyEvents?.taskEvent(g.ref, g.uid, { type: 'model_retry', payload }).catch(() => undefined),
      // Awaited by the proxy before the engine sees the failure, so the task ends with this reason.
      failed: async (g, error) => {
        await proxyEvents?.failTask(g.ref, g.uid, error).catch(() => undefined);
      },
    };
    const modelProxy = new ModelProxy({
      ...(modelEnv.baseUrl ? { upstream: modelEnv.baseUrl } : {}),
      ...(modelEnv.apiKey ? { apiKey: modelEnv.apiKey } : {}),
      credentials: modelCredentials,
      meter: usageMeter,
      logger: child('model-proxy'),
      ...(o.modelRetry ? { retry: o.modelRetry } : {}),
      onRetry: (status) => metrics.modelRetries.inc({ status: String(status) }),
      events: proxyEventSink,
    });
    manager.onStop('model proxy', () => modelProxy.close());
    // Pods: their own proxy (a sidecar holding the mirrored key) wherever the mirror puts the key
    // in their namespace; the demo's scripted model lives in the server, so the server's proxy.
    const mirror = o.plugins.includes('credential-mirror');
    const modelProxyMode: ModelProxyMode = o.pods?.modelProxy ?? (mirror && !o.demo ? 'sidecar' : 'server');
    if (runtimeKind === 'kubernetes') {
      logger.info({ modelProxy: modelProxyMode }, modelProxyMode === 'sidecar' ? 'pods reach the model through their own proxy sidecar' : "pods reach the model through the server's proxy");
      if (modelProxyMode === 'sidecar' && !mirror) logger.warn('--model-proxy sidecar without the credential-mirror plugin: pods wait until each namespace has the model Secret');
    }
    const mirrorOptions = (o.pluginOptions?.['credential-mirror'] ?? {}) as { secretName?: unknown };
    // Sandboxed local workers get a network of their own; this socket is their one way to the server.
    const workerSocket = runtimeKind === 'local' && sandbox.kind === 'bwrap' ? join(dataDir, 'run', 'workers.sock') : undefined;
    const built = buildRuntime({
      kind: runtimeKind,
      logger: child('runtime'),
      model: {
        baseUrl: () => `${channel.url}${MODEL_PROXY_PATH}`,
        issue: (ref, uid) => modelCredentials.issue(ref, uid),
        issueReport: (ref) => modelCredentials.issueReport(ref),
        restore: (ref, uid, credential, report) => modelCredentials.adopt(ref, uid, credential, report),
        rebind: (from, to, uid) => modelCredentials.rebind(from, to, uid),
        revoke: (ref) => {
          modelCredentials.revoke(ref);
          usageMeter.forget(ref);
        },
      },
      channelUrl: () => channel.url,
      templates,
      local: {
        dataDir,
        sandbox,
        ...(workerSocket ? { workerSocket } : {}),
        workerMain: o.workerMain ?? WORKER_MAIN,
        ...(o.workerChannelLimits ? { channelLimits: o.workerChannelLimits } : {}),
        ...(o.workerLogSink ? { logSink: o.workerLogSink } : {}),
        warmPool: o.warmPool ?? 0,
      },
      warmPoolMetrics: { ready: (n) => metrics.warmPoolSlots.set(n), claim: (result) => metrics.warmPoolClaims.inc({ result }) },
      ...(home.cluster ? { cluster: home.cluster } : {}),
      pods: { ...o.pods, modelProxy: modelProxyMode },
      modelSidecar: {
        secretName: typeof mirrorOptions.secretName === 'string' ? mirrorOptions.secretName : DEFAULT_MIRROR_SECRET,
        // The server's own endpoint, when the mirrored Secret names none (not the demo's loopback model).
        ...(!o.demo && modelEnv.baseUrl ? { upstream: modelEnv.baseUrl } : {}),
        ...(o.modelRetry ? { retry: JSON.stringify(o.modelRetry) } : {}),
      },
    });
    const { runtime } = built;
    manager.onStop('runtime', () => built.stop());

    // Plugins: the event store, sleep and wake, third-party modules. Their controllers and start
    // steps run once the service is serving.
    const eventStores: EventStore[] = [];
    const pluginControllers: Controller[] = [];
    const pluginStarts: (() => Promise<void> | void)[] = [];
    const ctx: PluginContext = {
      config: { dataDir, options: o.pluginOptions ?? {}, eventsPerAgent: o.eventsPerAgent ?? DEFAULT_EVENTS_PER_AGENT },
      ...(home.cluster ? { cluster: home.cluster } : {}),
      logger: child('plugin'),
      metrics,
      registry: { agents },
      informers: { agents: informers.agents },
      controller: (spec) => {
        const c = new Controller({ ...spec, logger: child('plugin') });
        pluginControllers.push(c);
        return c;
      },
      admission: { register: (p) => void admission.register(p) },
      operations: {
        cancel: (ns, name, reason) => cancelRunningTask(agents, ns, name, reason),
        delete: async (ns, name) => void (await agents.delete(ns, name)),
      },
      onStart: (fn) => void pluginStarts.push(fn),
      provideEventStore: (store) => {
        if (eventStores.length) throw new Error('an event store is already provided by another plugin');
        eventStores.push(store);
      },
    };
    const plugins = await loadPlugins(o.plugins, ctx, BUILTIN_PLUGINS, CORE_NEEDS);
    manager.onStop('plugins', () => plugins.teardown());
    const [eventStore] = eventStores;
    if (!eventStore) throw new Error(`no plugin provides an event store; add "event-store-sqlite" to --plugins`);
    const events = new EventLog(eventStore);
    events.onAppend((ev) => metrics.eventsAppended.inc({ type: ev.type }));

    // Connectors and their secrets: the hook attaches an agent's connectors at dispatch (token
    // read from the secret then); admission keeps the cross-object rules.
    const secretStore = home.secrets;
    const secrets = new SecretService(secretStore, child('secrets'));
    // The connector controller owns connector status (checks of connectors from every API).
    const access = new ConnectorAccess({ secrets: secretStore, allowPrivateUrls: o.allowPrivateConnectorUrls === true });
    const checker = new ConnectorChecker(connectorRegistry, access, child('connectors'));
    const connectorChecks = o.connectorChecks === false ? undefined : (o.connectorChecks ?? {});
    const connectorController = connectorChecks
      ? new ConnectorController({ informer: informers.connectors, checker, logger: child('connector-controller'), ...connectorChecks })
      : undefined;
    const connectors = new ConnectorService({
      connectors: connectorRegistry,
      agents,
      checker,
      ...(connectorController ? { recheck: (ref) => connectorController.recheck(ref) } : {}),
      logger: child('connectors'),
      reads: reads.connectors,
    });
    secrets.onChange((ns, name) => connectorController?.secretChanged(ns, name));
    hooks.mcpServers.push((agent) => connectors.mcpServersFor(agent));
    hooks.agentDeleted.push((agent) => usageMeter.dropSeries(agent.metadata));
    const egress = { allowPrivate: o.allowPrivateConnectorUrls === true };
    admission.register(
      // First: a squad's embedded agents are checked before any member is claimed.
      templateExists(built.templateNames),
      connectorsExist(readThrough(informers.connectors, connectorRegistry)),
      connectorInUse(storageReader(agents)),
      squadMembership(agents, readThrough(informers.connectors, connectorRegistry)),
      connectorSecretBinding({ secrets: secretStore, egressRefusal: (url) => urlEgressRefusal(url, egress), logger: child('admission') }),
    );

    // Controllers.
    const agentController = new AgentController({
      agents,
      informers,
      events,
      runtime,
      hooks,
      metrics,
      logger: child('agent-controller'),
      taskUsage: usageMeter,
      ...(o.idleTimeoutMs !== undefined ? { idleTimeoutMs: o.idleTimeoutMs } : {}),
      ...(runtimeKind === 'local' ? { maxWorkers: o.maxWorkers ?? defaultMaxWorkers() } : {}),
    });
    proxyEvents = agentController;
    const squadController = new SquadController({
      squads,
      agents,
      informers,
      cancel: (ns, name, reason) => cancelRunningTask(agents, ns, name, reason),
      logger: child('squad-controller'),
    });
    metrics.collectAgentsBy(async () => {
      const counts: Record<string, number> = { Pending: 0, Running: 0, Sleeping: 0, Failed: 0 };
      for (const a of informers.agents.list()) counts[a.status.status] = (counts[a.status.status] ?? 0) + 1;
      return counts;
    });

    // HTTP: the REST mirror, the aggregated API, and the worker control channel (on the public
    // server in the embedded home; on its own loopback listener when the public port is TLS).
    // With leader election the worker listener and runtime are the leader's (below).
    let leadingNow = !o.leaderElection;
    const service = new AgentService(agents, events, undefined, reads.agents);
    const browserGuard = { checkHost: !o.kubernetes || !!o.allowedHosts?.length, allowedHosts: o.allowedHosts ?? [], bindHost: o.host };
    const app = await createApp({ logger, metrics, browserGuard, ...(home.tls ? { tls: home.tls } : {}), ...(o.httpTimeouts ? { timeouts: o.httpTimeouts } : {}) });
    if (o.audit && writesAnything(auditPolicy)) {
      // Before the auth filter, so that refusals are audited too; stopped after the HTTP server
      // (added to the manager before it), so the last responses' lines are flushed.
      const sink = openAuditSink(o.audit.path, child('audit'));
      manager.onStop('audit log', () => sink.close());
      installAuditLog(app, { policy: auditPolicy, sink });
    }
    if (home.auth) {
      // Before any route: hooks added later would not reach route plugins registered earlier.
      installAuthFilter(app, { ...home.auth, agentExists: async (ns, name) => !!(await agents.get(ns, name)) });
    }
    // After the auth filter (the bucket is the user's), before any route.
    const rate = o.rateLimit ?? (home.auth ? DEFAULT_RATE_LIMIT : 0);
    installRateLimit(app, {
      requestsPerSecond: rate,
      ...(o.rateLimitBurst !== undefined ? { burst: o.rateLimitBurst } : {}),
      exemptPaths: [...ALWAYS_ALLOW_PATHS, ...BYPASS_PATHS],
    });
    // Not ready until the caches have listed, nor while the event store cannot be reached.
    const readiness: ReadinessCheck[] = [
      {
        name: 'informers',
        check: async () => {
          const waiting = Object.entries(informers).filter(([, i]) => !i.hasSynced()).map(([n]) => n);
          if (waiting.length) throw new Error(`caches not synced yet: ${waiting.join(', ')}`);
        },
      },
      { name: 'event store', check: () => events.ping() },
    ];
    await app.register(systemRoutes(metrics, readiness));
    await app.register(agentRoutes(service));
    const compaction = new AgentCompaction(agents);
    const costs = new AgentCosts(agents, events);
    await app.register(agentOpRoutes(compaction, costs));
    await app.register(agentStreamRoutes(service, events, metrics, o.wsClientsPerAgent !== undefined ? { maxClientsPerAgent: o.wsClientsPerAgent } : {}));
    const local = built.local;
    await app.register(
      agentFileRoutes(
        service,
        local
          ? { read: (ref, path) => readWorkspacePath(local.workspace(ref), path), download: (ref, path) => openWorkspaceFile(local.workspace(ref), path) }
          : undefined,
      ),
    );
    await app.register(uiRoutes());
    await app.register(squadRoutes(new SquadService(squads, agents, reads.squads)));
    await app.register(connectorRoutes(connectors));
    await app.register(secretRoutes(secrets));
    await app.register(aggregatedApiRoutes({ agents, squads, connectors: connectorRegistry, agentService: service, compaction, costs, events, reads }));
    const workers = home.separateWorkerListener || built.listen ? await createApp({ logger: logger.child({ listener: 'workers' }), metrics }) : app;
    // With leader election, the worker listener serves the leader's workers only.
    if (o.leaderElection) {
      if (workers === app) throw new Error('leader election needs the cluster home (--mode kubernetes)');
      installLeaderOnly(workers, () => leadingNow);
    }
    runtime.channel.on('resumed', () => metrics.workerReconnects.inc());
    // Engines reach connectors only through the gateway, which holds the secrets (docs/connectors.md).
    const gateway = new ConnectorGateway({
      credentials: modelCredentials,
      target: (grant, ns, name) => connectors.gatewayTarget(grant, ns, name),
      egress: access.egress,
      logger: child('connector-gateway'),
    });
    manager.onStop('connector gateway', () => gateway.close());
    // What workers call: the control channel, the model proxy, the connector gateway, pods' sidecar reports.
    // Pods' sidecars report what their requests told them, as the server's proxy would have seen it;
    // without sidecars the server's proxy meters every request and reports are refused.
    const sidecars = runtimeKind === 'kubernetes' && modelProxyMode === 'sidecar';
    const modelReports = sidecars
      ? new ModelReports({ credentials: modelCredentials, meter: usageMeter, events: proxyEventSink, taskDeadlineMs: modelProxy.policy.taskDeadlineMs, onRetry: (status) => metrics.modelRetries.inc({ status: String(status) }) })
      : undefined;
    const workerRoutes = async (target: typeof app): Promise<void> => {
      await target.register(workerChannelRoutes(runtime.channel));
      await target.register(modelProxyRoutes(modelProxy));
      await target.register(connectorGatewayRoutes(gateway));
      await target.register(modelReportRoutes(modelReports));
    };
    await workerRoutes(workers);
    // Sandboxed workers' socket: only the worker-facing routes, so a tool that reaches it reaches no API.
    const socketApp = workerSocket ? await createApp({ logger: logger.child({ listener: 'worker-socket' }), metrics }) : undefined;
    if (socketApp && workerSocket) {
      await workerRoutes(socketApp);
      manager.add({
        name: 'worker socket',
        start: async () => {
          mkdirSync(dirname(workerSocket), { recursive: true, mode: 0o700 });
          rmSync(workerSocket, { force: true }); // an earlier run's
          await socketApp.listen({ path: workerSocket });
          // As root the sandbox's user (nobody) must connect; the directory keeps the host's other users out.
          chmodSync(workerSocket, process.getuid?.() === 0 ? 0o666 : 0o600);
        },
        stop: () => socketApp.close(),
      });
    }
    if (!o.kubernetes) {
      // The tools' egress proxy, on the listeners local workers reach (docs/security.md "Tool
      // egress"): an agent's rule is its template's; an agent that no longer exists gets None.
      const egressProxy = new EgressProxy({
        credentials: modelCredentials,
        ruleFor: (grant) => {
          const a = informers.agents.get(grant.ref.namespace, grant.ref.name);
          if (!a || a.metadata.uid !== grant.uid) return { mode: 'None' };
          const t = templates.find((x) => x.name === a.spec.templateRef);
          return { mode: t?.egress ?? 'Open', ...(t?.egressAllow ? { allow: t.egressAllow } : {}) };
        },
        self: () => [app, workers].map((x) => x.server.address()).filter((a): a is AddressInfo => typeof a === 'object' && a !== null),
        logger: child('egress-proxy'),
      });
      attachEgressProxy(workers.server, egressProxy);
      if (socketApp) attachEgressProxy(socketApp.server, egressProxy);
    }
    if (workers !== app) {
      // Local workers: a loopback port of its own. Pods: where they can reach it (the workers'
      // Service), plain HTTP with per-agent credentials (docs/kubernetes-runtime.md "Network").
      const listen = built.listen ?? { host: '127.0.0.1', port: 0 };
      manager.add({
        name: 'worker listener',
        start: async () => {
          await workers.listen(listen);
          channel.bind(built.workerUrl(`http://${loopbackFor(listen.host)}:${portOf(workers, listen.port)}`));
        },
        stop: () => workers.close(),
      });
    }
    manager.add({
      name: 'http',
      start: async () => {
        await app.listen({ host: o.host, port: o.port });
        if (workers === app) channel.bind(`http://${loopbackFor(o.host)}:${portOf(app, o.port)}`);
      },
      stop: () => app.close(),
    });
    manager.add({ name: 'runtime', start: () => built.start() });
    // What only the leader runs: with leader election a manager of its own, started when this
    // replica takes the Lease; without, part of the service.
    const leader = o.leaderElection ? new Manager(child('leader')) : manager;
    // The runtime's watches and stored credentials, before any reconcile asks it for a worker.
    leader.add({ name: 'runtime (leader)', start: () => built.lead() });
    leader.add({ name: 'agent controller', start: () => agentController.start(), stop: () => agentController.stop() });
    leader.add({ name: 'squad controller', start: () => squadController.controller.start(), stop: () => squadController.controller.stop() });
    if (connectorController) leader.add({ name: 'connector controller', start: () => connectorController.start(), stop: () => connectorController.stop() });
    leader.add({
      name: 'plugin controllers',
      start: async () => void (await Promise.all(pluginControllers.map((c) => c.start()))),
      stop: () => pluginControllers.forEach((c) => c.stop()),
    });
    for (const fn of pluginStarts) leader.add({ name: 'plugin start', start: fn });
    if (o.leaderElection) {
      if (!home.cluster) throw new Error('leader election needs the cluster home (--mode kubernetes)');
      const le = o.leaderElection;
      let closing = false;
      const lost = (): void => {
        if (closing) return;
        closing = true;
        void leader.stop().then(() => (le.onLost ? le.onLost() : void manager.stop()));
      };
      const elector = new LeaderElector({
        kubeConfig: home.cluster.kubeConfig,
        namespace: le.namespace ?? home.cluster.installNamespace,
        name: le.name ?? DEFAULT_LEASE_NAME,
        identity: le.identity ?? candidateIdentity(hostname()),
        ...(le.leaseDurationMs !== undefined ? { leaseDurationMs: le.leaseDurationMs } : {}),
        ...(le.renewDeadlineMs !== undefined ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
        ...(le.retryPeriodMs !== undefined ? { retryPeriodMs: le.retryPeriodMs } : {}),
        logger: child('leader-election'),
        onNewLeader: () => metrics.leaderTransitions.inc(),
        onStartedLeading: () => {
          // Reconcilers start from the informer caches, which every replica keeps current.
          leader.start().then(
            () => {
              leadingNow = true;
              metrics.isLeader.set(1);
            },
            (err: unknown) => {
              logger.error({ err: err instanceof Error ? err.message : String(err) }, 'could not start leading');
              lost();
            },
          );
        },
        onStoppedLeading: () => {
          leadingNow = false;
          metrics.isLeader.set(0);
          lost();
        },
      });
      metrics.isLeader.set(0);
      manager.add({
        name: 'leader election',
        start: () => elector.start(),
        // The reconcilers stop before the Lease is released, so two leaders never overlap.
        stop: async () => {
          closing = true;
          leadingNow = false;
          await leader.stop();
          await elector.stop();
        },
      });
    } else {
      metrics.isLeader.set(1);
    }
    await manager.start();

    const port = portOf(app, o.port);
    const url = `${home.tls ? 'https' : 'http'}://${displayHost(o.host)}:${port}`;
    logger.info({ url, home: home.name, dataDir, plugins: plugins.names }, 'agentplane is serving');
    return { routes: () => routesOf(app), url, port, dataDir, logger, agents, controller: agentController, events, runtime,
      ...(built.local ? { local: built.local } : {}),
      modelProxy: { url: `${channel.url}${MODEL_PROXY_PATH}`, credentials: modelCredentials },
      model, isLeader: () => leadingNow, close: () => manager.stop() };
  } catch (err) {
    await manager.stop();
    throw err;
  }
}

/** Why an embedded server without a token file will not bind `host`, and what to do. */
export function openBindRefusal(host: string): string {
  return (
    `refusing to listen on ${host} without authentication: only a loopback address (127.0.0.1, ::1, localhost) may be served without it. ` +
    'Give a token file with --token-file <file> (environment AGENTPLANE_TOKEN_FILE, config key "tokenFile"; format in docs/auth.md), ' +
    'or bind to 127.0.0.1'
  );
}

/** Where local workers dial the control channel: known once its listener is bound. */
class ChannelEndpoint {
  private bound?: string;

  bind(url: string): void {
    this.bound = url;
  }

  get url(): string {
    if (!this.bound) throw new Error('the worker control channel is not listening yet');
    return this.bound;
  }
}

function portOf(app: { server: { address(): unknown } }, fallback: number): number {
  const addr = app.server.address() as { port?: number } | string | null;
  return typeof addr === 'object' && addr?.port ? addr.port : fallback;
}

/** Where local workers dial: loopback for wildcard and loopback binds, else the bound address. */
function loopbackFor(host: string): string {
  if (host === '0.0.0.0' || host === 'localhost' || host.startsWith('127.')) return '127.0.0.1';
  if (host === '::' || host === '::1') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return loopbackFor(host);
  return host.includes(':') ? `[${host}]` : host;
}
