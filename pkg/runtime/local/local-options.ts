// What the local runtime (local-runtime.ts) is built with.

import type { Logger } from '../../observability/logger.js';
import type { ChannelLimits } from '../channel/limits.js';
import type { ModelCredentialIssuer } from '../runtime.js';
import type { Sandbox } from './sandbox.js';

export interface LocalRuntimeOptions {
  dataDir: string;
  logger: Logger;
  /**
   * The model proxy's endpoint and per-agent credentials: a worker gets only these, never the
   * model key (which stays in the server's proxy).
   */
  model: ModelCredentialIssuer;
  /** Grace period between SIGTERM and SIGKILL. */
  stopGraceMs?: number;
  /** Where workers' JSON log lines go; default the service's stdout. */
  logSink?: (line: string) => void;
  /** Confines each worker and its tools; default none. */
  sandbox?: Sandbox;
  /** Absolute path of the worker's entry script (cmd/agentplane-worker/main.js), run with node. */
  workerMain: string;
  /** The control channel's limits, where they differ from the defaults (a stand-in worker that outpaces any engine). */
  channelLimits?: Partial<ChannelLimits>;
  /** Where workers dial the control channel; known once the server listens. */
  channelUrl: () => string;
  /**
   * The server's worker socket (Unix): sandboxed workers get a network namespace of their own and
   * reach the server only through it (the control channel, the model proxy, the egress proxy).
   */
  workerSocket?: string;
  /**
   * How much nicer than the server workers run (0 to 19; default WORKER_NICENESS), so the API
   * keeps the CPU it needs while agents start and work (docs/decisions.md "Worker priority").
   */
  niceness?: number;
  /**
   * Workers kept started ahead of any agent for new solo agents to claim (0, the default: none).
   * Needs a model credential issuer that can `rebind`. docs/performance.md "Warm pool".
   */
  warmPool?: number;
  /** The warm pool's figures, as they change (Prometheus). */
  warmPoolMetrics?: { ready(n: number): void; claim(result: 'hit' | 'miss'): void };
}
