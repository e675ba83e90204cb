// What `startServer` takes and what it returns: the service's settings (from flags, environment
// and config file in main.ts; directly from tests and benches) and the handle of a running server.

import type { Agent } from '../../pkg/api/agent.js';
import type { TemplateConfig } from '../../pkg/api/template-settings.js';
import type { AgentController } from '../../pkg/controller/agent-controller.js';
import type { CredentialRegistry, RetryPolicy } from '../../pkg/modelproxy/index.js';
import type { Logger } from '../../pkg/observability/logger.js';
import type { EventLog } from '../../pkg/registry/event-log.js';
import type { Registry } from '../../pkg/registry/registry.js';
import type { ChannelLimits } from '../../pkg/runtime/channel/limits.js';
import type { LocalRuntime } from '../../pkg/runtime/local/local-runtime.js';
import type { SandboxMode } from '../../pkg/runtime/local/sandbox.js';
import type { AgentRuntime } from '../../pkg/runtime/runtime.js';
import type { NamespaceLimits } from '../../pkg/api/namespace-limits.js';
import type { ScriptedModelProcess } from '../../pkg/scriptedmodel/index.js';
import type { HttpTimeouts } from '../../pkg/server/app.js';
import type { AuditLevel } from '../../pkg/server/audit/index.js';
import type { OidcOptions } from '../../pkg/server/auth/oidc.js';
import type { KubernetesHomeOptions } from './homes.js';
import type { PodOptions, RuntimeKind } from './runtimes.js';

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
  /** Writes started per turn of the event loop, the rest in later turns by namespace (pkg/server/write-turns.ts); 0 for no limit. */
  writesPerTurn?: number;
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
  /** How much nicer than the server local workers run (0 to 19; default 10, WORKER_NICENESS). */
  workerNiceness?: number;
  /** Workers that run at once in each namespace (both homes); 0 or absent no limit. */
  namespaceMaxWorkers?: number;
  /** Tasks that run at once in each namespace; 0 or absent no limit. */
  namespaceMaxTasks?: number;
  /** A namespace's own caps (the config file's "namespaces"), over the two above. */
  namespaceLimits?: Record<string, NamespaceLimits>;
  /** Worker starts a second at most; 0 or absent no bound. */
  startRate?: number;
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
  /** The demo's scripted model (`--demo`), in its own process. */
  model?: ScriptedModelProcess;
  /** Whether this replica runs the reconcilers now (always true without leader election). */
  isLeader(): boolean;
  close(): Promise<void>;
}
