// Where agents run. The controller acts on agents only through this interface; `local` runs a
// process group per agent, `kubernetes` (cluster home) runs pods.

import type { ObjectRef } from '../api/meta.js';

export interface WorkerSpec {
  ref: ObjectRef;
  /** Per-agent secret the worker presents on the control channel. */
  token: string;
  /** Where the worker dials the control channel. */
  serverUrl: string;
  /** The group (a squad's pod) to run in; solo when absent. */
  group?: string;
  /** Members of the group (names in the agent's namespace) whose workspaces it may read. */
  peers?: string[];
  /** Extra worker environment, e.g. AGENTPLANE_WAKE_IDLE. */
  env?: Record<string, string>;
}

export interface WorkerExit {
  ref: ObjectRef;
  code: number | null;
  signal: string | null;
}

export interface AgentRuntime {
  readonly name: string;
  /**
   * Starts the agent's worker unless it is already running. Idempotent. Adding a worker to a
   * running group leaves the group's other workers untouched; the first worker creates the group.
   */
  ensure(spec: WorkerSpec): Promise<void>;
  /** Stops the worker; the workspace is kept. The group goes with its last worker. Idempotent. */
  stop(ref: ObjectRef): Promise<void>;
  /** Where the worker runs: its group, null when solo, undefined when not running. */
  placement(ref: ObjectRef): string | null | undefined;
  /** Groups that are up (have at least one worker). */
  groups(): string[];
  /** The worker's process id, where the runtime has one (diagnostics and tests). */
  pid(ref: ObjectRef): number | undefined;
  /** Stops the worker and removes the workspace. Idempotent. */
  remove(ref: ObjectRef): Promise<void>;
  isRunning(ref: ObjectRef): boolean;
  /** The agent's persistent workspace (a directory, or a volume's mount path). */
  workspace(ref: ObjectRef): string;
  /** Called when a worker ends by itself (crash or exit), not when stopped through this interface. */
  onExit(fn: (exit: WorkerExit) => void): void;
  close(): Promise<void>;
}
