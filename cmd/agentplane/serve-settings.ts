// `agentplane serve`'s settings: each flag looked up (flag, variable, config file, default) and
// parsed by its declaration (serve-flags.ts), then the rules across flags, checked in the order a
// reader meets them in --help. Every problem is a FlagError whose message names the fix.

import { readFileSync } from 'node:fs';
import type { TemplateConfig } from '../../pkg/api/template-settings.js';
import { type NamespaceLimits, parseNamespaceLimits } from '../../pkg/api/namespace-limits.js';
import { DEFAULT_CLUSTER_PLUGINS, DEFAULT_PLUGINS } from '../../pkg/plugin/loader.js';
import type { OidcOptions } from '../../pkg/server/auth/oidc.js';
import { FlagError, lookup, type Sources } from './flag.js';
import type { LeaderElectionSettings, ServeOptions } from './options.js';
import type { PodOptions } from './runtimes.js';
import { OIDC_FLAGS, SERVE_FLAGS as F } from './serve-flags.js';

/** What the settings need that main.ts loads lazily (they pull in the server's modules). */
export interface SettingsDeps {
  checkOidcOptions(o: OidcOptions): void;
  /** Called when this replica lost the Lease (leader election). */
  onLeaseLost: () => void;
}

export function serveSettings(s: Sources, deps: SettingsDeps): ServeOptions {
  const port = lookup(F.port, s)!;
  const mode = lookup(F.mode, s)!;
  const plugins = lookup(F.plugins, s) ?? (mode === 'kubernetes' ? DEFAULT_CLUSTER_PLUGINS : DEFAULT_PLUGINS);
  const templates = (lookup(F.templates, s) ?? []) as (string | TemplateConfig)[];
  const level = lookup(F.logLevel, s);
  if (level) process.env.AGENTPLANE_LOG_LEVEL = level;
  const sandbox = lookup(F.sandbox, s)!;
  const deadline = lookup(F.modelTaskDeadline, s);
  const auth = authSettings(s, mode, deps);
  const limits = limitSettings(s);
  const cluster = clusterSettings(s, mode, deps);
  return {
    host: lookup(F.host, s)!,
    port,
    dataDir: lookup(F.dataDir, s)!,
    plugins,
    pluginOptions: s.config.pluginOptions as Record<string, unknown> | undefined,
    demo: lookup(F.demo, s)!,
    allowPrivateConnectorUrls: lookup(F.allowPrivateConnectorUrls, s)!,
    sandbox,
    templates,
    ...(deadline !== undefined ? { modelRetry: { taskDeadlineMs: deadline * 1000 } } : {}),
    ...auth,
    ...limits,
    ...cluster,
  };
}

/** Who may call: the token file, OIDC, /metrics, Host names, the audit log. */
function authSettings(s: Sources, mode: string, deps: SettingsDeps): Partial<ServeOptions> {
  const tokenFile = lookup(F.tokenFile, s);
  const secretsKeyFile = lookup(F.secretsKeyFile, s);
  // Default (undefined): /metrics needs a token whenever there is a token file.
  const metricsAuth = lookup(F.metricsAuth, s);
  if (mode === 'kubernetes' && tokenFile) throw new FlagError('--token-file is for embedded mode; Kubernetes mode delegates authentication to kube-apiserver');
  if (mode === 'embedded' && metricsAuth === true && !tokenFile)
    throw new FlagError('--metrics-auth needs --token-file (AGENTPLANE_TOKEN_FILE, config "tokenFile")');
  const allowedHosts = lookup(F.allowedHosts, s);
  const oidc = oidcSettings(s);
  if (oidc && mode === 'kubernetes')
    throw new FlagError('--oidc-* are for embedded mode; in Kubernetes mode configure OIDC on kube-apiserver, which authenticates for agentplane');
  if (oidc && !tokenFile) throw new FlagError('--oidc-issuer-url needs --token-file: its "grants" say what OIDC users and groups may do (docs/auth.md "OIDC")');
  if (oidc) {
    try {
      deps.checkOidcOptions(oidc);
    } catch (err) {
      throw new FlagError((err as Error).message);
    }
  }
  const auditLog = lookup(F.auditLog, s);
  const auditLevel = lookup(F.auditLevel, s);
  if (auditLevel !== undefined && auditLevel !== 'None' && !auditLog)
    throw new FlagError('--audit-level needs --audit-log (AGENTPLANE_AUDIT_LOG, config "auditLog")');
  const auditPolicyFile = lookup(F.auditPolicyFile, s);
  if (auditPolicyFile !== undefined && !auditLog) throw new FlagError('--audit-policy-file needs --audit-log (AGENTPLANE_AUDIT_LOG, config "auditLog")');
  return {
    ...(tokenFile ? { tokenFile } : {}),
    ...(oidc ? { oidc } : {}),
    ...(secretsKeyFile ? { secretsKeyFile } : {}),
    ...(metricsAuth !== undefined ? { metricsAuth } : {}),
    ...(allowedHosts?.length ? { allowedHosts } : {}),
    ...(auditLog
      ? { audit: { path: auditLog, ...(auditLevel ? { level: auditLevel } : {}), ...(auditPolicyFile ? { policyFile: auditPolicyFile } : {}) } }
      : {}),
  };
}

