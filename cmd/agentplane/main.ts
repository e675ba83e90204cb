#!/usr/bin/env node
// agentplane: the CLI. `agentplane serve` runs the service (embedded home by default); every other
// command is a client of a running server (pkg/cli). The service's heavy modules are imported only
// by `serve`, so client commands and shell completion start fast.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type TemplateConfig, templateConfigs } from '../../pkg/api/template-settings.js';
import { DEFAULT_CLUSTER_PLUGINS, DEFAULT_PLUGINS, PluginError } from '../../pkg/plugin/loader.js';
import { SANDBOX_MODES, type SandboxMode } from '../../pkg/runtime/local/sandbox.js';
import { AUDIT_LEVELS, type AuditLevel, isAuditLevel } from '../../pkg/server/audit/index.js';
import type { OidcOptions } from '../../pkg/server/auth/oidc.js';
import type { ModelProxyMode, PodOptions, RuntimeKind } from './runtimes.js';
import type { ServeOptions } from './serve.js';

const SERVE_HELP = `Usage: agentplane serve [flags]

Runs the agentplane service. Embedded mode (default): the REST API at /api/v1 and the
aggregated API at /apis/agentplane.io, agents as local worker processes, state in SQLite
under the data directory. Kubernetes mode: the same APIs over TLS (HTTP/2 and HTTP/1.1),
served behind kube-apiserver as an APIService, state in Kubernetes, delegated authn/authz.

Flags (each can also be set by the environment variable shown):
  --mode <mode>        embedded or kubernetes (AGENTPLANE_MODE, default embedded)
  --host <addr>        address to bind (AGENTPLANE_HOST, default 127.0.0.1: loopback only).
                       Embedded mode refuses any address but loopback (127.0.0.0/8, ::1,
                       localhost) unless --token-file is given
  --token-file <file>  bearer tokens, each with a user, namespaces and verbs, stored as
                       sha256 hashes (YAML or JSON; docs/auth.md "Embedded home");
                       re-read when it changes (AGENTPLANE_TOKEN_FILE; config "tokenFile").
                       With it every request needs a token, except /healthz, /readyz
                       and /livez (and /metrics with --no-metrics-auth)
  --oidc-issuer-url <https url>
                       also accept OIDC ID tokens from this issuer (keys from its discovery
                       document and JWKS); their users and groups get the token file's
                       "grants" (needs --token-file; docs/auth.md "OIDC"). With it:
                       --oidc-client-id <id> (required: the tokens' audience),
                       --oidc-username-claim <claim> (default sub), --oidc-username-prefix
                       <p> (default "<issuer>#" unless the claim is email; "-" for none),
                       --oidc-groups-claim <claim>, --oidc-groups-prefix <p>,
                       --oidc-ca-file <pem> (the CAs of the issuer's certificate).
                       AGENTPLANE_OIDC_ISSUER_URL, AGENTPLANE_OIDC_CLIENT_ID, ...;
                       config "oidc": {"issuerUrl", "clientId", "usernameClaim", ...}
  --metrics-auth       /metrics needs a token too: the default with --token-file (its series
                       name namespaces and agents); --no-metrics-auth leaves it open
                       (AGENTPLANE_METRICS_AUTH=true|false; config "metricsAuth")
  --allowed-hosts <a,b>
                       host names requests may be sent to besides loopback (127.0.0.0/8,
                       [::1], localhost) and the --host address; ".example.com" allows it and
                       every name under it. Any other Host is refused (421) against DNS
                       rebinding; with --host 0.0.0.0 or :: any IP address is allowed too.
                       Kubernetes mode checks the Host only when this is given
                       (AGENTPLANE_ALLOWED_HOSTS; config "allowedHosts": ["a", "b"])
  --audit-log <file>   append an audit log: every mutating request (who, verb, resource,
                       namespace, name, result, time) as one audit.k8s.io/v1 Event JSON line;
                       "-" for stdout (AGENTPLANE_AUDIT_LOG; config "auditLog"; docs/audit.md)
  --audit-level <lvl>  None, Metadata or Request (AGENTPLANE_AUDIT_LEVEL; config "auditLevel";
                       default Metadata with --audit-log). Request adds the request body;
                       secret values are never written at any level
  --audit-policy-file <file>
                       an audit.k8s.io/v1 Policy (YAML or JSON) as kube-apiserver reads: its
                       rules, first match wins, set the level by user, group, verb, resource,
                       namespace or path; --audit-level is the level when none matches. Read
                       at start-up; a bad file stops it (AGENTPLANE_AUDIT_POLICY_FILE; config
                       "auditPolicyFile"; needs --audit-log; docs/audit.md "Policy file")
  --port <n>           port to listen on, 0 for any free port (AGENTPLANE_PORT, default 8080)
  --data-dir <dir>     where state, events and agent workspaces live
                       (AGENTPLANE_DATA_DIR, default ./.agentplane)
  --secrets-key-file <file>
                       the key that encrypts stored secret values (AES-256-GCM): exactly 32
                       random bytes, mode 0600 (AGENTPLANE_SECRETS_KEY_FILE; config
                       "secretsKeyFile"). Default <data-dir>/secrets.key, created on first
                       start; a file named here must exist (head -c 32 /dev/urandom > f).
                       Start-up stops on a key file of another size, one group or others
                       may access, or a key other than the one the secrets were written with
  --plugins <a,b>      plugins to load at boot, in order: built-in names or module paths
                       (AGENTPLANE_PLUGINS, default ${DEFAULT_PLUGINS.join(',')}; in Kubernetes
                       mode ${DEFAULT_CLUSTER_PLUGINS.join(',')})
  --config <file>      JSON config file: {"plugins": [...], "pluginOptions": {...},
                       "allowPrivateConnectorUrls": true|false, "sandbox": "...",
                       "templates": [...], "modelTaskDeadlineSeconds": 600,
                       "tokenFile": "...", "metricsAuth": true|false, "allowedHosts": [...],
                       "secretsKeyFile": "...",
                       "auditLog": "...", "auditLevel": "Metadata",
                       "auditPolicyFile": "...",
                       "rateLimit": 100,
                       "rateLimitBurst": 200, "wsClientsPerAgent": 100,
                       "eventsPerAgent": 10000, "idleTimeoutSeconds": 600,
                       "maxWorkers": 96, "warmPool": 0}
                       (AGENTPLANE_CONFIG); flags and variables override it
  --demo               start the built-in scripted model server and point agents at it, so
                       agents really run tools without a model key (AGENTPLANE_DEMO=true)
  --allow-private-connector-urls
                       let connectors point at loopback (127.0.0.0/8, ::1, localhost) and
                       private addresses (10/8, 172.16/12, 192.168/16, fc00::/7); link-local
                       and cloud metadata addresses are always refused
                       (AGENTPLANE_ALLOW_PRIVATE_CONNECTOR_URLS=true; config
                       "allowPrivateConnectorUrls"; default false)
  --templates <a,b>    pod templates agents may name in templateRef besides "default"
                       (AGENTPLANE_TEMPLATES; config "templates"; each a DNS-1123 name);
                       an agent naming another is refused (400/422, field templateRef).
                       In the config file an entry may be {"name": "quick",
                       "modelTaskDeadlineSeconds": 60}: that template's own model task
                       deadline (default --model-task-deadline); "egress": "Open" (default),
                       "Proxy" (only "egressAllow": ["host", "*.suffix"]) or "None": where
                       its agents' tools may connect
  --log-level <lvl>    trace, debug, info, warn, error (AGENTPLANE_LOG_LEVEL, default info)
  --sandbox <mode>     how agent workers and their tools are confined (AGENTPLANE_SANDBOX):
                       auto (default): bubblewrap when it works here, else run unconfined
                         with a warning; bwrap: bubblewrap or refuse to start; none: unconfined.
                       Confined tools see only their workspace: no data directory (state,
                       events, stored secrets), no other workspace, no other process.
  --model-task-deadline <seconds>
                       how long after a task began the model proxy still retries a failed
                       model request (429, 5xx, 529, timeout), with backoff, at most 8 times
                       (AGENTPLANE_MODEL_TASK_DEADLINE; config "modelTaskDeadlineSeconds";
                       default 600); a template may set its own (see --templates)
  --rate-limit <n>     requests per second per user (per client address without a token file),
                       a token bucket; over it: 429 TooManyRequests with Retry-After
                       (AGENTPLANE_RATE_LIMIT; config "rateLimit"; 0 turns it off). Default 100
                       with --token-file and in Kubernetes mode, off on the open loopback home
  --rate-limit-burst <n>
                       requests at once after a quiet spell (AGENTPLANE_RATE_LIMIT_BURST; config
                       "rateLimitBurst"; default twice the rate)
  --ws-clients-per-agent <n>
                       live event WebSockets one agent may have at once; one more is refused
                       with HTTP 429 before the upgrade (AGENTPLANE_WS_CLIENTS_PER_AGENT; config
                       "wsClientsPerAgent"; default 100)
  --events-per-agent <n>
                       events kept per agent; the oldest are trimmed as new ones arrive
                       (AGENTPLANE_EVENTS_PER_AGENT; config "eventsPerAgent"; default 10000)
  --idle-timeout <seconds>
                       an agent (not in a squad) without a task this long gives back its
                       worker and engine process (condition WorkerReady=False, reason
                       Released); its next task starts them again and resumes the session
                       (AGENTPLANE_IDLE_TIMEOUT; config "idleTimeoutSeconds"; default 600; 0 never);
                       an agent's annotation agentplane.io/idle-timeout overrides it
  --max-workers <n>    workers (each with its engine) that run at once with local workers;
                       beyond, an agent waits (WorkerReady=False, reason Queued) and the worker
                       idle the longest is released to make room (AGENTPLANE_MAX_WORKERS; config
                       "maxWorkers"; default what the memory holds: 3/4 of it at 192 MiB each;
                       0 no limit). Pods are placed by the Kubernetes scheduler instead
  --warm-pool <n>      local workers kept started ahead of any agent, engine included; a new
                       agent (not in a squad) takes one, so its first task skips the start-up
                       (AGENTPLANE_WARM_POOL; config "warmPool"; default 0, none). Pods: a
                       template's warmPool (docs/kubernetes-runtime.md)

Kubernetes mode:
  --kubeconfig <file>  how to reach kube-apiserver (KUBECONFIG; default: in-cluster config)
  --tls-cert-file <f>  serving certificate, PEM (AGENTPLANE_TLS_CERT_FILE; required)
  --tls-private-key-file <f>
                       its private key, PEM (AGENTPLANE_TLS_PRIVATE_KEY_FILE; required)
  --runtime <kind>     where agents run: kubernetes (default in this mode: a pod, a workspace
                       claim, a Secret and a ConfigMap per agent) or local (worker processes
                       beside the server) (AGENTPLANE_RUNTIME; docs/kubernetes-runtime.md)
  --worker-image <ref> the "default" template's image (AGENTPLANE_WORKER_IMAGE, default
                       agentplane/worker:latest); template ConfigMaps may name others
  --worker-image-pull-policy <p>
                       Always, IfNotPresent (default) or Never (AGENTPLANE_WORKER_IMAGE_PULL_POLICY)
  --install-namespace <ns>
                       where template ConfigMaps and the model Secret live
                       (AGENTPLANE_INSTALL_NAMESPACE; default $POD_NAMESPACE, the service
                       account's namespace, the kubeconfig context's, or agentplane-system)
  --worker-listen <host:port>
                       where the worker listener (control channel and model proxy) binds
                       (AGENTPLANE_WORKER_LISTEN, default 0.0.0.0:8081)
  --worker-url <url>   the URL worker pods dial (AGENTPLANE_WORKER_URL; default
                       http://agentplane-workers.<install namespace>.svc:<port>)
  --workspace-size <q> the default template's workspace claim size (AGENTPLANE_WORKSPACE_SIZE,
                       default 1Gi)
  --storage-class <c>  the default template's storage class (AGENTPLANE_STORAGE_CLASS; default:
                       the cluster's default class)
  --model-proxy <where>
                       how pods reach the model (AGENTPLANE_MODEL_PROXY): sidecar (a proxy in
                       each pod holding the credential-mirror's Secret) or server (the server's
                       proxy). Default sidecar with the credential-mirror plugin and without
                       --demo, else server (docs/kubernetes-runtime.md "Model proxy sidecar")
  --leader-elect       several replicas: only the holder of a coordination.k8s.io Lease runs the
                       reconcilers and serves workers; all serve the APIs
                       (AGENTPLANE_LEADER_ELECT; default false; docs/high-availability.md)
  --leader-elect-lease-duration <s>
                       seconds a leader's last renewal keeps the Lease from the others
                       (AGENTPLANE_LEADER_ELECT_LEASE_DURATION, default 15)
  --leader-elect-renew-deadline <s>
                       seconds the leader keeps trying to renew before it stops leading and exits
                       (AGENTPLANE_LEADER_ELECT_RENEW_DEADLINE, default 10)
  --leader-elect-retry-period <s>
                       seconds between attempts to acquire or renew
                       (AGENTPLANE_LEADER_ELECT_RETRY_PERIOD, default 2)
  --leader-elect-resource-name <name>
                       the Lease's name (AGENTPLANE_LEADER_ELECT_RESOURCE_NAME, default agentplane),
                       in the install namespace
  -h, --help           show this help

The model endpoint and credential come from the server's environment only, never from clients:
  ANTHROPIC_API_KEY    the model provider key; only the server's model proxy holds it (agent
                       workers get the proxy's URL and a per-agent credential). Pods with the
                       model-proxy sidecar use the mirrored Secret's key instead
  ANTHROPIC_BASE_URL   Anthropic Messages API endpoint (default: Anthropic's)
`;

