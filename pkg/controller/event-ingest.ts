// The event ingestion pipeline of the agent controller: worker and service events go in, in order
// per agent; each is checked against the agent (its incarnation, its current task, not ended
// already), a task's end gets the model proxy's metered figures (task-usage.ts), it is appended
// to the event log, and the status follows (task-status.ts, through status-writer.ts). A task's
// end also counts in the metrics and tells the hooks. Storage faults are retried here for a
// task's end and dropped (logged) for other events.
//
// In memory only, a guard while the service runs: the last task that ended per agent (drops a
// worker's late events of it) and the timers of writes waiting for storage. A restart starts with
// neither; crash recovery (task-recovery.ts) judges every task the stored status shows running.

import { type Agent, isBusy } from '../api/agent.js';
import { approvalDeciders, DEFAULT_APPROVAL_TIMEOUT_SECONDS } from '../api/approval.js';
import type { AgentEvent, EventDraft, TaskSpend, TokenUsage } from '../api/event.js';
import { isTerminal } from '../api/event.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics, WorkerStart } from '../observability/metrics.js';
import type { Hooks, TaskOutcome } from '../plugin/hooks.js';
import type { Informer } from '../registry/cache/informer.js';
import type { EventLog } from '../registry/event-log.js';
import type { StreamRef } from '../registry/events.js';
import type { Registry } from '../registry/registry.js';
import { StatusWriter } from './status-writer.js';
import { meteredEnd, type TaskEnd } from './task-usage.js';
import { applyEvent, changesTaskState, movesMessage } from './task-status.js';

/** How soon, and at most how often, a task's end that storage refused is written again. */
const STORAGE_RETRY_MIN_MS = 500;
const STORAGE_RETRY_MAX_MS = 10_000;

/** Counts an agent's model tokens per task; the controller marks where tasks begin and end. */
export interface TaskUsageSource {
  /** The agent's task was handed to its worker; `template` (its templateRef) may set its retry deadline. */
  taskStarted(ref: ObjectRef, uid: string, template: string, start?: WorkerStart): void;
  /** The task ended: its tokens, if any were counted. */
  taskEnded(ref: ObjectRef, uid: string): TokenUsage | undefined;
  /** The running task's tokens by model (read just before `taskEnded`). */
  taskModels?(ref: ObjectRef, uid: string): Record<string, TokenUsage> | undefined;
}

export const streamOf = (a: Agent): StreamRef => ({
  namespace: a.metadata.namespace,
  name: a.metadata.name,
  uid: a.metadata.uid,
});

export interface EventIngestDeps {
  agents: Registry<Agent>;
  /** The agents informer: the checks read the cache, so appends keep call order. */
  cache: Informer<Agent>;
  events: EventLog;
  hooks: Hooks;
  metrics: Metrics;
  logger: Logger;
  taskUsage?: TaskUsageSource;
  /** A task ended and its status is written: forget what was kept for it (before the hooks run). */
  forgetTask(agent: Agent): void;
  /** Queues the agent's reconcile (after a task's end, once the hooks ran). */
  enqueue(ref: ObjectRef): void;
  /** Reads the clock (tests). */
  now?: () => number;
}

/** Approvals one task may have in its status at once; a worker asking for more is misbehaving. */
const MAX_APPROVALS_PER_TASK = 64;

/**
 * A worker's approval request completed from the agent's policy (the deadline, the default, who
 * may decide); undefined for one already recorded (a worker resending) or past the cap.
 */
function approvalRequest(agent: Agent, draft: EventDraft<'approval_requested'>, now: number): EventDraft<'approval_requested'> | undefined {
  const known = agent.status.approvals ?? [];
  if (known.some((a) => a.id === draft.payload.id) || known.length >= MAX_APPROVALS_PER_TASK) return undefined;
  const policy = agent.spec.approval;
  const seconds = policy?.timeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  const { id, tool, input } = draft.payload;
  const payload = {
    id,
    tool,
    input,
    expiresAt: new Date(now + seconds * 1000).toISOString(),
    onTimeout: policy?.onTimeout ?? 'deny',
    deciders: approvalDeciders(agent.metadata.namespace, agent.metadata.name),
  };
  return { ...draft, payload };
}

