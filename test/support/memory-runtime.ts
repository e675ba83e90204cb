// An AgentRuntime that runs nothing: for controller and service unit tests. Workers are records
// that become Ready right after `ensure` (asynchronously, with a `ready` event, as a real worker
// dials in); a dispatched task reports task_started and then its scripted outcome; workspaces are
// an in-memory record, kept by `stop` and dropped by `remove`. It passes the same conformance
// suite as the real runtimes (test/conformance/runtime.ts).
//
// A task's outcome comes from `outcome` (settable), by default from directives in its
// instructions:
//   @hold            the task runs until it is cancelled (or the worker stops or crashes)
//   @fail <message>  the task ends with an `error` event
//   @crash           the worker exits (code 1) during the task
//   anything else    the task completes; the result is the text after `@say `, else "done"
//
// What a started worker does before it dials in comes from `startup` (settable), by default
// 'connect' (ready on a later turn); 'exit' exits (code 1) without ever connecting, as a worker
// that cannot start does; 'never' stays Starting until stopped or crashed.

import type { EventDraft } from '../../pkg/api/event.js';
import { type ObjectRef, refKey } from '../../pkg/api/meta.js';
import type { ApprovalHandover } from '../../pkg/api/worker-protocol.js';
import type { AgentRuntime, RuntimeEvent, TaskSpec, WorkerSpec, WorkerStatus } from '../../pkg/runtime/runtime.js';

export type TaskOutcome = { kind: 'complete'; result: string } | { kind: 'hold' } | { kind: 'fail'; message: string } | { kind: 'crash'; code?: number };

/** What a started worker does before it connects (see the header). */
export type WorkerStartup = 'connect' | 'exit' | 'never';

export interface MemoryRuntimeOptions {
  /** Decides what each dispatched task does; default `scriptedOutcome`. */
  outcome?: (task: TaskSpec, ref: ObjectRef) => TaskOutcome;
  /** Decides what each started worker does before connecting; default always 'connect'. */
  startup?: (spec: WorkerSpec) => WorkerStartup;
}

/** The default outcome: read from the directives in the task's instructions. */
export function scriptedOutcome(task: TaskSpec): TaskOutcome {
  const lines = task.instructions.split('\n').map((l) => l.trim());
  if (lines.includes('@hold')) return { kind: 'hold' };
  if (lines.includes('@crash')) return { kind: 'crash', code: 1 };
  const fail = lines.find((l) => l.startsWith('@fail'));
  if (fail !== undefined) return { kind: 'fail', message: fail.slice(5).trim() || 'scripted failure' };
  const say = lines.find((l) => l.startsWith('@say '));
  return { kind: 'complete', result: say ? say.slice(5) : 'done' };
}

interface Worker {
  ref: ObjectRef;
  uid: string;
  group: string | null;
  peers: string[];
  wakeIdle: boolean;
  incarnation: string;
  ready: boolean;
  runningTask?: number;
}

export class MemoryRuntime implements AgentRuntime {
  readonly name = 'memory';
  outcome: (task: TaskSpec, ref: ObjectRef) => TaskOutcome;
  startup: (spec: WorkerSpec) => WorkerStartup;
  /** Every task handed to a worker, in order. */
  readonly dispatched: { ref: ObjectRef; task: TaskSpec }[] = [];
  /** Every follow-up a running task took, in order. */
  readonly steered: { ref: ObjectRef; taskId: number; content: string }[] = [];
  readonly approved: ({ ref: ObjectRef; taskId: number } & ApprovalHandover)[] = [];
  readonly compacted: { ref: ObjectRef; taskId: number; instructions?: string }[] = [];
  /** Every ensure that started a worker, in order (a no-op ensure is not recorded). */
  readonly started: WorkerSpec[] = [];
  private readonly workers = new Map<string, Worker>();
  private readonly workspaces = new Set<string>();
  private readonly watchers = new Set<(ev: RuntimeEvent) => void>();
  private incarnations = 0;
  private closed = false;

  constructor(opts: MemoryRuntimeOptions = {}) {
    this.outcome = opts.outcome ?? scriptedOutcome;
    this.startup = opts.startup ?? (() => 'connect');
  }

  async ensure(spec: WorkerSpec): Promise<void> {
    const key = refKey(spec.ref);
    if (this.closed || this.workers.has(key)) return;
    this.workspaces.add(key);
    for (const peer of spec.peers ?? []) this.workspaces.add(refKey({ namespace: spec.ref.namespace, name: peer }));
    const w: Worker = {
      ref: { namespace: spec.ref.namespace, name: spec.ref.name },
      uid: spec.uid,
      group: spec.group ?? null,
      peers: spec.peers ?? [],
      wakeIdle: spec.wakeIdle === true,
      incarnation: `memory-${++this.incarnations}`,
      ready: false,
    };
    this.workers.set(key, w);
    this.started.push(spec);
    const startup = this.startup(spec);
    if (startup === 'never') return;
    // The worker "dials in" (or dies first) after ensure returns, as a real one does.
    this.later(w, () => {
      if (startup === 'exit') return this.crashNow(w, 1, null);
      w.ready = true;
      this.publish({ type: 'ready', ref: w.ref });
    });
  }

  async stop(ref: ObjectRef): Promise<void> {
    this.workers.delete(refKey(ref));
  }

  async remove(ref: ObjectRef): Promise<void> {
    await this.stop(ref);
    this.workspaces.delete(refKey(ref));
  }