interface ConfigFile {
  plugins?: string[];
  pluginOptions?: Record<string, unknown>;
  allowPrivateConnectorUrls?: boolean;
  sandbox?: string;
  templates?: (string | TemplateConfig)[];
  modelTaskDeadlineSeconds?: number;
  tokenFile?: string;
  oidc?: Partial<OidcOptions>;
  metricsAuth?: boolean;
  allowedHosts?: string[];
  secretsKeyFile?: string;
  auditLog?: string;
  auditLevel?: string;
  auditPolicyFile?: string;
  rateLimit?: number;
  rateLimitBurst?: number;
  wsClientsPerAgent?: number;
  eventsPerAgent?: number;
  idleTimeoutSeconds?: number;
  maxWorkers?: number;
  warmPool?: number;
}

function fail(msg: string): never {
  process.stderr.write(`agentplane: ${msg}\n`);
  process.exit(2);
}

function readConfig(path: string | undefined): ConfigFile {
  if (!path) return {};
  try {
    const cfg = JSON.parse(readFileSync(path, 'utf8')) as ConfigFile;
    if (cfg.plugins !== undefined && !(Array.isArray(cfg.plugins) && cfg.plugins.every((p) => typeof p === 'string'))) {
      fail(`config ${path}: "plugins" must be an array of strings`);
    }
    if (cfg.templates !== undefined && !Array.isArray(cfg.templates)) {
      fail(`config ${path}: "templates" must be an array of names or {"name", "modelTaskDeadlineSeconds", "egress", "egressAllow"} objects`);
    }
    try {
      templateConfigs(cfg.templates ?? []);
    } catch (err) {
      fail(`config ${path}: "templates": ${(err as Error).message}`);
    }
    if (cfg.allowPrivateConnectorUrls !== undefined && typeof cfg.allowPrivateConnectorUrls !== 'boolean') {
      fail(`config ${path}: "allowPrivateConnectorUrls" must be true or false`);
    }
    if (cfg.tokenFile !== undefined && (typeof cfg.tokenFile !== 'string' || cfg.tokenFile === '')) {
      fail(`config ${path}: "tokenFile" must be a file path`);
    }
    if (cfg.oidc !== undefined && (typeof cfg.oidc !== 'object' || cfg.oidc === null || !Object.values(cfg.oidc).every((v) => typeof v === 'string'))) {
      fail(`config ${path}: "oidc" must be an object of strings (issuerUrl, clientId, usernameClaim, usernamePrefix, groupsClaim, groupsPrefix, caFile)`);
    }
    if (cfg.secretsKeyFile !== undefined && (typeof cfg.secretsKeyFile !== 'string' || cfg.secretsKeyFile === '')) {
      fail(`config ${path}: "secretsKeyFile" must be a file path`);
    }
    if (cfg.metricsAuth !== undefined && typeof cfg.metricsAuth !== 'boolean') {
      fail(`config ${path}: "metricsAuth" must be true or false`);
    }
    if (cfg.allowedHosts !== undefined && !(Array.isArray(cfg.allowedHosts) && cfg.allowedHosts.every((h) => typeof h === 'string' && h.trim() !== ''))) {
      fail(`config ${path}: "allowedHosts" must be an array of host names`);
    }
    if (cfg.auditLog !== undefined && (typeof cfg.auditLog !== 'string' || cfg.auditLog === '')) {
      fail(`config ${path}: "auditLog" must be a file path or "-"`);
    }
    if (cfg.auditLevel !== undefined && !(typeof cfg.auditLevel === 'string' && isAuditLevel(cfg.auditLevel))) {
      fail(`config ${path}: "auditLevel" must be one of ${AUDIT_LEVELS.join(', ')}`);
    }
    if (cfg.auditPolicyFile !== undefined && (typeof cfg.auditPolicyFile !== 'string' || cfg.auditPolicyFile === '')) {
      fail(`config ${path}: "auditPolicyFile" must be a file path`);
    }
    return cfg;
  } catch (err) {
    return fail(`cannot read config ${path}: ${(err as Error).message}`);
  }
}