export class EventIngest {
  private readonly statusWriter: StatusWriter;
  /** The last task that ended, per agent (`uid:task`): later events of it are dropped. */
  private readonly ended = new Map<string, string>();
  /** Writes waiting for storage to recover. */
  private readonly retries = new Set<NodeJS.Timeout>();
  /** The last wait before such a write, per agent and step: it doubles while storage refuses. */
  private readonly backoff = new Map<string, number>();
  private stopped = false;

  constructor(private readonly d: EventIngestDeps) {
    this.statusWriter = new StatusWriter(
      (ref, events) =>
        d.agents.updateStatus(ref.namespace, ref.name, (s, a) => {
          if (a.metadata.uid === ref.uid) events.forEach((ev) => applyEvent(s, ev)); // not a re-created agent's
        }),
      (ref, err) => d.logger.warn({ ...ref, err: String(err) }, 'writing the task message failed'),
    );
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
    this.statusWriter.stop();
  }

  /** Appends a service-side event to the agent's current task (same path as worker events). */
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined> {
    return this.ingest(agent.metadata, agent.metadata.uid, agent.spec.task, draft);
  }

  /**
   * Worker and service events go through here, in order per agent: everything up to the append
   * is synchronous (the checks read the cache), so appends reach the store in call order, and
   * the store's group commit batches them (a burst of events is one commit, not one each). The
   * status follows through the StatusWriter, coalesced; the promise settles once the event is
   * stored and, when it changes the task's state (started, ended), that state is written.
   */
  ingest(ref: ObjectRef, uid: string, taskId: number, draft: EventDraft): Promise<AgentEvent | undefined> {
    // From the cache: a task is dispatched only once the cache shows it, so its events never
    // arrive ahead of it.
    const agent = this.d.cache.get(ref.namespace, ref.name);
    if (!agent || agent.metadata.uid !== uid || agent.metadata.deletionTimestamp) return Promise.resolve(undefined);
    if (taskId !== agent.spec.task) return Promise.resolve(undefined); // a stale event of an earlier task
    const key = refKey(ref);
    if (this.ended.get(key) === `${uid}:${taskId}`) return Promise.resolve(undefined); // the task already ended
    if (draft.type === 'approval_requested') {
      const request = approvalRequest(agent, draft as EventDraft<'approval_requested'>, this.d.now?.() ?? Date.now());
      if (!request) return Promise.resolve(undefined);
      draft = request;
    }
    if (isTerminal(draft.type)) {
      this.ended.set(key, `${uid}:${taskId}`);
      const byModel = this.d.taskUsage?.taskModels?.(ref, uid);
      const usage = this.d.taskUsage?.taskEnded(ref, uid);
      // Tokens and cost as the model proxy metered them, never as the worker claims.
      draft = meteredEnd(draft as TaskEnd, this.d.taskUsage ? { usage, byModel } : undefined);
    }
    return this.record(agent, { ...draft, task: taskId });
  }

  /**
   * An agent being deleted: its running task ends as cancelled, in turn with the worker's events
   * (appended in call order), which are dropped from now on. Safe to repeat.
   */
  async cancelForDeletion(agent: Agent): Promise<void> {
    const key = refKey(agent.metadata);
    const taskKey = `${agent.metadata.uid}:${agent.spec.task}`;
    if (!isBusy(agent) || this.ended.get(key) === taskKey) return;
    this.ended.set(key, taskKey);
    const ev = this.d.events.append(streamOf(agent), { type: 'task_cancelled', task: agent.spec.task, payload: { reason: 'the agent is being deleted' } });
    await this.statusWriter.add(streamOf(agent), await ev);
    this.d.metrics.tasks.inc({ outcome: 'cancelled' });
  }

  /** The agent is gone: nothing of it is kept. */
  forget(ref: ObjectRef): void {
    this.ended.delete(refKey(ref));
  }

