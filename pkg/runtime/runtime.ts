// Where agents run. The controller acts on agents only through this interface; `local` runs a
// process group per agent, `kubernetes` (cluster home) runs pods.

import type { ObjectRef } from '../api/meta.js';

export interface WorkerSpec {
  ref: ObjectRef;
  /** Per-agent secret the worker presents on the control channel. */
  token: string;
  /** Where the worker dials the control channel. */
  serverUrl: string;
}

export interface WorkerExit {
  ref: ObjectRef;
  code: number | null;
  signal: string | null;
}

export interface AgentRuntime {
  readonly name: string;
  /** Starts the agent's worker unless it is already running. Idempotent. */
  ensure(spec: WorkerSpec): Promise<void>;
  /** Stops the worker; the workspace is kept. Idempotent. */
  stop(ref: ObjectRef): Promise<void>;
  /** Stops the worker and removes the workspace. Idempotent. */
  remove(ref: ObjectRef): Promise<void>;
  isRunning(ref: ObjectRef): boolean;
  /** The agent's persistent workspace (a directory, or a volume's mount path). */
  workspace(ref: ObjectRef): string;
  /** Called when a worker ends by itself (crash or exit), not when stopped through this interface. */
  onExit(fn: (exit: WorkerExit) => void): void;
  close(): Promise<void>;
}