/** Flag, environment variable and config key of each OIDC setting. */
const OIDC_FLAGS: [string, string, keyof OidcOptions][] = [
  ['oidc-issuer-url', 'AGENTPLANE_OIDC_ISSUER_URL', 'issuerUrl'],
  ['oidc-client-id', 'AGENTPLANE_OIDC_CLIENT_ID', 'clientId'],
  ['oidc-username-claim', 'AGENTPLANE_OIDC_USERNAME_CLAIM', 'usernameClaim'],
  ['oidc-username-prefix', 'AGENTPLANE_OIDC_USERNAME_PREFIX', 'usernamePrefix'],
  ['oidc-groups-claim', 'AGENTPLANE_OIDC_GROUPS_CLAIM', 'groupsClaim'],
  ['oidc-groups-prefix', 'AGENTPLANE_OIDC_GROUPS_PREFIX', 'groupsPrefix'],
  ['oidc-ca-file', 'AGENTPLANE_OIDC_CA_FILE', 'caFile'],
];

/** The OIDC settings from flags, then the environment, then the config file; undefined when no issuer. */
function oidcSettings(values: Record<string, string | undefined>, cfg: Partial<OidcOptions>): OidcOptions | undefined {
  const out: Partial<OidcOptions> = {};
  for (const [flag, envName, key] of OIDC_FLAGS) {
    const v = values[flag] ?? (process.env[envName] || undefined) ?? cfg[key];
    if (v !== undefined) out[key] = v;
  }
  if (out.issuerUrl === undefined) {
    if (Object.keys(out).length) fail('--oidc-* settings need --oidc-issuer-url');
    return undefined;
  }
  return { clientId: '', ...out } as OidcOptions;
}

