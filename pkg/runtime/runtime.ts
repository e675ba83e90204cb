// Where agents run, and the only way to a worker. Controllers start, stop and remove workers,
// hand them tasks, cancel and steer them, and learn that a worker connected, exited or reported
// an event, all through this one async interface. It says nothing about processes or pods:
// `local` runs a process group per agent (a pod supervisor process per squad), `kubernetes`
// (cluster home) runs pods, and a test runtime runs nothing at all. Every runtime passes the
// conformance suite in test/conformance/runtime.ts.

import type { Role } from '../api/agent.js';
import type { EventDraft } from '../api/event.js';
import type { ObjectRef } from '../api/meta.js';
import type { ApprovalHandover, TaskMessage } from '../api/worker-protocol.js';

export interface WorkerSpec {
  ref: ObjectRef;
  /** The agent's uid: the worker's credential is bound to this incarnation of the name. */
  uid: string;
  /** The group (a squad's pod) to run in; solo when absent. */
  group?: string;
  /** Members of the group (names in the agent's namespace) whose workspaces it may read. */
  peers?: string[];
  /** Start idle: serve, but do not re-run earlier instructions (AGENTPLANE_WAKE_IDLE). */
  wakeIdle?: boolean;
  /** The agent's pod template (`spec.templateRef`); runtimes without templates ignore it. */
  template?: string;
  /**
   * The agent's role: a manager orchestrates sub-agents through the API, so a runtime that can
   * gives it credentials for its own namespace (the Kubernetes runtime: a service account).
   */
  role?: Role;
}

/** A task to hand to a worker: the control channel's task message without its envelope. */
export type TaskSpec = Omit<TaskMessage, 'type'>;

export interface WorkerStatus {
  /** Absent: no worker. Starting: started, not connected yet. Ready: connected, takes tasks. */
  phase: 'Absent' | 'Starting' | 'Ready';
  /** The group the worker runs in; null when solo or absent. */
  group: string | null;
  /** The task the connected worker is running, if any. */
  runningTask?: number;
  /**
   * Changes whenever the worker is started anew (a process id, a container id): a group member
   * whose incarnation is unchanged was not restarted.
   */
  incarnation?: string;
}

export type RuntimeEvent =
  /** The worker connected (again); `runningTask` is the task it still runs after a reconnect. */
  | { type: 'ready'; ref: ObjectRef; runningTask?: number }
  /** The worker's connection closed; it may reconnect or exit. */
  | { type: 'disconnected'; ref: ObjectRef }
  /** The worker ended by itself (crash or exit), not because it was stopped through the runtime. */
  | { type: 'exited'; ref: ObjectRef; code: number | null; signal: string | null }
  /** An event of the task `taskId` of the agent incarnation `uid`. */
  | { type: 'event'; ref: ObjectRef; uid: string; taskId: number; event: EventDraft };

export interface AgentRuntime {
  readonly name: string;
  /**
   * Starts the agent's worker unless it already runs. Idempotent. Adding a worker to a running
   * group leaves the group's other workers untouched; the first worker creates the group.
   */
  ensure(spec: WorkerSpec): Promise<void>;
  /** Stops the worker; the workspace is kept. The group goes with its last worker. Idempotent. */
  stop(ref: ObjectRef): Promise<void>;
  /** Stops the worker and removes its workspace and credentials. Idempotent. */
  remove(ref: ObjectRef): Promise<void>;
  /** What runs for the agent now. */
  status(ref: ObjectRef): Promise<WorkerStatus>;
  /** Hands a task to a ready worker; false when it is not ready (a later `ready` retries). */
  dispatch(ref: ObjectRef, task: TaskSpec): Promise<boolean>;
  /** Asks the worker to cancel task `taskId`; false when no ready worker runs that task. */
  cancel(ref: ObjectRef, taskId: number, reason: string): Promise<boolean>;
  /**
   * A follow-up into the running task `taskId`: true when the task took it, false when it had
   * already ended, undefined when the worker is not ready or did not answer within `timeoutMs`.
   */
  steer(ref: ObjectRef, taskId: number, content: string, timeoutMs: number): Promise<boolean | undefined>;
  /**
   * Compacts the session of the running task `taskId` with the engine's own compaction, after
   * the turn in progress: answered as `steer` is (true taken, false the task had ended,
   * undefined no ready worker or no answer in time).
   */
  compact(ref: ObjectRef, taskId: number, instructions: string | undefined, timeoutMs: number): Promise<boolean | undefined>;
  /**
   * Hands the running task `taskId` a decision on one of its tool-call approvals: answered as
   * `steer` is (true taken, false nothing waited for it, undefined no ready worker or no answer).
   */
  approve(ref: ObjectRef, taskId: number, decision: ApprovalHandover, timeoutMs: number): Promise<boolean | undefined>;
  /** Subscribes to what workers report; returns the unsubscribe function. */
  watch(fn: (ev: RuntimeEvent) => void): () => void;
  /** Where the runtime keeps checkpoints of workspaces; absent: it cannot take any. */
  readonly checkpoints?: CheckpointStorage;
  close(): Promise<void>;
}

/**
 * Copies of agents' workspaces (their files and engine session, which lives there), taken and
 * restored by the checkpoint controller (pkg/controller/checkpoint-controller.ts) while no task
 * runs on the agent. `id` is "<namespace>/<checkpoint object name>".
 */
export interface CheckpointStorage {
  /**
   * Copies the agent's workspace as checkpoint `id`; a complete copy already there is kept.
   * `sessionId`: the engine session written last in the copy, when the runtime can tell.
   */
  take(id: string, ref: ObjectRef): Promise<{ bytes: number; sessionId?: string }>;
  /**
   * Replaces the agent `to`'s workspace with a copy of checkpoint `id`; the checkpoint is
   * untouched. `uid`, the agent's incarnation, owns a workspace the restore has to make.
   */
  restore(id: string, to: ObjectRef, uid?: string): Promise<void>;
  /** Removes checkpoint `id`. Idempotent. */
  remove(id: string): Promise<void>;
  /** The ids of the checkpoints kept, complete or not. */
  list(): Promise<string[]>;
}

/**
 * How a runtime gives a worker's engine access to the model without the model key: a base URL
 * (the server's model proxy) and a per-agent credential only that proxy accepts. The runtime
 * issues one when it starts a worker and revokes it when the worker stops or is removed.
 * Implemented by pkg/modelproxy; wired in cmd/agentplane/serve.ts.
 */
export interface ModelCredentialIssuer {
  /** Where the engine sends Messages API requests (its ANTHROPIC_BASE_URL). */
  baseUrl(): string;
  /** A fresh credential for the agent's next worker, bound to `uid`; earlier ones stop working. */
  issue(ref: ObjectRef, uid: string): string;
  /**
   * A report credential for the agent's current credential, for its pod's model-proxy sidecar
   * alone (never the worker's container): the server takes usage reports only with it.
   */
  issueReport?(ref: ObjectRef): string | undefined;
  /**
   * Accepts again a credential (and its sidecar's report credential, if any) issued earlier for
   * `uid` and stored with the worker (a pod's Secret), after the server restarted. Runtimes whose
   * workers outlive the server need it.
   */
  restore?(ref: ObjectRef, uid: string, credential: string, report?: string): void;
  /**
   * Hands the credential issued for `from` (a warm-pool slot) to the agent incarnation `uid` of
   * `to`; false when `from` has none. Runtimes with a warm pool need it.
   */
  rebind?(from: ObjectRef, to: ObjectRef, uid: string): boolean;
  /** Revokes the agent's credential. Idempotent. */
  revoke(ref: ObjectRef): void;
}
