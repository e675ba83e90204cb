// JSON schemas for kubeconform, generated from the local kube-apiserver's OpenAPI (v2) instead of
// downloaded from GitHub: every kind it serves (Kubernetes 1.34, the APIService of its
// aggregator) plus the Prometheus Operator's ServiceMonitor and PrometheusRule, whose CRDs (from
// the Go module pinned in hack/tools/prometheus-operator-crds) are applied first so that their
// published schemas are the real ones. Strict, as kubeconform's "-strict" schemas are: objects
// with properties allow no others. Cached under ~/.cache/agentplane/kube-schemas, keyed by the
// Kubernetes and Prometheus Operator versions and this file.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { type ControlPlane, controlPlaneUp, REPO } from './control-plane.js';
import { eventually } from './harness.js';

const run = promisify(execFile);
type Schema = Record<string, unknown>;
interface Gvk {
  group: string;
  version: string;
  kind: string;
}

const PROMOP_MODULE = 'github.com/prometheus-operator/prometheus-operator';
const PROMOP_CRDS = ['monitoring.coreos.com_servicemonitors.yaml', 'monitoring.coreos.com_prometheusrules.yaml'];

/** The version a wrapper go.mod requires of a module. */
export function requiredVersion(goMod: string, module: string): string {
  const m = readFileSync(join(REPO, goMod), 'utf8').match(new RegExp(`^\\s*(?:require\\s+)?${module.replace(/\./g, '\\.')}\\s+(v\\S+)`, 'm'));
  if (!m) throw new Error(`${goMod} requires no ${module}`);
  return m[1];
}

/** The directory of generated schemas (a kubeconform -schema-location is `<dir>/{{ .ResourceKind }}{{ .KindSuffix }}.json`). */
export async function kubeSchemas(): Promise<string> {
  const k8s = requiredVersion('hack/tools/go.mod', 'k8s.io/kubernetes');
  const promop = requiredVersion('hack/tools/prometheus-operator-crds/go.mod', PROMOP_MODULE);
  const self = readFileSync(fileURLToPath(import.meta.url));
  const key = createHash('sha256').update(self).digest('hex').slice(0, 12);
  const root = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agentplane', 'kube-schemas');
  const dir = join(root, `${k8s}-${promop}-${key}`);
  if (existsSync(join(dir, '.complete'))) return dir;

  const crdDir = await promopCrdDir(promop);
  const cp = await controlPlaneUp({ node: false });
  let openapi: { definitions: Record<string, Schema> };
  try {
    for (const f of PROMOP_CRDS) await cp.kubectl(['create', '-f', join(crdDir, f)]);
    openapi = await publishedOpenapi(cp);
  } finally {
    await cp.down();
  }
  // Written beside the final place and renamed, so a half-written set is never a cache hit.
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  for (const [name, file] of generate(openapi.definitions)) writeFileSync(join(tmp, name), JSON.stringify(file));
  writeFileSync(join(tmp, '.complete'), `${k8s} ${promop}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

/** The module's CRD directory, downloaded with the go hack/go.sh picks. */
async function promopCrdDir(version: string): Promise<string> {
  const goBin = (await run('bash', [join(REPO, 'hack/go.sh')])).stdout.trim().split('\n').at(-1)!;
  const dl = await run(join(goBin, 'go'), ['mod', 'download', '-json', `${PROMOP_MODULE}@${version}`], {
    cwd: join(REPO, 'hack/tools/prometheus-operator-crds'),
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
    maxBuffer: 1 << 20,
  });
  return join((JSON.parse(dl.stdout) as { Dir: string }).Dir, 'example/prometheus-operator-crd');
}

/** /openapi/v2 once it publishes the Prometheus Operator kinds (a CRD's schema appears a moment after it is established). */
async function publishedOpenapi(cp: ControlPlane): Promise<{ definitions: Record<string, Schema> }> {
  return eventually(
    async () => {
      const raw = (await cp.kubectl(['get', '--raw', '/openapi/v2'])).stdout;
      const doc = JSON.parse(raw) as { definitions: Record<string, Schema> };
      const kinds = Object.values(doc.definitions).flatMap((d) => (d['x-kubernetes-group-version-kind'] as Gvk[] | undefined) ?? []);
      const have = (kind: string) => kinds.some((k) => k.group === 'monitoring.coreos.com' && k.kind === kind);
      return have('ServiceMonitor') && have('PrometheusRule') ? doc : undefined;
    },
    60_000,
    'the Prometheus Operator kinds in /openapi/v2',
  );
}

/** File name -> standalone schema, one per group/version/kind of the definitions. */
export function generate(definitions: Record<string, Schema>): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const [name, def] of Object.entries(definitions)) {
    for (const gvk of (def['x-kubernetes-group-version-kind'] as Gvk[] | undefined) ?? []) {
      const defs: Record<string, Schema> = {};
      collectRefs(def, definitions, defs);
      delete defs[name];
      out.set(fileName(gvk), { ...strict(def), definitions: Object.fromEntries(Object.entries(defs).map(([n, d]) => [n, strictDefinition(n, d)])) });
    }
  }
  return out;
}

/** kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}: deployment-apps-v1, service-v1, apiservice-apiregistration-v1. */
function fileName({ group, version, kind }: Gvk): string {
  return `${kind.toLowerCase()}-${group ? `${group.split('.')[0].toLowerCase()}-` : ''}${version.toLowerCase()}.json`;
}

/** Every definition `schema` reaches through $ref, into `into`. */
function collectRefs(schema: unknown, all: Record<string, Schema>, into: Record<string, Schema>): void {
  if (Array.isArray(schema)) return schema.forEach((s) => collectRefs(s, all, into));
  if (!schema || typeof schema !== 'object') return;
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$ref' && typeof v === 'string') {
      const name = v.replace('#/definitions/', '');
      if (!into[name] && all[name]) {
        into[name] = all[name];
        collectRefs(all[name], all, into);
      }
    } else collectRefs(v, all, into);
  }
}

/**
 * The schema as kubeconform's strict schemas have it: no unknown properties where properties are
 * listed (unless the schema preserves unknown fields), and the string-or-number types that OpenAPI
 * v2 writes as formats (IntOrString, Quantity) accepting both, as openapi2jsonschema does.
 */
function strict(schema: unknown): Schema {
  const walk = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(walk);
    if (!s || typeof s !== 'object') return s;
    const o = s as Schema;
    if (o.format === 'int-or-string') return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    const copy: Schema = Object.fromEntries(Object.entries(o).map(([k, v]) => [k, k === 'properties' ? mapValues(v as Schema, walk) : walk(v)]));
    if (copy.properties && copy.additionalProperties === undefined && !copy['x-kubernetes-preserve-unknown-fields']) copy.additionalProperties = false;
    return copy;
  };
  return walk(schema) as Schema;
}

/** A quantity ("1Gi", "100m") is a string in OpenAPI v2, and may be written as a number in YAML too. */
const strictDefinition = (name: string, d: Schema): Schema =>
  name === 'io.k8s.apimachinery.pkg.api.resource.Quantity' ? { oneOf: [{ type: 'string' }, { type: 'number' }] } : strict(d);

function mapValues(o: Schema, f: (v: unknown) => unknown): Schema {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}