/** The OIDC settings; undefined when no issuer is given. */
function oidcSettings(s: Sources): OidcOptions | undefined {
  const out: Record<string, string> = {};
  for (const f of OIDC_FLAGS) {
    const v = lookup(f, s) as string | undefined;
    if (v !== undefined) out[f.config!.slice('oidc.'.length)] = v;
  }
  if (out.issuerUrl === undefined) {
    if (Object.keys(out).length) throw new FlagError('--oidc-* settings need --oidc-issuer-url');
    return undefined;
  }
  return { clientId: '', ...out } as unknown as OidcOptions;
}

/** Rate limits, sockets, events kept, idle time and the local workers' numbers. */
function limitSettings(s: Sources): Partial<ServeOptions> {
  const rateLimit = lookup(F.rateLimit, s);
  const rateLimitBurst = lookup(F.rateLimitBurst, s);
  const writesPerTurn = lookup(F.writesPerTurn, s);
  const wsClientsPerAgent = lookup(F.wsClientsPerAgent, s);
  const eventsPerAgent = lookup(F.eventsPerAgent, s);
  const idleTimeout = lookup(F.idleTimeout, s);
  const warmPool = lookup(F.warmPool, s);
  const maxWorkers = lookup(F.maxWorkers, s);
  const workerNiceness = lookup(F.workerNiceness, s);
  const namespaceMaxWorkers = lookup(F.namespaceMaxWorkers, s);
  const namespaceMaxTasks = lookup(F.namespaceMaxTasks, s);
  const startRate = lookup(F.startRate, s);
  return {
    ...(namespaceMaxWorkers !== undefined ? { namespaceMaxWorkers } : {}),
    ...(namespaceMaxTasks !== undefined ? { namespaceMaxTasks } : {}),
    ...(startRate !== undefined ? { startRate } : {}),
    ...namespaceLimitsOf(s.config.namespaces),
    ...(rateLimit !== undefined ? { rateLimit } : {}),
    ...(rateLimitBurst !== undefined ? { rateLimitBurst } : {}),
    ...(writesPerTurn !== undefined ? { writesPerTurn } : {}),
    ...(wsClientsPerAgent !== undefined ? { wsClientsPerAgent } : {}),
    ...(eventsPerAgent !== undefined ? { eventsPerAgent } : {}),
    ...(idleTimeout !== undefined ? { idleTimeoutMs: idleTimeout * 1000 } : {}),
    ...(maxWorkers !== undefined ? { maxWorkers } : {}),
    ...(workerNiceness !== undefined ? { workerNiceness } : {}),
    ...(warmPool !== undefined ? { warmPool } : {}),
  };
}

/**
 * The config file's "namespaces": each namespace's own caps, `{"team-a": {"maxWorkers": 2,
 * "maxTasks": 1}}` (docs/admission.md).
 */