/** A true/false environment variable; undefined when unset; anything else stops start-up. */
function boolEnv(name: string): boolean | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return fail(`${name} must be "true" or "false", got "${v}"`);
}

/** A number setting from its flag, variable or config key; undefined when none is given. */
function numberSetting(flag: string, raw: string | number | undefined, ok: (n: number) => boolean, rule: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = typeof raw === 'number' ? raw : /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!ok(n)) fail(`--${flag} must be ${rule}, got "${raw}"`);
  return n;
}

function readPem(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    return fail(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/** The Kubernetes runtime's flags, checked; each undefined when not given. */
function podOptions(raw: Record<string, string | undefined>, MODEL_PROXY_MODES: readonly ModelProxyMode[]): PodOptions {
  const o: PodOptions = {};
  if (raw.image) o.image = raw.image;
  if (raw.pullPolicy) {
    if (!['Always', 'IfNotPresent', 'Never'].includes(raw.pullPolicy)) fail(`--worker-image-pull-policy must be Always, IfNotPresent or Never, got "${raw.pullPolicy}"`);
    o.imagePullPolicy = raw.pullPolicy as PodOptions['imagePullPolicy'];
  }
  if (raw.listen) {
    const m = /^(.*):(\d+)$/.exec(raw.listen);
    const port = m ? Number(m[2]) : NaN;
    if (!m || !m[1] || !(port >= 0 && port <= 65535)) fail(`--worker-listen must be <host>:<port>, got "${raw.listen}"`);
    o.listenHost = m[1].replace(/^\[|\]$/g, '');
    o.listenPort = port;
  }
  if (raw.workerUrl) {
    let url: URL | undefined;
    try {
      url = new URL(raw.workerUrl);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol)) fail(`--worker-url must be an http(s) URL, got "${raw.workerUrl}"`);
    o.workerUrl = raw.workerUrl.replace(/\/+$/, '');
  }
  if (raw.workspaceSize) {
    if (!/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.test(raw.workspaceSize)) fail(`--workspace-size must be a quantity such as 1Gi, got "${raw.workspaceSize}"`);
    o.workspaceSize = raw.workspaceSize;
  }
  if (raw.storageClass) o.storageClass = raw.storageClass;
  if (raw.modelProxy) {
    if (!MODEL_PROXY_MODES.includes(raw.modelProxy as ModelProxyMode)) fail(`--model-proxy must be one of ${MODEL_PROXY_MODES.join(', ')}, got "${raw.modelProxy}"`);
    o.modelProxy = raw.modelProxy as ModelProxyMode;
  }
  return o;
}

async function serve(argv: string[]): Promise<void> {
  const { MODEL_PROXY_MODES, RUNTIME_KINDS } = await import('./runtimes.js');
  const { checkOidcOptions } = await import('../../pkg/server/auth/oidc.js');
  const { startServer } = await import('./serve.js');
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      // --no-<flag> for booleans (--no-metrics-auth).
      allowNegative: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        plugins: { type: 'string' },
        config: { type: 'string' },
        demo: { type: 'boolean' },
        'allow-private-connector-urls': { type: 'boolean' },
        'token-file': { type: 'string' },
        'secrets-key-file': { type: 'string' },
        'metrics-auth': { type: 'boolean' },
        'allowed-hosts': { type: 'string' },
        ...Object.fromEntries(OIDC_FLAGS.map(([flag]) => [flag, { type: 'string' as const }])),
        'audit-log': { type: 'string' },
        'audit-level': { type: 'string' },
        'audit-policy-file': { type: 'string' },
        'log-level': { type: 'string' },
        sandbox: { type: 'string' },
        templates: { type: 'string' },
        'model-task-deadline': { type: 'string' },
        'rate-limit': { type: 'string' },
        'rate-limit-burst': { type: 'string' },
        'ws-clients-per-agent': { type: 'string' },
        'events-per-agent': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'max-workers': { type: 'string' },
        'warm-pool': { type: 'string' },
        mode: { type: 'string' },
        kubeconfig: { type: 'string' },
        'tls-cert-file': { type: 'string' },
        'tls-private-key-file': { type: 'string' },
        runtime: { type: 'string' },
        'worker-image': { type: 'string' },
        'model-proxy': { type: 'string' },
        'worker-image-pull-policy': { type: 'string' },
        'install-namespace': { type: 'string' },
        'worker-listen': { type: 'string' },
        'worker-url': { type: 'string' },
        'workspace-size': { type: 'string' },
        'storage-class': { type: 'string' },
        'leader-elect': { type: 'boolean' },
        'leader-elect-lease-duration': { type: 'string' },
        'leader-elect-renew-deadline': { type: 'string' },
        'leader-elect-retry-period': { type: 'string' },
        'leader-elect-resource-name': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    fail(`${(err as Error).message}\n\n${SERVE_HELP}`);
  }
  if (values.help) {
    process.stdout.write(SERVE_HELP);
    return;
  }
  const env = process.env;
  const cfg = readConfig(values.config ?? env.AGENTPLANE_CONFIG);
  const portRaw = values.port ?? env.AGENTPLANE_PORT ?? '8080';
  const port = /^\d+$/.test(portRaw) ? Number(portRaw) : NaN;
  if (!(port >= 0 && port <= 65535)) fail(`--port must be a number from 0 to 65535, got "${portRaw}"`);
  const pluginList = values.plugins ?? env.AGENTPLANE_PLUGINS;
  const mode = values.mode ?? env.AGENTPLANE_MODE ?? 'embedded';
  if (mode !== 'embedded' && mode !== 'kubernetes') fail(`--mode must be "embedded" or "kubernetes", got "${mode}"`);
  const defaultPlugins = mode === 'kubernetes' ? DEFAULT_CLUSTER_PLUGINS : DEFAULT_PLUGINS;
  const plugins = pluginList !== undefined ? pluginList.split(',').map((s) => s.trim()).filter(Boolean) : (cfg.plugins ?? defaultPlugins);
  const templateList = values.templates ?? env.AGENTPLANE_TEMPLATES;
  const templates = templateList !== undefined ? templateList.split(',').map((s) => s.trim()).filter(Boolean) : (cfg.templates ?? []);
  const level = values['log-level'] ?? env.AGENTPLANE_LOG_LEVEL;
  if (level) process.env.AGENTPLANE_LOG_LEVEL = level;
  const sandbox = values.sandbox ?? env.AGENTPLANE_SANDBOX ?? cfg.sandbox ?? 'auto';
  if (!SANDBOX_MODES.includes(sandbox as SandboxMode)) fail(`--sandbox must be one of ${SANDBOX_MODES.join(', ')}, got "${sandbox}"`);
  const deadlineRaw = values['model-task-deadline'] ?? env.AGENTPLANE_MODEL_TASK_DEADLINE ?? cfg.modelTaskDeadlineSeconds;
  const deadline = deadlineRaw === undefined ? undefined : Number(deadlineRaw);
  if (deadline !== undefined && !(Number.isFinite(deadline) && deadline > 0)) fail(`--model-task-deadline must be a positive number of seconds, got "${deadlineRaw}"`);
  const tokenFile = values['token-file'] ?? (env.AGENTPLANE_TOKEN_FILE || undefined) ?? cfg.tokenFile;
  const secretsKeyFile = values['secrets-key-file'] ?? (env.AGENTPLANE_SECRETS_KEY_FILE || undefined) ?? cfg.secretsKeyFile;
  // Default (undefined): /metrics needs a token whenever there is a token file.
  const metricsAuth = values['metrics-auth'] ?? boolEnv('AGENTPLANE_METRICS_AUTH') ?? cfg.metricsAuth;
  if (mode === 'kubernetes' && tokenFile) fail('--token-file is for embedded mode; Kubernetes mode delegates authentication to kube-apiserver');
  if (mode === 'embedded' && metricsAuth === true && !tokenFile) fail('--metrics-auth needs --token-file (AGENTPLANE_TOKEN_FILE, config "tokenFile")');
  const allowedHostList = values['allowed-hosts'] ?? (env.AGENTPLANE_ALLOWED_HOSTS || undefined);
  const allowedHosts = allowedHostList !== undefined ? allowedHostList.split(',').map((s) => s.trim()).filter(Boolean) : cfg.allowedHosts;
  const oidc = oidcSettings(values as Record<string, string | undefined>, cfg.oidc ?? {});
  if (oidc && mode === 'kubernetes') fail('--oidc-* are for embedded mode; in Kubernetes mode configure OIDC on kube-apiserver, which authenticates for agentplane');
  if (oidc && !tokenFile) fail('--oidc-issuer-url needs --token-file: its "grants" say what OIDC users and groups may do (docs/auth.md "OIDC")');
  if (oidc) {
    try {
      checkOidcOptions(oidc);
    } catch (err) {
      fail((err as Error).message);
    }
  }
  const auditLog = values['audit-log'] ?? (env.AGENTPLANE_AUDIT_LOG || undefined) ?? cfg.auditLog;
  const auditLevel = values['audit-level'] ?? (env.AGENTPLANE_AUDIT_LEVEL || undefined) ?? cfg.auditLevel;
  if (auditLevel !== undefined && !isAuditLevel(auditLevel)) fail(`--audit-level must be one of ${AUDIT_LEVELS.join(', ')}, got "${auditLevel}"`);
  if (auditLevel !== undefined && auditLevel !== 'None' && !auditLog) fail('--audit-level needs --audit-log (AGENTPLANE_AUDIT_LOG, config "auditLog")');
  const auditPolicyFile = values['audit-policy-file'] ?? (env.AGENTPLANE_AUDIT_POLICY_FILE || undefined) ?? cfg.auditPolicyFile;
  if (auditPolicyFile !== undefined && !auditLog) fail('--audit-policy-file needs --audit-log (AGENTPLANE_AUDIT_LOG, config "auditLog")');
  const rateLimit = numberSetting('rate-limit', values['rate-limit'] ?? env.AGENTPLANE_RATE_LIMIT ?? cfg.rateLimit, (n) => Number.isFinite(n) && n >= 0, 'a number of requests per second, 0 for none');
  const positiveInt = (n: number): boolean => Number.isInteger(n) && n >= 1;
  const rateLimitBurst = numberSetting('rate-limit-burst', values['rate-limit-burst'] ?? env.AGENTPLANE_RATE_LIMIT_BURST ?? cfg.rateLimitBurst, positiveInt, 'a whole number of at least 1');
  const wsClientsPerAgent = numberSetting('ws-clients-per-agent', values['ws-clients-per-agent'] ?? env.AGENTPLANE_WS_CLIENTS_PER_AGENT ?? cfg.wsClientsPerAgent, positiveInt, 'a whole number of at least 1');
  const eventsPerAgent = numberSetting('events-per-agent', values['events-per-agent'] ?? env.AGENTPLANE_EVENTS_PER_AGENT ?? cfg.eventsPerAgent, positiveInt, 'a whole number of at least 1');
  const idleTimeout = numberSetting('idle-timeout', values['idle-timeout'] ?? env.AGENTPLANE_IDLE_TIMEOUT ?? cfg.idleTimeoutSeconds, (n) => Number.isFinite(n) && n >= 0, 'a number of seconds, 0 for never');
  const warmPool = numberSetting('warm-pool', values['warm-pool'] ?? env.AGENTPLANE_WARM_POOL ?? cfg.warmPool, (n) => Number.isInteger(n) && n >= 0, 'a whole number, 0 for none');
  const maxWorkers = numberSetting('max-workers', values['max-workers'] ?? env.AGENTPLANE_MAX_WORKERS ?? cfg.maxWorkers, (n) => Number.isInteger(n) && n >= 0, 'a whole number, 0 for no limit');
  let kubernetes: ServeOptions['kubernetes'];
  if (mode === 'kubernetes') {
    const cert = values['tls-cert-file'] ?? env.AGENTPLANE_TLS_CERT_FILE;
    const key = values['tls-private-key-file'] ?? env.AGENTPLANE_TLS_PRIVATE_KEY_FILE;
    if (!cert || !key) fail('Kubernetes mode serves TLS: --tls-cert-file and --tls-private-key-file are required');
    const installNamespace = values['install-namespace'] ?? (env.AGENTPLANE_INSTALL_NAMESPACE || undefined);
    if (installNamespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(installNamespace)) {
      fail(`--install-namespace must be a namespace name, got "${installNamespace}"`);
    }
    kubernetes = {
      kubeconfig: values.kubeconfig ?? env.KUBECONFIG,
      tls: { cert: readPem(cert), key: readPem(key) },
      ...(installNamespace ? { installNamespace } : {}),
    };
  }
  const leaderElect = values['leader-elect'] ?? boolEnv('AGENTPLANE_LEADER_ELECT') ?? false;
  if (leaderElect && mode !== 'kubernetes') fail('--leader-elect needs --mode kubernetes (the Lease lives in the cluster)');
  const seconds = (flag: string, envName: string): number | undefined => {
    const n = numberSetting(flag, values[flag as 'leader-elect-lease-duration'] ?? (env[envName] || undefined), (x) => Number.isFinite(x) && x > 0, 'a positive number of seconds');
    return n === undefined ? undefined : n * 1000;
  };
  const leaseDurationMs = seconds('leader-elect-lease-duration', 'AGENTPLANE_LEADER_ELECT_LEASE_DURATION');
  const renewDeadlineMs = seconds('leader-elect-renew-deadline', 'AGENTPLANE_LEADER_ELECT_RENEW_DEADLINE');
  const retryPeriodMs = seconds('leader-elect-retry-period', 'AGENTPLANE_LEADER_ELECT_RETRY_PERIOD');
  const leaseName = values['leader-elect-resource-name'] ?? (env.AGENTPLANE_LEADER_ELECT_RESOURCE_NAME || undefined);
  if (leaseName !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(leaseName)) fail(`--leader-elect-resource-name must be a DNS subdomain name, got "${leaseName}"`);
  const runtime = values.runtime ?? (env.AGENTPLANE_RUNTIME || undefined);
  if (runtime !== undefined && !RUNTIME_KINDS.includes(runtime as RuntimeKind)) fail(`--runtime must be one of ${RUNTIME_KINDS.join(', ')}, got "${runtime}"`);
  if (runtime === 'kubernetes' && mode !== 'kubernetes') fail('--runtime kubernetes needs --mode kubernetes (state and pods both live in the cluster)');
  const pods = podOptions({
    image: values['worker-image'] ?? env.AGENTPLANE_WORKER_IMAGE,
    pullPolicy: values['worker-image-pull-policy'] ?? env.AGENTPLANE_WORKER_IMAGE_PULL_POLICY,
    listen: values['worker-listen'] ?? env.AGENTPLANE_WORKER_LISTEN,
    workerUrl: values['worker-url'] ?? env.AGENTPLANE_WORKER_URL,
    workspaceSize: values['workspace-size'] ?? env.AGENTPLANE_WORKSPACE_SIZE,
    storageClass: values['storage-class'] ?? env.AGENTPLANE_STORAGE_CLASS,
    modelProxy: values['model-proxy'] ?? (env.AGENTPLANE_MODEL_PROXY || undefined),
  }, MODEL_PROXY_MODES);

  try {
    const server = await startServer({
      host: values.host ?? env.AGENTPLANE_HOST ?? '127.0.0.1',
      port,
      dataDir: values['data-dir'] ?? env.AGENTPLANE_DATA_DIR ?? './.agentplane',
      plugins,
      pluginOptions: cfg.pluginOptions,
      demo: values.demo ?? env.AGENTPLANE_DEMO === 'true',
      allowPrivateConnectorUrls: values['allow-private-connector-urls'] ?? boolEnv('AGENTPLANE_ALLOW_PRIVATE_CONNECTOR_URLS') ?? cfg.allowPrivateConnectorUrls ?? false,
      sandbox: sandbox as SandboxMode,
      templates,
      ...(deadline !== undefined ? { modelRetry: { taskDeadlineMs: deadline * 1000 } } : {}),
      ...(tokenFile ? { tokenFile } : {}),
      ...(oidc ? { oidc } : {}),
      ...(secretsKeyFile ? { secretsKeyFile } : {}),
      ...(metricsAuth !== undefined ? { metricsAuth } : {}),
      ...(allowedHosts?.length ? { allowedHosts } : {}),
      ...(auditLog ? { audit: { path: auditLog, ...(auditLevel ? { level: auditLevel as AuditLevel } : {}), ...(auditPolicyFile ? { policyFile: auditPolicyFile } : {}) } } : {}),
      ...(rateLimit !== undefined ? { rateLimit } : {}),
      ...(rateLimitBurst !== undefined ? { rateLimitBurst } : {}),
      ...(wsClientsPerAgent !== undefined ? { wsClientsPerAgent } : {}),
      ...(eventsPerAgent !== undefined ? { eventsPerAgent } : {}),
      ...(idleTimeout !== undefined ? { idleTimeoutMs: idleTimeout * 1000 } : {}),
      ...(maxWorkers !== undefined ? { maxWorkers } : {}),
      ...(warmPool !== undefined ? { warmPool } : {}),
      ...(kubernetes ? { kubernetes } : {}),
      ...(runtime ? { runtime: runtime as RuntimeKind } : {}),
      pods,
      ...(leaderElect
        ? {
            leaderElection: {
              ...(leaseName ? { name: leaseName } : {}),
              ...(leaseDurationMs !== undefined ? { leaseDurationMs } : {}),
              ...(renewDeadlineMs !== undefined ? { renewDeadlineMs } : {}),
              ...(retryPeriodMs !== undefined ? { retryPeriodMs } : {}),
              // As controller-runtime's managers: a replica that lost the Lease exits, and
              // Kubernetes restarts it as a candidate.
              onLost: () => {
                process.stderr.write('agentplane: lost the leader Lease; exiting\n');
                process.exit(1);
              },
            },
          }
        : {}),
    });
    let closing = false;
    const shutdown = (): void => {
      if (closing) return;
      closing = true;
      server.logger.info('shutting down');
      void server.close().then(() => process.exit(0));
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
  } catch (err) {
    if (err instanceof PluginError) fail(err.message);
    fail(`cannot start: ${(err as Error).message}`);
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'serve') {
  await serve(rest);
} else {
  // Every other command is a client of a running server (docs/cli.md).
  const { runCli } = await import('../../pkg/cli/program.js');
  await runCli(process.argv.slice(2));
}