  async status(ref: ObjectRef): Promise<WorkerStatus> {
    const w = this.workers.get(refKey(ref));
    if (!w) return { phase: 'Absent', group: null };
    return {
      phase: w.ready ? 'Ready' : 'Starting',
      group: w.group,
      incarnation: w.incarnation,
      ...(w.runningTask !== undefined ? { runningTask: w.runningTask } : {}),
    };
  }

  async dispatch(ref: ObjectRef, task: TaskSpec): Promise<boolean> {
    const w = this.workers.get(refKey(ref));
    if (!w?.ready) return false;
    w.runningTask = task.taskId;
    this.dispatched.push({ ref: w.ref, task });
    const outcome = this.outcome(task, w.ref);
    const stillRunning = (): boolean => this.workers.get(refKey(ref)) === w && w.runningTask === task.taskId;
    this.later(w, () => {
      if (!stillRunning()) return;
      this.report(w, task.taskId, { type: 'task_started', payload: { instructions: task.instructions } });
      this.later(w, () => {
        if (!stillRunning()) return;
        if (outcome.kind === 'hold') return;
        if (outcome.kind === 'crash') return this.crashNow(w, outcome.code ?? 1, null);
        w.runningTask = undefined;
        if (outcome.kind === 'fail') {
          this.report(w, task.taskId, { type: 'error', payload: { message: outcome.message, reason: 'EngineError' } });
        } else {
          this.report(w, task.taskId, { type: 'text', payload: { content: outcome.result } });
          this.report(w, task.taskId, {
            type: 'task_completed',
            payload: { result: outcome.result, cost_usd: 0, duration_ms: 1, turns: 1, stop_reason: 'end_turn', session_id: `session-${task.taskId}` },
          });
        }
      });
    });
    return true;
  }

  async cancel(ref: ObjectRef, taskId: number, reason: string): Promise<boolean> {
    const w = this.workers.get(refKey(ref));
    if (!w?.ready || w.runningTask !== taskId) return false;
    w.runningTask = undefined;
    this.later(w, () => this.report(w, taskId, { type: 'task_cancelled', payload: { reason } }));
    return true;
  }

  async steer(ref: ObjectRef, taskId: number, content: string, _timeoutMs: number): Promise<boolean | undefined> {
    const w = this.workers.get(refKey(ref));
    if (!w?.ready) return undefined;
    if (w.runningTask !== taskId) return false;
    this.steered.push({ ref: w.ref, taskId, content });
    this.later(w, () => this.report(w, taskId, { type: 'user_message', payload: { content } }));
    return true;
  }

  async compact(ref: ObjectRef, taskId: number, instructions: string | undefined, _timeoutMs: number): Promise<boolean | undefined> {
    const w = this.workers.get(refKey(ref));
    if (!w?.ready) return undefined;
    if (w.runningTask !== taskId) return false;
    this.compacted.push({ ref: w.ref, taskId, ...(instructions ? { instructions } : {}) });
    this.later(w, () => this.report(w, taskId, { type: 'context_compacted', payload: { trigger: 'manual', pre_tokens: 0 } }));
    return true;
  }

  async approve(ref: ObjectRef, taskId: number, d: ApprovalHandover, _timeoutMs: number): Promise<boolean | undefined> {
    const w = this.workers.get(refKey(ref));
    if (!w?.ready) return undefined;
    if (w.runningTask !== taskId) return false;
    this.approved.push({ ref: w.ref, taskId, ...d });
    return true;
  }

  watch(fn: (ev: RuntimeEvent) => void): () => void {
    this.watchers.add(fn);
    return () => void this.watchers.delete(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.workers.clear();
    this.watchers.clear();
  }

  // What tests look at and do (not part of AgentRuntime).

  /** The worker ends by itself: `disconnected`, then `exited` with `code`. False when none runs. */
  async crash(ref: ObjectRef, code = 137, signal: string | null = 'SIGKILL'): Promise<boolean> {
    const w = this.workers.get(refKey(ref));
    if (!w) return false;
    this.crashNow(w, code, signal);
    return true;
  }

  workspaceExists(ref: ObjectRef): boolean {
    return this.workspaces.has(refKey(ref));
  }

  /** Groups that are up: those with at least one worker. */
  groups(): string[] {
    return [...new Set([...this.workers.values()].flatMap((w) => (w.group ? [w.group] : [])))];
  }

  /** The spec a running worker was started with (peers, wakeIdle), undefined when none runs. */
  worker(ref: ObjectRef): { uid: string; group: string | null; peers: string[]; wakeIdle: boolean } | undefined {
    const w = this.workers.get(refKey(ref));
    return w && { uid: w.uid, group: w.group, peers: [...w.peers], wakeIdle: w.wakeIdle };
  }

  private crashNow(w: Worker, code: number | null, signal: string | null): void {
    if (this.workers.get(refKey(w.ref)) !== w) return;
    this.workers.delete(refKey(w.ref));
    if (w.ready) this.publish({ type: 'disconnected', ref: w.ref });
    this.publish({ type: 'exited', ref: w.ref, code, signal });
  }

  private report(w: Worker, taskId: number, event: EventDraft): void {
    this.publish({ type: 'event', ref: w.ref, uid: w.uid, taskId, event });
  }

  /** Runs `fn` on a later turn, unless the worker was stopped, removed or crashed meanwhile. */
  private later(w: Worker, fn: () => void): void {
    setImmediate(() => {
      if (!this.closed && this.workers.get(refKey(w.ref)) === w) fn();
    });
  }

  private publish(ev: RuntimeEvent): void {
    for (const fn of [...this.watchers]) fn(ev);
  }
}