function namespaceLimitsOf(v: unknown): Partial<ServeOptions> {
  if (v === undefined) return {};
  const where = 'config "namespaces"';
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new FlagError(`${where} must be an object of namespace -> {maxWorkers, maxTasks}`);
  const out: Record<string, NamespaceLimits> = {};
  for (const [ns, lim] of Object.entries(v as Record<string, unknown>)) {
    try {
      out[ns] = parseNamespaceLimits(lim, `${where}.${ns}`);
    } catch (err) {
      throw new FlagError((err as Error).message);
    }
  }
  return { namespaceLimits: out };
}

/** Kubernetes mode: TLS, the install namespace, leader election, the runtime and its pods. */
function clusterSettings(s: Sources, mode: string, deps: SettingsDeps): Partial<ServeOptions> {
  let kubernetes: ServeOptions['kubernetes'];
  if (mode === 'kubernetes') {
    const cert = lookup(F.tlsCertFile, s);
    const key = lookup(F.tlsPrivateKeyFile, s);
    if (!cert || !key) throw new FlagError('Kubernetes mode serves TLS: --tls-cert-file and --tls-private-key-file are required');
    const installNamespace = lookup(F.installNamespace, s);
    const kubeconfig = lookup(F.kubeconfig, s);
    kubernetes = { kubeconfig, tls: { cert: readPem(cert), key: readPem(key) }, ...(installNamespace ? { installNamespace } : {}) };
  }
  const leaderElection = leaderSettings(s, mode, deps);
  const runtime = lookup(F.runtime, s);
  if (runtime === 'kubernetes' && mode !== 'kubernetes')
    throw new FlagError('--runtime kubernetes needs --mode kubernetes (state and pods both live in the cluster)');
  return { ...(kubernetes ? { kubernetes } : {}), ...(runtime ? { runtime } : {}), pods: podSettings(s), ...(leaderElection ? { leaderElection } : {}) };
}

function leaderSettings(s: Sources, mode: string, deps: SettingsDeps): LeaderElectionSettings | undefined {
  const leaderElect = lookup(F.leaderElect, s);
  if (leaderElect && mode !== 'kubernetes') throw new FlagError('--leader-elect needs --mode kubernetes (the Lease lives in the cluster)');
  const ms = (n: number | undefined): number | undefined => (n === undefined ? undefined : n * 1000);
  const leaseDurationMs = ms(lookup(F.leaseDuration, s));
  const renewDeadlineMs = ms(lookup(F.renewDeadline, s));
  const retryPeriodMs = ms(lookup(F.retryPeriod, s));
  const name = lookup(F.leaseName, s);
  if (!leaderElect) return undefined;
  return {
    ...(name ? { name } : {}),
    ...(leaseDurationMs !== undefined ? { leaseDurationMs } : {}),
    ...(renewDeadlineMs !== undefined ? { renewDeadlineMs } : {}),
    ...(retryPeriodMs !== undefined ? { retryPeriodMs } : {}),
    // As controller-runtime's managers: a replica that lost the Lease exits, and Kubernetes
    // restarts it as a candidate.
    onLost: deps.onLeaseLost,
  };
}

/** The Kubernetes runtime's flags; each absent when not given. */
function podSettings(s: Sources): PodOptions {
  const image = lookup(F.workerImage, s);
  const imagePullPolicy = lookup(F.workerImagePullPolicy, s);
  const listen = lookup(F.workerListen, s);
  const workerUrl = lookup(F.workerUrl, s);
  const workspaceSize = lookup(F.workspaceSize, s);
  const storageClass = lookup(F.storageClass, s);
  const modelProxy = lookup(F.modelProxy, s);
  return {
    ...(image ? { image } : {}),
    ...(imagePullPolicy ? { imagePullPolicy } : {}),
    ...(listen ? { listenHost: listen.host, listenPort: listen.port } : {}),
    ...(workerUrl ? { workerUrl } : {}),
    ...(workspaceSize ? { workspaceSize } : {}),
    ...(storageClass ? { storageClass } : {}),
    ...(modelProxy ? { modelProxy } : {}),
  };
}

function readPem(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new FlagError(`cannot read ${path}: ${(err as Error).message}`);
  }
}