  /**
   * Appends (called synchronously, keeping call order) and then writes the status the event
   * implies. An event storage refuses was never given a seq, so no client saw it: a task's end is
   * tried again until storage takes it (a full disk freed); other events are dropped.
   */
  private async record(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined> {
    const ref = streamOf(agent);
    const key = refKey(ref);
    let ev: AgentEvent;
    try {
      ev = await this.d.events.append(ref, draft);
    } catch (err) {
      const log = this.d.logger.child({ namespace: ref.namespace, name: ref.name, task: draft.task });
      if (!isTerminal(draft.type)) {
        log.error({ err: String(err), type: draft.type }, 'an event could not be stored and is dropped');
        return undefined;
      }
      this.ended.delete(key);
      this.retryLater(`${key}:end`, log.child({ type: draft.type }), 'the end of a task could not be stored', err, () =>
        this.ingest(ref, ref.uid, draft.task!, draft).then(() => undefined),
      );
      return undefined;
    }
    this.backoff.delete(`${key}:end`);
    if (!changesTaskState(ev)) {
      if (movesMessage(ev)) this.statusWriter.note(ref, ev);
      return ev;
    }
    await this.foldEvent(ref, ev);
    return ev;
  }

  /** Folds a stored event into the status; a task's end is folded in even if storage must recover first. */
  private async foldEvent(ref: StreamRef, ev: AgentEvent): Promise<void> {
    let updated: Agent;
    try {
      updated = await this.statusWriter.add(ref, ev);
    } catch (err) {
      const log = this.d.logger.child({ namespace: ref.namespace, name: ref.name, task: ev.task });
      if (!isTerminal(ev.type)) {
        log.error({ err: String(err), seq: ev.seq }, 'the status could not follow an event (the next one updates it)');
        return;
      }
      this.retryLater(`${refKey(ref)}:fold`, log, 'the status could not record the end of a task', err, async () => {
        const agent = this.d.cache.get(ref.namespace, ref.name);
        if (agent && agent.metadata.uid === ref.uid && agent.spec.task === ev.task && !agent.metadata.deletionTimestamp) await this.foldEvent(ref, ev);
      });
      return;
    }
    this.backoff.delete(`${refKey(ref)}:fold`);
    if (isTerminal(ev.type)) await this.taskEnded(updated, ev);
  }

  /**
   * Runs `fn` again later (it schedules its own next try if it fails again), waiting longer each
   * time for the same `key`, up to STORAGE_RETRY_MAX_MS, until it succeeds or the pipeline stops.
   */
  private retryLater(key: string, log: Logger, what: string, err: unknown, fn: () => Promise<void>): void {
    const delayMs = Math.min(STORAGE_RETRY_MAX_MS, (this.backoff.get(key) ?? STORAGE_RETRY_MIN_MS / 2) * 2);
    this.backoff.set(key, delayMs);
    log.error({ err: String(err), retryInMs: delayMs }, `${what}; retrying`);
    const t = setTimeout(() => {
      this.retries.delete(t);
      if (this.stopped) return;
      fn().catch((e: unknown) => this.retryLater(key, log, what, e, fn));
    }, delayMs);
    this.retries.add(t);
  }

  private async taskEnded(agent: Agent, ev: AgentEvent): Promise<void> {
    const outcome: TaskOutcome = ev.type === 'task_completed' ? 'completed' : ev.type === 'task_cancelled' ? 'cancelled' : 'error';
    this.d.metrics.tasks.inc({ outcome });
    if (ev.type === 'task_completed') this.d.metrics.taskDuration.observe((ev as AgentEvent<'task_completed'>).payload.duration_ms / 1000);
    // Every task's own cost, however it ended: the total is their sum.
    const cost = (ev.payload as TaskSpend).cost_usd;
    if (cost !== undefined && cost > 0) {
      this.d.metrics.cost.inc(cost);
      this.d.metrics.namespaceCost.inc({ namespace: agent.metadata.namespace }, cost);
    }
    this.d.forgetTask(agent);
    await this.d.hooks.notifyTaskEnded(agent, outcome);
    this.d.enqueue(agent.metadata);
  }
}
