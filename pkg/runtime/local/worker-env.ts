// What a local worker is started with: its command (niced), its environment, and the secrets it
// gets over IPC instead.

import { otelEnv } from '../../observability/tracing.js';
import type { WorkerSpec } from '../runtime.js';

/** Workers (and squads' group supervisors) run at this niceness above the server's. */
export const WORKER_NICENESS = 10;

/**
 * The command run through nice(1), so the exec'ed process and everything it starts (bubblewrap,
 * the worker, the tools) inherit the niceness from the first instruction: setting it after
 * spawn would race with the sandbox forking the worker.
 */
export const niced = (argv: string[], n: number): string[] => (n > 0 ? ['nice', '-n', String(n), ...argv] : argv);

/** The niceness asked for, clamped to what nice(1) takes above the server's (0 to 19). */
export function clampNiceness(n: number | undefined): number {
  return Math.min(19, Math.max(0, Math.trunc(n ?? WORKER_NICENESS)));
}

export interface WorkerEnvOptions {
  /** The server's worker socket, when the worker is sandboxed with a network of its own. */
  socket: string | undefined;
  /** Where workers dial the control channel over TCP. */
  channelUrl: () => string;
  /** The model proxy's base URL. */
  modelBaseUrl: string;
}

/**
 * A worker's environment; a warm-pool slot's (no `spec`) names no agent. No secret: its control
 * token and model credential go over the IPC channel (`workerSecrets`), so they are in no process
 * environment a tool could read. A sandboxed worker reaches the server over its socket only.
 */
export function workerEnv(spec: WorkerSpec | undefined, workspace: string, o: WorkerEnvOptions): Record<string, string> {
  const socket = o.socket;
  const base = socket ? 'http://agentplane' : o.channelUrl();
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    ...(process.env.AGENTPLANE_LOG_LEVEL ? { AGENTPLANE_LOG_LEVEL: process.env.AGENTPLANE_LOG_LEVEL } : {}),
    AGENTPLANE_SERVER_URL: base,
    ...(socket ? { AGENTPLANE_SERVER_SOCKET: socket } : {}),
    AGENTPLANE_SECRETS: 'ipc',
    ...(spec ? { AGENTPLANE_NAMESPACE: spec.ref.namespace, AGENTPLANE_AGENT_NAME: spec.ref.name } : {}),
    AGENTPLANE_WORKSPACE: workspace,
    // The model proxy; the model key stays in the server.
    ANTHROPIC_BASE_URL: socket ? `${base}${new URL(o.modelBaseUrl).pathname}` : o.modelBaseUrl,
    ...(spec?.wakeIdle ? { AGENTPLANE_WAKE_IDLE: 'true' } : {}),
    // The server's OTEL_* settings: the worker exports its spans as the server does.
    ...otelEnv(),
  };
}

/** What a worker gets over its IPC channel (cmd/agentplane-worker reads it before anything else). */
export function workerSecrets(token: string, modelCredential: string): Record<string, string> {
  return { AGENTPLANE_AGENT_TOKEN: token, ANTHROPIC_API_KEY: modelCredential };
}
