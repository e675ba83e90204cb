// Every flag of `agentplane serve`, declared once (flag.ts): the parser, the environment and
// config-file lookups, the config file's checks and `--help` all come from this table, and
// test/unit/serve-flags.test.ts holds README.md and the docs' flag tables to it.

import { templateConfigs } from '../../pkg/api/template-settings.js';
import { DEFAULT_CLUSTER_PLUGINS, DEFAULT_PLUGINS } from '../../pkg/plugin/loader.js';
import { SANDBOX_MODES } from '../../pkg/runtime/local/sandbox.js';
import { AUDIT_LEVELS, isAuditLevel } from '../../pkg/server/audit/index.js';
import { DEFAULT_WRITES_PER_TURN } from '../../pkg/server/write-turns.js';
import { choiceRule, type Flag, flag, FlagError, isPath, listRule, numberRule, type RawValue } from './flag.js';
import { MODEL_PROXY_MODES, RUNTIME_KINDS } from './runtime-kinds.js';

const positiveInt = (n: number): boolean => Number.isInteger(n) && n >= 1;
const wholeOrZero = (n: number): boolean => Number.isInteger(n) && n >= 0;
const pathKey =
  (key: string, what = 'a file path') =>
  (v: unknown) =>
    isPath(v) ? undefined : `"${key}" must be ${what}`;
const boolKey = (key: string) => (v: unknown) => (typeof v === 'boolean' ? undefined : `"${key}" must be true or false`);
/** Pods' settings: an empty value is no value. */
const optional =
  <T>(parse: (raw: RawValue) => T) =>
  (raw: RawValue) =>
    raw === '' ? undefined : parse(raw);
const matching = (name: string, re: RegExp, what: string) => (raw: RawValue) => {
  if (!re.test(String(raw))) throw new FlagError(`--${name} must be ${what}, got "${String(raw)}"`);
  return String(raw);
};
const seconds = (name: string) => numberRule(name, (n) => Number.isFinite(n) && n > 0, 'a positive number of seconds');

/** The OIDC settings: flag oidc-<x>, variable AGENTPLANE_OIDC_<X>, config key oidc.<x>. */
const oidc = (suffix: string, key: string, help: string, arg: string, defaultHelp?: string): Flag =>
  flag({
    name: `oidc-${suffix}`,
    type: 'string',
    arg,
    env: `AGENTPLANE_OIDC_${suffix.toUpperCase().replace(/-/g, '_')}`,
    config: `oidc.${key}`,
    help,
    section: 'general',
    ...(defaultHelp ? { defaultHelp } : {}),
  });

