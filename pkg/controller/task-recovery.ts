// Crash recovery for the agent controller: at start (after a crash, a restart or a change of
// leader) the tasks the stored status shows running are judged. One whose worker still exists (a
// pod; the runtime adopted its credentials) gets the worker's reconnect to resume, within
// RESUME_GRACE_MS; any other cannot continue and is settled as an error (`Interrupted`).
// One whose tool call waited for approval (a worker that ended with the service) runs again on a
// new worker, carrying its approvals (RERUN_TASK_ANNOTATION).
// A WorkerReady left `True` by the previous run says `Starting` until the reconciler sees the worker.
//
// In memory only: the timers of the tasks waiting for their worker. Rebuilt from the store at each
// start, so a second restart judges such a task again.

import { type Agent, isBusy, WORKER_READY } from '../api/agent.js';
import { setRerun } from '../api/agent-annotations.js';
import { findCondition } from '../api/condition.js';
import type { AgentEvent, EventDraft } from '../api/event.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime } from '../runtime/runtime.js';
import { setWorkerReady } from './worker-ready.js';

/** A tool call of the task waits for a decision, or for its decision to reach the worker. */
const waitsForApproval = (a: Agent): boolean => !!a.status.approvals?.some((x) => x.task === a.spec.task && !x.handedOver);

/**
 * How long a task whose worker outlived the service (a pod, after a restart or a change of
 * leader) may take to come back before it is settled as interrupted: the worker's own give-up
 * time (pkg/worker/agent-worker.ts).
 */
const RESUME_GRACE_MS = 60_000;
/** After such a worker reconnects: how long its queued events may take to arrive before the task is judged. */
const RESUME_SETTLE_MS = 1_000;

export interface TaskRecoveryDeps {
  agents: Registry<Agent>;
  cache: Informer<Agent>;
  runtime: AgentRuntime;
  logger: Logger;
  /** Override RESUME_GRACE_MS (tests). */
  resumeGraceMs?: number;
  /** Appends a service-side event to the agent's current task (event-ingest.ts). */
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined>;
}

export class TaskRecovery {
  /** Tasks found running at start whose worker still exists: waiting for it to reconnect, per agent. */
  private readonly resuming = new Map<string, { uid: string; task: number; timer: NodeJS.Timeout }>();

  constructor(private readonly d: TaskRecoveryDeps) {}

  /** Judges the tasks that were running when the service stopped; see the top of this file. */
  async recover(): Promise<void> {
    const { items } = await this.d.agents.list();
    for (const a of items) {
      if (a.metadata.deletionTimestamp) continue;
      if (a.status.taskStatus === 'InProgress' && a.status.observedTask === a.spec.task) {
        const worker = await this.d.runtime.status(a.metadata);
        if (worker.phase !== 'Absent') this.awaitResume(a);
        else if (waitsForApproval(a)) await this.rerun(a);
        else await this.interrupted(a);
      }
      if (findCondition(a.status.conditions, WORKER_READY)?.status === 'True') {
        await setWorkerReady(this.d.agents, a, 'False', 'Starting', 'the service restarted');
      }
    }
  }

  stop(): void {
    for (const r of this.resuming.values()) clearTimeout(r.timer);
    this.resuming.clear();
  }

  /** The awaited worker connected: give its queued events a moment, then see whether its task goes on. */
  connected(ref: ObjectRef): void {
    const r = this.resuming.get(refKey(ref));
    if (!r) return;
    clearTimeout(r.timer);
    r.timer = setTimeout(() => void this.settleUnresumed(ref, r.uid, r.task), RESUME_SETTLE_MS);
    r.timer.unref();
  }

  /** A task whose tool call waited for approval is run again by a new worker, its approvals kept. */
  private async rerun(a: Agent): Promise<void> {
    await this.d.agents.update(a.metadata.namespace, a.metadata.name, (cur) => setRerun(cur, true));
    this.d.logger.info(
      { namespace: a.metadata.namespace, name: a.metadata.name, task: a.spec.task },
      'the task waited for approval: it runs again on a new worker',
    );
  }

  private interrupted(a: Agent): Promise<AgentEvent | undefined> {
    return this.d.emit(a, { type: 'error', payload: { message: 'the task was interrupted because the service restarted', reason: 'Interrupted' } });
  }

  private awaitResume(a: Agent): void {
    const key = refKey(a.metadata);
    const task = a.spec.task;
    const timer = setTimeout(() => void this.settleUnresumed(a.metadata, a.metadata.uid, task), this.d.resumeGraceMs ?? RESUME_GRACE_MS);
    timer.unref();
    this.resuming.set(key, { uid: a.metadata.uid, task, timer });
    this.d.logger.info({ namespace: a.metadata.namespace, name: a.metadata.name, task }, 'waiting for the worker of a running task to reconnect');
  }

  /** Settles the awaited task as interrupted unless its worker runs it or it ended meanwhile. */
  private async settleUnresumed(ref: ObjectRef, uid: string, task: number): Promise<void> {
    const key = refKey(ref);
    if (this.resuming.get(key)?.task !== task) return;
    this.resuming.delete(key);
    try {
      if ((await this.d.runtime.status(ref)).runningTask === task) {
        this.d.logger.info({ ...ref, task }, 'the worker resumed its running task');
        return;
      }
      const agent = this.d.cache.get(ref.namespace, ref.name);
      if (!agent || agent.metadata.uid !== uid || agent.spec.task !== task || !isBusy(agent)) return;
      await this.interrupted(agent);
    } catch (err) {
      this.d.logger.error({ ...ref, err: String(err) }, 'settling an interrupted task failed');
    }
  }
}