export const SERVE_FLAGS = {
  mode: flag({
    name: 'mode',
    type: 'string',
    arg: '<mode>',
    env: 'AGENTPLANE_MODE',
    emptyEnvIsValue: true,
    default: 'embedded',
    help: 'embedded or kubernetes',
    section: 'general',
    parse: choiceRule('mode', ['embedded', 'kubernetes'] as const, '"embedded" or "kubernetes"'),
  }),
  host: flag({
    name: 'host',
    type: 'string',
    arg: '<addr>',
    env: 'AGENTPLANE_HOST',
    emptyEnvIsValue: true,
    default: '127.0.0.1',
    help: 'address to bind; 127.0.0.1 is loopback only. Embedded mode refuses any address but loopback (127.0.0.0/8, ::1, localhost) unless --token-file is given',
    section: 'general',
  }),
  port: flag({
    name: 'port',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_PORT',
    emptyEnvIsValue: true,
    default: '8080',
    help: 'port to listen on, 0 for any free port',
    section: 'general',
    parse: (raw) => {
      const n = /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
      if (!(n >= 0 && n <= 65535)) throw new FlagError(`--port must be a number from 0 to 65535, got "${String(raw)}"`);
      return n;
    },
  }),
  dataDir: flag({
    name: 'data-dir',
    type: 'string',
    arg: '<dir>',
    env: 'AGENTPLANE_DATA_DIR',
    emptyEnvIsValue: true,
    default: './.agentplane',
    help: 'where state, events and agent workspaces live',
    section: 'general',
  }),
  tokenFile: flag({
    name: 'token-file',
    type: 'string',
    arg: '<file>',
    env: 'AGENTPLANE_TOKEN_FILE',
    config: 'tokenFile',
    checkConfig: pathKey('tokenFile'),
    help: 'bearer tokens, each with a user, namespaces and verbs, stored as sha256 hashes (YAML or JSON; docs/auth.md "Embedded home"); re-read when it changes. With it every request needs a token, except /healthz, /readyz and /livez (and /metrics with --no-metrics-auth)',
    section: 'general',
  }),
  oidcIssuerUrl: oidc(
    'issuer-url',
    'issuerUrl',
    'also accept OIDC ID tokens from this issuer (keys from its discovery document and JWKS); their users and groups get the token file\'s "grants" (needs --token-file; docs/auth.md "OIDC")',
    '<https url>',
  ),
  oidcClientId: oidc('client-id', 'clientId', "the ID tokens' audience; required with --oidc-issuer-url", '<id>'),
  oidcUsernameClaim: oidc('username-claim', 'usernameClaim', 'the claim that names the user', '<claim>', 'sub'),
  oidcUsernamePrefix: oidc('username-prefix', 'usernamePrefix', 'put before user names; "-" for none', '<p>', '"<issuer>#" unless the claim is email'),
  oidcGroupsClaim: oidc('groups-claim', 'groupsClaim', "the claim that lists the user's groups", '<claim>'),
  oidcGroupsPrefix: oidc('groups-prefix', 'groupsPrefix', 'put before group names', '<p>'),
  oidcCaFile: oidc('ca-file', 'caFile', "the CAs of the issuer's certificate, PEM", '<pem>'),
  metricsAuth: flag<boolean>({
    name: 'metrics-auth',
    type: 'boolean',
    env: 'AGENTPLANE_METRICS_AUTH',
    config: 'metricsAuth',
    checkConfig: boolKey('metricsAuth'),
    defaultHelp: 'on with --token-file',
    help: '/metrics needs a token too (its series name namespaces and agents); --no-metrics-auth leaves it open',
    section: 'general',
  }),
  allowedHosts: flag<string[]>({
    name: 'allowed-hosts',
    type: 'string',
    arg: '<a,b>',
    env: 'AGENTPLANE_ALLOWED_HOSTS',
    config: 'allowedHosts',
    checkConfig: (v) =>
      Array.isArray(v) && v.every((h) => typeof h === 'string' && h.trim() !== '') ? undefined : '"allowedHosts" must be an array of host names',
    parse: listRule,
    help: 'host names requests may be sent to besides loopback (127.0.0.0/8, [::1], localhost) and the --host address; ".example.com" allows it and every name under it. Any other Host is refused (421) against DNS rebinding; with --host 0.0.0.0 or :: any IP address is allowed too. Kubernetes mode checks the Host only when this is given',
    section: 'general',
  }),
  auditLog: flag({
    name: 'audit-log',
    type: 'string',
    arg: '<file>',
    env: 'AGENTPLANE_AUDIT_LOG',
    config: 'auditLog',
    checkConfig: pathKey('auditLog', 'a file path or "-"'),
    help: 'append an audit log: every mutating request (who, verb, resource, namespace, name, result, time) as one audit.k8s.io/v1 Event JSON line; "-" for stdout (docs/audit.md)',
    section: 'general',
  }),
  auditLevel: flag({
    name: 'audit-level',
    type: 'string',
    arg: '<lvl>',
    env: 'AGENTPLANE_AUDIT_LEVEL',
    config: 'auditLevel',
    checkConfig: (v) => (typeof v === 'string' && isAuditLevel(v) ? undefined : `"auditLevel" must be one of ${AUDIT_LEVELS.join(', ')}`),
    parse: choiceRule('audit-level', AUDIT_LEVELS),
    defaultHelp: 'Metadata with --audit-log',
    help: 'None, Metadata or Request. Request adds the request body; secret values are never written at any level',
    section: 'general',
  }),
  auditPolicyFile: flag({
    name: 'audit-policy-file',
    type: 'string',
    arg: '<file>',
    env: 'AGENTPLANE_AUDIT_POLICY_FILE',
    config: 'auditPolicyFile',
    checkConfig: pathKey('auditPolicyFile'),
    help: 'an audit.k8s.io/v1 Policy (YAML or JSON) as kube-apiserver reads: its rules, first match wins, set the level by user, group, verb, resource, namespace or path; --audit-level is the level when none matches. Read at start-up; a bad file stops it (needs --audit-log; docs/audit.md "Policy file")',
    section: 'general',
  }),
  secretsKeyFile: flag({
    name: 'secrets-key-file',
    type: 'string',
    arg: '<file>',
    env: 'AGENTPLANE_SECRETS_KEY_FILE',
    config: 'secretsKeyFile',
    checkConfig: pathKey('secretsKeyFile'),
    defaultHelp: '<data-dir>/secrets.key, created on first start',
    help: 'the key that encrypts stored secret values (AES-256-GCM): exactly 32 random bytes, mode 0600; a file named here must exist (head -c 32 /dev/urandom > f). Start-up stops on a key file of another size, one group or others may access, or a key other than the one the secrets were written with',
    section: 'general',
  }),
  plugins: flag<string[]>({
    name: 'plugins',
    type: 'string',
    arg: '<a,b>',
    env: 'AGENTPLANE_PLUGINS',
    emptyEnvIsValue: true,
    config: 'plugins',
    checkConfig: (v) => (Array.isArray(v) && v.every((p) => typeof p === 'string') ? undefined : '"plugins" must be an array of strings'),
    parse: listRule,
    defaultHelp: `${DEFAULT_PLUGINS.join(',')}; in Kubernetes mode ${DEFAULT_CLUSTER_PLUGINS.join(',')}`,
    help: 'plugins to load at boot, in order: built-in names or module paths',
    section: 'general',
  }),
  config: flag({
    name: 'config',
    type: 'string',
    arg: '<file>',
    env: 'AGENTPLANE_CONFIG',
    help: 'JSON config file (keys below); flags and variables override it',
    section: 'general',
  }),
  demo: flag<boolean>({
    name: 'demo',
    type: 'boolean',
    env: 'AGENTPLANE_DEMO',
    looseBoolEnv: true,
    default: false,
    help: 'start the built-in scripted model server and point agents at it, so agents really run tools without a model key',
    section: 'general',
  }),
  allowPrivateConnectorUrls: flag<boolean>({
    name: 'allow-private-connector-urls',
    type: 'boolean',
    env: 'AGENTPLANE_ALLOW_PRIVATE_CONNECTOR_URLS',
    config: 'allowPrivateConnectorUrls',
    checkConfig: boolKey('allowPrivateConnectorUrls'),
    default: false,
    help: 'let connectors point at loopback (127.0.0.0/8, ::1, localhost) and private addresses (10/8, 172.16/12, 192.168/16, fc00::/7); link-local and cloud metadata addresses are always refused',
    section: 'general',
  }),
  templates: flag<string[]>({
    name: 'templates',
    type: 'string',
    arg: '<a,b>',
    env: 'AGENTPLANE_TEMPLATES',
    emptyEnvIsValue: true,
    config: 'templates',
    checkConfig: templatesKey,
    parse: listRule,
    help: 'pod templates agents may name in templateRef besides "default" (each a DNS-1123 name); an agent naming another is refused (400/422, field templateRef). In the config file an entry may be {"name": "quick", "modelTaskDeadlineSeconds": 60}: that template\'s own model task deadline (default --model-task-deadline); "egress": "Open" (default), "Proxy" (only "egressAllow": ["host", "*.suffix"]) or "None": where its agents\' tools may connect',
    section: 'general',
  }),
  logLevel: flag({
    name: 'log-level',
    type: 'string',
    arg: '<lvl>',
    env: 'AGENTPLANE_LOG_LEVEL',
    emptyEnvIsValue: true,
    defaultHelp: 'info',
    help: 'trace, debug, info, warn, error',
    section: 'general',
  }),
  sandbox: flag({
    name: 'sandbox',
    type: 'string',
    arg: '<mode>',
    env: 'AGENTPLANE_SANDBOX',
    emptyEnvIsValue: true,
    config: 'sandbox',
    default: 'auto',
    parse: choiceRule('sandbox', SANDBOX_MODES),
    help: 'how agent workers and their tools are confined. auto: bubblewrap when it works here, else run unconfined with a warning; bwrap: bubblewrap or refuse to start; none: unconfined. Confined tools see only their workspace: no data directory (state, events, stored secrets), no other workspace, no other process',
    section: 'general',
  }),
  modelTaskDeadline: flag<number>({
    name: 'model-task-deadline',
    type: 'string',
    arg: '<seconds>',
    env: 'AGENTPLANE_MODEL_TASK_DEADLINE',
    emptyEnvIsValue: true,
    config: 'modelTaskDeadlineSeconds',
    defaultHelp: '600',
    help: 'how long after a task began the model proxy still retries a failed model request (429, 5xx, 529, timeout), with backoff, at most 8 times; a template may set its own (see --templates)',
    section: 'general',
    parse: (raw) => {
      const n = Number(raw);
      if (!(Number.isFinite(n) && n > 0)) throw new FlagError(`--model-task-deadline must be a positive number of seconds, got "${String(raw)}"`);
      return n;
    },
  }),
  rateLimit: flag({
    name: 'rate-limit',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_RATE_LIMIT',
    emptyEnvIsValue: true,
    config: 'rateLimit',
    parse: numberRule('rate-limit', (n) => Number.isFinite(n) && n >= 0, 'a number of requests per second, 0 for none'),
    defaultHelp: '100 with --token-file and in Kubernetes mode, off on the open loopback home',
    help: 'requests per second per user (per client address without a token file), a token bucket; over it: 429 TooManyRequests with Retry-After; 0 turns it off',
    section: 'general',
  }),
  rateLimitBurst: flag({
    name: 'rate-limit-burst',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_RATE_LIMIT_BURST',
    emptyEnvIsValue: true,
    config: 'rateLimitBurst',
    parse: numberRule('rate-limit-burst', positiveInt, 'a whole number of at least 1'),
    defaultHelp: 'twice the rate',
    help: 'requests at once after a quiet spell',
    section: 'general',
  }),
  writesPerTurn: flag({
    name: 'writes-per-turn',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_WRITES_PER_TURN',
    emptyEnvIsValue: true,
    config: 'writesPerTurn',
    parse: numberRule('writes-per-turn', wholeOrZero, 'a whole number, 0 for no limit'),
    defaultHelp: String(DEFAULT_WRITES_PER_TURN),
    help: "writes (POST, PUT, PATCH, DELETE) started per turn of the server's event loop; more wait for a later turn, the namespaces in rotation, so reads and other namespaces' writes never wait behind a burst; never refused; 0 turns it off",
    section: 'general',
  }),
  wsClientsPerAgent: flag({
    name: 'ws-clients-per-agent',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_WS_CLIENTS_PER_AGENT',
    emptyEnvIsValue: true,
    config: 'wsClientsPerAgent',
    parse: numberRule('ws-clients-per-agent', positiveInt, 'a whole number of at least 1'),
    defaultHelp: '100',
    help: 'live event WebSockets one agent may have at once; one more is refused with HTTP 429 before the upgrade',
    section: 'general',
  }),
  eventsPerAgent: flag({
    name: 'events-per-agent',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_EVENTS_PER_AGENT',
    emptyEnvIsValue: true,
    config: 'eventsPerAgent',
    parse: numberRule('events-per-agent', positiveInt, 'a whole number of at least 1'),
    defaultHelp: '10000',
    help: 'events kept per agent; the oldest are trimmed as new ones arrive',
    section: 'general',
  }),
  idleTimeout: flag({
    name: 'idle-timeout',
    type: 'string',
    arg: '<seconds>',
    env: 'AGENTPLANE_IDLE_TIMEOUT',
    emptyEnvIsValue: true,
    config: 'idleTimeoutSeconds',
    parse: numberRule('idle-timeout', (n) => Number.isFinite(n) && n >= 0, 'a number of seconds, 0 for never'),
    defaultHelp: '600; 0 never',
    help: "an agent (not in a squad) without a task this long gives back its worker and engine process (condition WorkerReady=False, reason Released); its next task starts them again and resumes the session; an agent's annotation agentplane.io/idle-timeout overrides it",
    section: 'general',
  }),
  maxWorkers: flag({
    name: 'max-workers',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_MAX_WORKERS',
    emptyEnvIsValue: true,
    config: 'maxWorkers',
    parse: numberRule('max-workers', wholeOrZero, 'a whole number, 0 for no limit'),
    defaultHelp: 'what the memory holds: 3/4 of it at 192 MiB each; 0 no limit',
    help: 'workers (each with its engine) that run at once with local workers; beyond, an agent waits (WorkerReady=False, reason Queued) and the worker idle the longest is released to make room. Pods are placed by the Kubernetes scheduler instead',
    section: 'general',
  }),
  workerNiceness: flag({
    name: 'worker-niceness',
    type: 'string',
    arg: '<0-19>',
    env: 'AGENTPLANE_WORKER_NICENESS',
    emptyEnvIsValue: true,
    config: 'workerNiceness',
    parse: numberRule('worker-niceness', (n) => Number.isInteger(n) && n >= 0 && n <= 19, 'a whole number from 0 to 19'),
    defaultHelp: '10',
    help: 'how much nicer than the server local workers run, their sessions too, so the API keeps the CPU while agents start; they then also yield to every other session on the machine: lower it (0: as the server) where that matters more (docs/decisions.md "Worker priority")',
    section: 'general',
  }),
  namespaceMaxWorkers: flag({
    name: 'namespace-max-workers',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_NAMESPACE_MAX_WORKERS',
    emptyEnvIsValue: true,
    config: 'namespaceMaxWorkers',
    parse: numberRule('namespace-max-workers', wholeOrZero, 'a whole number, 0 for no limit'),
    defaultHelp: '0, no limit',
    help: "workers that run at once in each namespace (both homes); beyond, an agent is Queued with its position in the namespace's line; a namespace's own cap is set in the config file's \"namespaces\" (docs/admission.md)",
    section: 'general',
  }),
  namespaceMaxTasks: flag({
    name: 'namespace-max-tasks',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_NAMESPACE_MAX_TASKS',
    emptyEnvIsValue: true,
    config: 'namespaceMaxTasks',
    parse: numberRule('namespace-max-tasks', wholeOrZero, 'a whole number, 0 for no limit'),
    defaultHelp: '0, no limit',
    help: 'tasks that run at once in each namespace (both homes); beyond, a task waits, its agent Queued, and starts in order (priority, then first come) as others end',
    section: 'general',
  }),
  startRate: flag({
    name: 'start-rate',
    type: 'string',
    arg: '<per-second>',
    env: 'AGENTPLANE_START_RATE',
    emptyEnvIsValue: true,
    config: 'startRate',
    parse: numberRule('start-rate', (n) => Number.isFinite(n) && n >= 0, 'a number of worker starts a second, 0 for no bound'),
    defaultHelp: '0, no bound',
    help: 'workers started a second at most (a burst of as many), so a burst of new agents does not take the CPU the API needs; beyond, an agent is Queued (reason StartRate) for the moment',
    section: 'general',
  }),
  warmPool: flag({
    name: 'warm-pool',
    type: 'string',
    arg: '<n>',
    env: 'AGENTPLANE_WARM_POOL',
    emptyEnvIsValue: true,
    config: 'warmPool',
    parse: numberRule('warm-pool', wholeOrZero, 'a whole number, 0 for none'),
    defaultHelp: '0, none',
    help: "local workers kept started ahead of any agent, engine included; a new agent (not in a squad) takes one, so its first task skips the start-up. Pods: a template's warmPool (docs/kubernetes-runtime.md)",
    section: 'general',
  }),
  kubeconfig: flag({
    name: 'kubeconfig',
    type: 'string',
    arg: '<file>',
    env: 'KUBECONFIG',
    emptyEnvIsValue: true,
    defaultHelp: 'in-cluster config',
    help: 'how to reach kube-apiserver',
    section: 'kubernetes',
  }),
  tlsCertFile: flag({
    name: 'tls-cert-file',
    type: 'string',
    arg: '<f>',
    env: 'AGENTPLANE_TLS_CERT_FILE',
    emptyEnvIsValue: true,
    help: 'serving certificate, PEM; required',
    section: 'kubernetes',
  }),
  tlsPrivateKeyFile: flag({
    name: 'tls-private-key-file',
    type: 'string',
    arg: '<f>',
    env: 'AGENTPLANE_TLS_PRIVATE_KEY_FILE',
    emptyEnvIsValue: true,
    help: 'its private key, PEM; required',
    section: 'kubernetes',
  }),
  runtime: flag({
    name: 'runtime',
    type: 'string',
    arg: '<kind>',
    env: 'AGENTPLANE_RUNTIME',
    parse: choiceRule('runtime', RUNTIME_KINDS),
    defaultHelp: 'kubernetes in this mode',
    help: 'where agents run: kubernetes (a pod, a workspace claim, a Secret and a ConfigMap per agent) or local (worker processes beside the server) (docs/kubernetes-runtime.md)',
    section: 'kubernetes',
  }),
  workerImage: flag({
    name: 'worker-image',
    type: 'string',
    arg: '<ref>',
    env: 'AGENTPLANE_WORKER_IMAGE',
    emptyEnvIsValue: true,
    parse: optional(String),
    defaultHelp: 'agentplane/worker:latest',
    help: 'the "default" template\'s image; template ConfigMaps may name others',
    section: 'kubernetes',
  }),
  workerImagePullPolicy: flag({
    name: 'worker-image-pull-policy',
    type: 'string',
    arg: '<p>',
    env: 'AGENTPLANE_WORKER_IMAGE_PULL_POLICY',
    emptyEnvIsValue: true,
    parse: optional(choiceRule('worker-image-pull-policy', ['Always', 'IfNotPresent', 'Never'] as const, 'Always, IfNotPresent or Never')),
    defaultHelp: 'IfNotPresent',
    help: 'Always, IfNotPresent or Never',
    section: 'kubernetes',
  }),
  installNamespace: flag({
    name: 'install-namespace',
    type: 'string',
    arg: '<ns>',
    env: 'AGENTPLANE_INSTALL_NAMESPACE',
    parse: matching('install-namespace', /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a namespace name'),
    defaultHelp: "$POD_NAMESPACE, the service account's namespace, the kubeconfig context's, or agentplane-system",
    help: 'where template ConfigMaps and the model Secret live',
    section: 'kubernetes',
  }),
  workerListen: flag({
    name: 'worker-listen',
    type: 'string',
    arg: '<host:port>',
    env: 'AGENTPLANE_WORKER_LISTEN',
    emptyEnvIsValue: true,
    parse: optional(hostPort),
    defaultHelp: '0.0.0.0:8081',
    help: 'where the worker listener (control channel and model proxy) binds',
    section: 'kubernetes',
  }),
  workerUrl: flag({
    name: 'worker-url',
    type: 'string',
    arg: '<url>',
    env: 'AGENTPLANE_WORKER_URL',
    emptyEnvIsValue: true,
    parse: optional(httpUrl),
    defaultHelp: 'http://agentplane-workers.<install namespace>.svc:<port>',
    help: 'the URL worker pods dial',
    section: 'kubernetes',
  }),
  workspaceSize: flag({
    name: 'workspace-size',
    type: 'string',
    arg: '<q>',
    env: 'AGENTPLANE_WORKSPACE_SIZE',
    emptyEnvIsValue: true,
    parse: optional(matching('workspace-size', /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/, 'a quantity such as 1Gi')),
    defaultHelp: '1Gi',
    help: "the default template's workspace claim size",
    section: 'kubernetes',
  }),
  storageClass: flag({
    name: 'storage-class',
    type: 'string',
    arg: '<c>',
    env: 'AGENTPLANE_STORAGE_CLASS',
    emptyEnvIsValue: true,
    parse: optional(String),
    defaultHelp: "the cluster's default class",
    help: "the default template's storage class",
    section: 'kubernetes',
  }),
  modelProxy: flag({
    name: 'model-proxy',
    type: 'string',
    arg: '<where>',
    env: 'AGENTPLANE_MODEL_PROXY',
    parse: optional(choiceRule('model-proxy', MODEL_PROXY_MODES)),
    defaultHelp: 'sidecar with the credential-mirror plugin and without --demo, else server',
    help: 'how pods reach the model: sidecar (a proxy in each pod holding the credential-mirror\'s Secret) or server (the server\'s proxy) (docs/kubernetes-runtime.md "Model proxy sidecar")',
    section: 'kubernetes',
  }),
  leaderElect: flag<boolean>({
    name: 'leader-elect',
    type: 'boolean',
    env: 'AGENTPLANE_LEADER_ELECT',
    default: false,
    help: 'several replicas: only the holder of a coordination.k8s.io Lease runs the reconcilers and serves workers; all serve the APIs (docs/high-availability.md)',
    section: 'kubernetes',
  }),
  leaseDuration: flag({
    name: 'leader-elect-lease-duration',
    type: 'string',
    arg: '<s>',
    env: 'AGENTPLANE_LEADER_ELECT_LEASE_DURATION',
    parse: seconds('leader-elect-lease-duration'),
    defaultHelp: '15',
    help: "seconds a leader's last renewal keeps the Lease from the others",
    section: 'kubernetes',
  }),
  renewDeadline: flag({
    name: 'leader-elect-renew-deadline',
    type: 'string',
    arg: '<s>',
    env: 'AGENTPLANE_LEADER_ELECT_RENEW_DEADLINE',
    parse: seconds('leader-elect-renew-deadline'),
    defaultHelp: '10',
    help: 'seconds the leader keeps trying to renew before it stops leading and exits',
    section: 'kubernetes',
  }),
  retryPeriod: flag({
    name: 'leader-elect-retry-period',
    type: 'string',
    arg: '<s>',
    env: 'AGENTPLANE_LEADER_ELECT_RETRY_PERIOD',
    parse: seconds('leader-elect-retry-period'),
    defaultHelp: '2',
    help: 'seconds between attempts to acquire or renew',
    section: 'kubernetes',
  }),
  leaseName: flag({
    name: 'leader-elect-resource-name',
    type: 'string',
    arg: '<name>',
    env: 'AGENTPLANE_LEADER_ELECT_RESOURCE_NAME',
    parse: matching('leader-elect-resource-name', /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'a DNS subdomain name'),
    defaultHelp: 'agentplane',
    help: "the Lease's name, in the install namespace",
    section: 'kubernetes',
  }),
};

/** The declarations in --help order. */
export const SERVE_FLAG_LIST: readonly Flag[] = Object.values(SERVE_FLAGS);

/** The OIDC flags, for the group check (serve-settings.ts). */
export const OIDC_FLAGS = [
  SERVE_FLAGS.oidcIssuerUrl,
  SERVE_FLAGS.oidcClientId,
  SERVE_FLAGS.oidcUsernameClaim,
  SERVE_FLAGS.oidcUsernamePrefix,
  SERVE_FLAGS.oidcGroupsClaim,
  SERVE_FLAGS.oidcGroupsPrefix,
  SERVE_FLAGS.oidcCaFile,
];

function templatesKey(v: unknown): string | undefined {
  if (!Array.isArray(v)) return '"templates" must be an array of names or {"name", "modelTaskDeadlineSeconds", "egress", "egressAllow"} objects';
  try {
    templateConfigs(v);
  } catch (err) {
    return `"templates": ${(err as Error).message}`;
  }
  return undefined;
}

function hostPort(raw: RawValue): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(String(raw));
  const port = m ? Number(m[2]) : NaN;
  if (!m || !m[1] || !(port >= 0 && port <= 65535)) throw new FlagError(`--worker-listen must be <host>:<port>, got "${String(raw)}"`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

function httpUrl(raw: RawValue): string {
  let url: URL | undefined;
  try {
    url = new URL(String(raw));
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) throw new FlagError(`--worker-url must be an http(s) URL, got "${String(raw)}"`);
  return String(raw).replace(/\/+$/, '');
}
