// The agent reconciler. Level-triggered: each pass reads the agent and its squad from the shared
// informers and its worker from the runtime, computes what should be (worker running or not,
// where, task handed over or cancelled) and applies the difference. Safe to run twice and after
// a crash: a restarted service settles interrupted tasks and starts the workers that should run.
//
// It owns the WorkerReady condition and the task fields of the status (through the events it
// appends); `status` itself is derived by the agent strategy.

import {
  type Agent,
  cancelRequested,
  dropFollowUp,
  idleTimeoutOf,
  isBusy,
  onlyMessageMoved,
  pendingFollowUps,
  WORKER_READY,
  WORKER_RELEASED,
} from '../api/agent.js';
import { FINALIZER_AGENT_CLEANUP } from '../api/deletion.js';
import { ApiError } from '../api/errors.js';
import { type ConditionStatus, findCondition, setCondition } from '../api/condition.js';
import type { AgentEvent, EventDraft, TaskSpend, TokenUsage } from '../api/event.js';
import { isTerminal } from '../api/event.js';
import { type ObjectRef, parseRefKey, refKey } from '../api/meta.js';
import type { Squad } from '../api/squad.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Hooks, TaskOutcome } from '../plugin/hooks.js';
import type { Informer } from '../registry/cache/informer.js';
import type { EventLog } from '../registry/event-log.js';
import type { StreamRef } from '../registry/events.js';
import type { Registry } from '../registry/registry.js';
import { groupName, memberNames, squadListing } from '../registry/squad/membership.js';
import type { AgentRuntime, RuntimeEvent, TaskSpec, WorkerStatus } from '../runtime/runtime.js';
import { Controller, type Result } from './framework/controller.js';
import { StatusWriter } from './status-writer.js';
import { meteredEnd, type TaskEnd } from './task-usage.js';
import { applyEvent, changesTaskState, movesMessage } from './task-status.js';
import { WorkerSlots } from './worker-slots.js';

/** Consecutive worker exits without a connection before the agent is marked Failed. */
const MAX_START_FAILURES = 3;
const RESYNC_MS = 30_000;
/** How soon a cancel (or a stored follow-up) the worker could not take is tried again. */
const CANCEL_RETRY_MS = 500;
/** How long a worker may take to accept a stored follow-up. */
const STEER_TIMEOUT_MS = 10_000;
/**
 * How long a task whose worker outlived the service (a pod, after a restart or a change of
 * leader) may take to come back before it is settled as interrupted: the worker's own give-up
 * time (pkg/worker/agent-worker.ts).
 */
const RESUME_GRACE_MS = 60_000;
/** After such a worker reconnects: how long its queued events may take to arrive before the task is judged. */
const RESUME_SETTLE_MS = 1_000;
/** How soon, and at most how often, a task's end that storage refused is written again. */
const STORAGE_RETRY_MIN_MS = 500;
const STORAGE_RETRY_MAX_MS = 10_000;
/** How long a solo agent's worker may sit without a task before it is released (`--idle-timeout`). */
export const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;
/** How soon an agent waiting for a worker slot looks again, should no freed slot wake it first. */
const SLOT_RETRY_MS = 2_000;
/** Why an agent waits for its worker: every slot is held (`--max-workers`). */
export const WORKER_QUEUED = 'Queued';

export interface AgentControllerDeps {
  agents: Registry<Agent>;
  informers: { agents: Informer<Agent>; squads: Informer<Squad> };
  events: EventLog;
  runtime: AgentRuntime;
  hooks: Hooks;
  metrics: Metrics;
  logger: Logger;
  /** Model tokens per task (the model proxy's meter): added to task_completed as `usage`. */
  taskUsage?: TaskUsageSource;
  /** Override RESUME_GRACE_MS (tests). */
  resumeGraceMs?: number;
  /** Idle time after which a solo agent's worker (and engine) is released; 0 never. Default 10 min. */
  idleTimeoutMs?: number;
  /** At most this many workers at once (`--max-workers`); 0 or absent: no limit. */
  maxWorkers?: number;
  /** Reads the clock (tests). */
  now?: () => number;
}

/** Counts an agent's model tokens per task; the controller marks where tasks begin and end. */
export interface TaskUsageSource {
  /** The agent's task was handed to its worker; `template` (its templateRef) may set its retry deadline. */
  taskStarted(ref: ObjectRef, uid: string, template: string): void;
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

interface Placement {
  wanted: boolean;
  /** Not wanted because the idle worker was released (WorkerReady says so already). */
  released?: boolean;
  group?: string;
  peers?: string[];
}

/** The worker runs where it should not: not wanted, or in another group than wanted. */
const mustStop = (place: Placement, worker: WorkerStatus): boolean =>
  worker.phase !== 'Absent' && (!place.wanted || worker.group !== (place.group ?? null));

export class AgentController {
  readonly controller: Controller;
  private readonly statusWriter = new StatusWriter(
    (ref, events) =>
      this.d.agents.updateStatus(ref.namespace, ref.name, (s, a) => {
        if (a.metadata.uid === ref.uid) events.forEach((ev) => applyEvent(s, ev)); // not a re-created agent's
      }),
    (ref, err) => this.d.logger.warn({ ...ref, err: String(err) }, 'writing the task message failed'),
  );
  private readonly startFailures = new Map<string, number>();
  /** The task whose cancel was handed to the worker, per agent: a request is sent once. */
  private readonly cancelsSent = new Map<string, number>();
  /** The last task that ended, per agent (`uid:task`): later events of it are dropped. */
  private readonly ended = new Map<string, string>();
  /** Agents (by uid) being deleted whose worker and workspace are already removed. */
  private readonly cleanedUp = new Set<string>();
  /** Tasks found running at start whose worker still exists: waiting for it to reconnect, per agent. */
  private readonly resuming = new Map<string, { uid: string; task: number; timer: NodeJS.Timeout }>();
  /** When each agent's worker last did something (by uid): connected, took a task, ended one. */
  private readonly lastActive = new Map<string, number>();
  private unsubscribe?: () => void;
  private resync?: NodeJS.Timeout;
  /** Writes waiting for storage to recover. */
  private readonly retries = new Set<NodeJS.Timeout>();
  /** The last wait before such a write, per agent and step: it doubles while storage refuses. */
  private readonly backoff = new Map<string, number>();
  private stopped = false;
  private readonly slots: WorkerSlots;
  /** When the worker each agent waits for was asked for (agentplane_worker_start_seconds). */
  private readonly starting = new Map<string, number>();

  constructor(private readonly d: AgentControllerDeps) {
    const { agents, squads } = d.informers;
    this.slots = new WorkerSlots(d.maxWorkers ?? 0);
    d.metrics.workerSlots.set(Math.max(0, this.slots.limit));
    this.controller = new Controller({ name: 'agent', logger: d.logger, reconcile: (ref) => this.reconcile(ref) });
    // A member waking or sleeping decides whether its squad's group is up: its mates too.
    this.controller.watch(agents, (a) => [a.metadata, ...this.squadMates(a.metadata)], { ignoreUpdate: onlyMessageMoved });
    // A membership change moves workers.
    this.controller.watch(squads, (s) => memberNames(s).map((name) => ({ namespace: s.metadata.namespace, name })));
  }

  async start(): Promise<void> {
    await Promise.all([this.d.informers.agents.start(), this.d.informers.squads.start()]);
    await this.recoverInterruptedTasks();
    this.unsubscribe = this.d.runtime.watch((ev) => this.onRuntimeEvent(ev));
    await this.controller.start();
    this.resync = setInterval(() => this.d.informers.agents.list().forEach((a) => this.controller.enqueue(a.metadata)), RESYNC_MS).unref();
  }

  stop(): void {
    for (const r of this.resuming.values()) clearTimeout(r.timer);
    this.resuming.clear();
    this.stopped = true;
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
    if (this.resync) clearInterval(this.resync);
    this.unsubscribe?.();
    this.statusWriter.stop();
    this.controller.stop();
  }

  /** Resolves when no reconcile is in flight. */
  idle(): Promise<void> {
    return this.controller.idle();
  }

  /** Appends a service-side event to an agent's stream (same path as worker events). */
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined> {
    return this.ingest(agent.metadata, agent.metadata.uid, agent.spec.task, draft);
  }

  /**
   * Appends a service-side event to the agent incarnation's running task (a model retry);
   * undefined when no task of that incarnation is running.
   */
  async taskEvent(ref: ObjectRef, uid: string, draft: EventDraft): Promise<AgentEvent | undefined> {
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (!agent || agent.metadata.uid !== uid || !isBusy(agent)) return undefined;
    return this.ingest(ref, uid, agent.spec.task, draft);
  }

  /**
   * Ends the agent incarnation's running task from the service side (the model rejected the key,
   * or stayed unavailable): appends the `error` and asks the worker to stop the task. What the
   * worker reports for the task afterwards is dropped: the task ends once.
   */
  async failTask(ref: ObjectRef, uid: string, error: { message: string; reason: string }): Promise<void> {
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (!agent || agent.metadata.uid !== uid || !isBusy(agent)) return;
    const task = agent.spec.task;
    const ev = await this.ingest(ref, uid, task, { type: 'error', payload: error });
    if (ev) await this.d.runtime.cancel(ref, task, error.message);
  }

  private onRuntimeEvent(ev: RuntimeEvent): void {
    switch (ev.type) {
      case 'ready': {
        const asked = this.starting.get(refKey(ev.ref));
        if (asked !== undefined) this.d.metrics.workerStart.observe((performance.now() - asked) / 1000);
        this.starting.delete(refKey(ev.ref));
        this.startFailures.delete(refKey(ev.ref));
        this.judgeResumed(ev.ref);
        this.forgetActivity(ev.ref);
        // A worker that connects again may have missed a cancel: hand it over once more.
        this.cancelsSent.delete(refKey(ev.ref));
        this.controller.enqueue(ev.ref);
        break;
      }
      case 'disconnected':
        this.controller.enqueue(ev.ref);
        break;
      case 'event':
        // ingest handles storage failures itself; anything else is logged, never left unhandled.
        void this.ingest(ev.ref, ev.uid, ev.taskId, ev.event).catch((err: unknown) =>
          this.d.logger.error({ ...ev.ref, err: String(err) }, 'handling a worker event failed'),
        );
        break;
      case 'exited':
        void this.onWorkerExit(ev).catch((err: unknown) => this.d.logger.error({ ...ev.ref, err: String(err) }, 'handling a worker exit failed'));
        break;
    }
  }

  private squadMates(ref: ObjectRef): ObjectRef[] {
    const squad = squadListing(this.d.informers.squads, ref);
    return squad ? memberNames(squad).map((name) => ({ namespace: ref.namespace, name })).filter((m) => m.name !== ref.name) : [];
  }

  private async reconcile(ref: ObjectRef): Promise<Result | void> {
    const { runtime } = this.d;
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    const log = this.d.logger.child({ namespace: ref.namespace, name: ref.name });
    if (!agent) {
      await this.stopWorker(ref);
      return;
    }
    if (agent.metadata.deletionTimestamp) return this.finalize(agent, log);

    let worker = await runtime.status(ref);
    const cancel = await this.settleCancel(agent, worker);
    if (cancel === 'settled') return;
    // A cancel the worker could not take now (it is reconnecting) is tried again shortly.
    if (cancel === 'pending') return { requeueAfter: CANCEL_RETRY_MS };

    const asleep = agent.status.status === 'Sleeping';
    const failed = agent.status.status === 'Failed';
    const place = this.placementFor(agent);
    if (mustStop(place, worker)) {
      // Moving between solo and a group means a new worker: let a running task finish first.
      if (place.wanted && worker.runningTask !== undefined) return;
      // Stopping is the one step not cheaply undone, and the cache may lag a write (a wake just
      // sent): confirm against storage; when it disagrees, the event on its way reconciles again.
      const stored = await this.d.agents.get(ref.namespace, ref.name);
      if (stored && !stored.metadata.deletionTimestamp && !mustStop(this.placementFor(stored), worker)) return;
      if (!place.released) await this.setWorkerReady(agent, 'False', place.wanted ? 'Starting' : 'Stopped', place.wanted ? 'the worker is moving' : 'no worker is wanted');
      await this.stopWorker(ref);
      worker = { phase: 'Absent', group: null };
    }
    if (!place.wanted) {
      this.wake(this.slots.free(refKey(ref))); // a place in line given up
      if (!failed && !place.released) await this.setWorkerReady(agent, 'False', 'Stopped', asleep ? 'the agent is asleep' : 'no worker is wanted');
      return;
    }
    if (worker.phase === 'Absent') {
      if (!(await this.takeSlot(agent, log))) {
        // A stable message: one write when the agent lines up, not one each time the line moves.
        await this.setWorkerReady(agent, 'False', WORKER_QUEUED, `waiting for a worker: all ${this.slots.limit} allowed (--max-workers) are busy`);
        return { requeueAfter: SLOT_RETRY_MS };
      }
      this.starting.set(refKey(ref), performance.now());
      await runtime.ensure({
        ref,
        uid: agent.metadata.uid,
        template: agent.spec.templateRef,
        role: agent.spec.role,
        ...(place.group ? { group: place.group, peers: place.peers } : {}),
        ...(place.group && asleep ? { wakeIdle: true } : {}),
      });
      await this.setWorkerReady(agent, 'False', 'Starting', 'the worker is starting');
      return; // the worker's `ready` brings us back
    }
    this.slots.hold(refKey(ref)); // a worker found running (a pod after a restart) counts too
    if (worker.phase !== 'Ready') return;
    await this.setWorkerReady(agent, 'True', 'Connected', 'the worker is connected');
    if (worker.runningTask === agent.spec.task && !(await this.handFollowUps(agent, log))) return { requeueAfter: CANCEL_RETRY_MS };
    if (asleep || cancelRequested(agent)) return;
    if (agent.spec.task > agent.status.observedTask && worker.runningTask === undefined) return this.dispatch(agent, log);
    if (!place.group && worker.runningTask === undefined && !isBusy(agent)) return this.releaseWhenIdle(agent, log);
  }

  /**
   * Hands the follow-ups another replica stored on the agent to its running task, in order,
   * removing each once the worker took it (at least once: a follow-up taken just before this
   * replica stopped leading is handed over again by the next leader). False while the worker
   * cannot take one now (reconnecting): tried again shortly.
   */
  private async handFollowUps(agent: Agent, log: Logger): Promise<boolean> {
    const { namespace, name } = agent.metadata;
    const task = agent.spec.task;
    for (const f of pendingFollowUps(agent)) {
      const accepted = await this.d.runtime.steer(agent.metadata, task, f.content, STEER_TIMEOUT_MS);
      if (accepted === undefined) return false;
      // Taken, or the task ended meanwhile (stale: the REST call that stored it starts a new task).
      await this.d.agents.update(namespace, name, (a) => dropFollowUp(a, f.id));
      if (accepted) log.info({ task, followUp: f.id }, 'follow-up stored by another replica handed over');
    }
    return true;
  }

  /**
   * A solo agent's worker with nothing to do is released after the idle timeout, or at once when
   * another agent waits for a worker slot (`--max-workers`): WorkerReady says
   * `Released` first (so placement stops wanting a worker), then the worker stops. Its next task
   * starts one again, which resumes the engine session from the workspace. Squad groups are left
   * alone: members share one process or pod, kept while any member is awake.
   */
  private async releaseWhenIdle(agent: Agent, log: Logger): Promise<Result | void> {
    if (this.slots.waiting > 0 && this.slots.holds(refKey(agent.metadata))) {
      // Another agent waits for a worker: this idle one makes room now.
      await this.release(agent, `no worker: released to make room for a waiting agent (all ${this.slots.limit} workers were in use, --max-workers); the next task starts one`);
      log.info({}, 'idle worker released to make room');
      return;
    }
    const timeout = idleTimeoutOf(agent) ?? this.d.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (timeout <= 0) return;
    const now = (this.d.now ?? Date.now)();
    const uid = agent.metadata.uid;
    const since = this.lastActive.get(uid) ?? now;
    this.lastActive.set(uid, since);
    const left = since + timeout - now;
    if (left > 0) return { requeueAfter: left };
    await this.release(agent, `no worker: released after ${formatDuration(timeout)} without a task; the next task starts one`);
    log.info({ idleMs: now - since }, 'idle worker released');
  }

  /** Releases an idle agent's worker: WorkerReady says `Released` first, then the worker stops. */
  private async release(agent: Agent, message: string): Promise<void> {
    await this.setWorkerReady(agent, 'False', WORKER_RELEASED, message);
    await this.stopWorker(agent.metadata);
    this.lastActive.delete(agent.metadata.uid);
    this.d.metrics.workersReleased.inc();
  }

  /** Stops the agent's worker and gives its slot to the next agent in line. */
  private async stopWorker(ref: ObjectRef): Promise<void> {
    this.starting.delete(refKey(ref));
    await this.d.runtime.stop(ref);
    this.wake(this.slots.free(refKey(ref)));
  }

  private wake(keys: string[]): void {
    this.d.metrics.workersWaiting.set(this.slots.waiting);
    for (const key of keys) {
      this.controller.enqueue(parseRefKey(key));
    }
  }

  /**
   * A slot for the agent's worker. When all are held, the worker idle the longest (a solo agent
   * with no task) is released to make room; when none is idle, the agent waits in line.
   */
  private async takeSlot(agent: Agent, log: Logger): Promise<boolean> {
    const key = refKey(agent.metadata);
    if (this.slots.take(key)) return this.settleSlots(true);
    const victim = await this.idlest();
    if (!victim) return this.settleSlots(false);
    await this.release(victim, `no worker: released to make room for agent ${agent.metadata.name} (all ${this.slots.limit} workers were in use, --max-workers); the next task starts one`);
    log.info({ released: victim.metadata.name }, 'idle worker released to make room');
    return this.settleSlots(this.slots.take(key));
  }

  private settleSlots(taken: boolean): boolean {
    this.d.metrics.workersWaiting.set(this.slots.waiting);
    return taken;
  }

  /** The slot holder idle the longest: a solo agent whose worker is up with nothing to do. */
  private async idlest(): Promise<Agent | undefined> {
    let best: { agent: Agent; since: number } | undefined;
    for (const key of this.slots.held()) {
      const { namespace, name } = parseRefKey(key);
      const a = this.d.informers.agents.get(namespace, name);
      if (!a || isBusy(a) || a.spec.task > a.status.observedTask || squadListing(this.d.informers.squads, a.metadata)) continue;
      const w = await this.d.runtime.status(a.metadata);
      if (w.phase !== 'Ready' || w.runningTask !== undefined) continue;
      const since = this.lastActive.get(a.metadata.uid) ?? Number.MAX_SAFE_INTEGER;
      if (!best || since < best.since) best = { agent: a, since };
    }
    return best?.agent;
  }

  /** The worker just did something: its idle time starts again. */
  private forgetActivity(ref: ObjectRef): void {
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (agent) this.lastActive.delete(agent.metadata.uid);
  }

  /**
   * Acts on a cancel request for the current task: hands it to the worker running the task
   * (`sent`), or settles a task no worker has yet (`settled`). `pending` when the task was
   * handed over but its worker cannot take the cancel now; undefined when there is none to act on.
   */
  private async settleCancel(agent: Agent, worker: WorkerStatus): Promise<'sent' | 'settled' | 'pending' | undefined> {
    const request = cancelRequested(agent);
    if (!request || !isBusy(agent)) return undefined;
    const { namespace, name } = agent.metadata;
    const key = refKey(agent.metadata);
    const task = agent.spec.task;
    if (this.cancelsSent.get(key) === task) return 'sent';
    if (task > agent.status.observedTask && worker.runningTask !== task) {
      // Not handed to a worker: settle it here, so it is never dispatched.
      await this.d.agents.updateStatus(namespace, name, (s) => {
        s.observedTask = Math.max(s.observedTask, task);
      });
      await this.emit(agent, { type: 'task_cancelled', payload: { reason: request.reason } });
      return 'settled';
    }
    if (worker.runningTask === task && (await this.d.runtime.cancel(agent.metadata, task, request.reason))) {
      this.cancelsSent.set(key, task);
      return 'sent';
    }
    return 'pending';
  }

  /**
   * Where the agent's worker should run. A failed agent runs nowhere until a new task asks to
   * retry. A solo agent runs while awake. A squad member runs in
   * its squad's group while any member is awake (asleep members idle there); when all members
   * sleep, the group goes away.
   */
  private placementFor(agent: Agent): Placement {
    const { namespace, name } = agent.metadata;
    if (agent.status.status === 'Failed') return { wanted: false };
    const squad = squadListing(this.d.informers.squads, agent.metadata);
    if (!squad) {
      // Released while idle: no worker until a task comes (a pending one, or one running on a
      // worker that is still there, e.g. a pod that outlived a restart).
      const released = findCondition(agent.status.conditions, WORKER_READY)?.reason === WORKER_RELEASED && !isBusy(agent);
      if (released) return { wanted: false, released: true };
      return { wanted: agent.status.status !== 'Sleeping' };
    }
    const members = memberNames(squad);
    const awake = members.some((m) => {
      const a = m === name ? agent : this.d.informers.agents.get(namespace, m);
      return a && !a.metadata.deletionTimestamp && a.status.status !== 'Sleeping';
    });
    return { wanted: awake, group: groupName(namespace, squad.metadata.name), peers: members };
  }

  private async dispatch(agent: Agent, log: Logger): Promise<void> {
    const ref = agent.metadata;
    const task: TaskSpec = {
      taskId: agent.spec.task,
      instructions: agent.spec.instructions,
      ...(agent.spec.systemPrompt ? { systemPrompt: agent.spec.systemPrompt } : {}),
      model: agent.spec.model,
      role: agent.spec.role,
      ...(agent.status.sessionId ? { resume: agent.status.sessionId } : {}),
      mcpServers: await this.d.hooks.resolveMcpServers(agent),
    };
    this.d.taskUsage?.taskStarted(ref, agent.metadata.uid, agent.spec.templateRef);
    if (!(await this.d.runtime.dispatch(ref, task))) return; // not ready after all; the next `ready` retries
    await this.d.agents.updateStatus(ref.namespace, ref.name, (s) => {
      s.observedTask = Math.max(s.observedTask, task.taskId);
    });
    log.info({ task: task.taskId }, 'task dispatched');
  }

  /**
   * Worker and service events go through here, in order per agent: everything up to the append
   * is synchronous (the checks read the cache), so appends reach the store in call order, and
   * the store's group commit batches them (a burst of events is one commit, not one each). The
   * status follows through the StatusWriter, coalesced; the promise settles once the event is
   * stored and, when it changes the task's state (started, ended), that state is written.
   */
  private ingest(ref: ObjectRef, uid: string, taskId: number, draft: EventDraft): Promise<AgentEvent | undefined> {
    // From the cache: a task is dispatched only once the cache shows it, so its events never
    // arrive ahead of it.
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (!agent || agent.metadata.uid !== uid || agent.metadata.deletionTimestamp) return Promise.resolve(undefined);
    if (taskId !== agent.spec.task) return Promise.resolve(undefined); // a stale event of an earlier task
    const key = refKey(ref);
    if (this.ended.get(key) === `${uid}:${taskId}`) return Promise.resolve(undefined); // the task already ended
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
        const agent = this.d.informers.agents.get(ref.namespace, ref.name);
        if (agent && agent.metadata.uid === ref.uid && agent.spec.task === ev.task && !agent.metadata.deletionTimestamp) await this.foldEvent(ref, ev);
      });
      return;
    }
    this.backoff.delete(`${refKey(ref)}:fold`);
    if (isTerminal(ev.type)) await this.taskEnded(updated, ev);
  }

  /**
   * Runs `fn` again later (it schedules its own next try if it fails again), waiting longer each
   * time for the same `key`, up to STORAGE_RETRY_MAX_MS, until it succeeds or the controller stops.
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
    if (cost !== undefined && cost > 0) this.d.metrics.cost.inc(cost);
    this.cancelsSent.delete(refKey(agent.metadata));
    this.lastActive.delete(agent.metadata.uid);
    await this.d.hooks.notifyTaskEnded(agent, outcome);
    this.controller.enqueue(agent.metadata);
  }

  private async onWorkerExit(e: Extract<RuntimeEvent, { type: 'exited' }>): Promise<void> {
    const key = refKey(e.ref);
    this.starting.delete(key);
    const agent = await this.d.agents.get(e.ref.namespace, e.ref.name);
    if (!agent) return;
    if (agent.status.taskStatus === 'InProgress' && agent.status.observedTask === agent.spec.task) {
      await this.emit(agent, {
        type: 'error',
        payload: { message: `the agent's worker exited (code ${e.code}, signal ${e.signal}) during the task`, reason: 'WorkerLost' },
      });
    }
    const failures = (this.startFailures.get(key) ?? 0) + 1;
    this.startFailures.set(key, failures);
    if (failures >= MAX_START_FAILURES) {
      // Stop trying: the task waiting for this worker ends as an error, so only a new task retries.
      const message = `the worker exited ${failures} times before connecting (last code ${e.code}); send a new task to retry`;
      const waiting = agent.spec.task > agent.status.observedTask;
      await this.d.agents.updateStatus(e.ref.namespace, e.ref.name, (s) => {
        s.conditions = setCondition(s.conditions ?? [], { type: WORKER_READY, status: 'False', reason: 'StartFailed', message });
        if (waiting) s.observedTask = Math.max(s.observedTask, agent.spec.task);
      });
      if (waiting) await this.emit(agent, { type: 'error', payload: { message, reason: 'WorkerStartFailed' } });
      this.startFailures.delete(key);
    }
    this.controller.enqueue(e.ref);
  }

  /**
   * Tasks that were running when the service stopped (or the previous leader died): one whose
   * worker still exists (a pod; the runtime adopted its credentials) gets the worker's reconnect
   * to resume, within RESUME_GRACE_MS; any other cannot continue and is settled as an error.
   */
  private async recoverInterruptedTasks(): Promise<void> {
    const { items } = await this.d.agents.list();
    for (const a of items) {
      if (a.metadata.deletionTimestamp) continue;
      if (a.status.taskStatus === 'InProgress' && a.status.observedTask === a.spec.task) {
        const worker = await this.d.runtime.status(a.metadata);
        if (worker.phase !== 'Absent') this.awaitResume(a);
        else await this.interrupted(a);
      }
      if (findCondition(a.status.conditions, WORKER_READY)?.status === 'True') {
        await this.setWorkerReady(a, 'False', 'Starting', 'the service restarted');
      }
    }
  }

  private interrupted(a: Agent): Promise<AgentEvent | undefined> {
    return this.emit(a, { type: 'error', payload: { message: 'the task was interrupted because the service restarted', reason: 'Interrupted' } });
  }

  private awaitResume(a: Agent): void {
    const key = refKey(a.metadata);
    const task = a.spec.task;
    const timer = setTimeout(() => void this.settleUnresumed(a.metadata, a.metadata.uid, task), this.d.resumeGraceMs ?? RESUME_GRACE_MS);
    timer.unref();
    this.resuming.set(key, { uid: a.metadata.uid, task, timer });
    this.d.logger.info({ namespace: a.metadata.namespace, name: a.metadata.name, task }, 'waiting for the worker of a running task to reconnect');
  }

  /** The awaited worker connected: give its queued events a moment, then see whether its task goes on. */
  private judgeResumed(ref: ObjectRef): void {
    const r = this.resuming.get(refKey(ref));
    if (!r) return;
    clearTimeout(r.timer);
    r.timer = setTimeout(() => void this.settleUnresumed(ref, r.uid, r.task), RESUME_SETTLE_MS);
    r.timer.unref();
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
      const agent = this.d.informers.agents.get(ref.namespace, ref.name);
      if (!agent || agent.metadata.uid !== uid || agent.spec.task !== task || !isBusy(agent)) return;
      await this.interrupted(agent);
    } catch (err) {
      this.d.logger.error({ ...ref, err: String(err) }, 'settling an interrupted task failed');
    }
  }

  /**
   * An agent being deleted: its running task is cancelled and its worker and workspace removed at
   * once; its events stay readable while other finalizers hold it. When agentplane's finalizer is
   * the last one, the event stream goes and the finalizer is removed, which deletes the agent.
   * Every step is safe to repeat, so a service killed midway finishes after restart.
   */
  private async finalize(agent: Agent, log: Logger): Promise<void> {
    const ref = agent.metadata;
    const key = refKey(ref);
    const taskKey = `${agent.metadata.uid}:${agent.spec.task}`;
    if (isBusy(agent) && this.ended.get(key) !== taskKey) {
      // In turn with the worker's events (appended in call order), which are dropped from now on.
      this.ended.set(key, taskKey);
      const ev = this.d.events.append(streamOf(agent), { type: 'task_cancelled', task: agent.spec.task, payload: { reason: 'the agent is being deleted' } });
      await this.statusWriter.add(streamOf(agent), await ev);
      this.d.metrics.tasks.inc({ outcome: 'cancelled' });
    }
    if (!this.cleanedUp.has(agent.metadata.uid)) {
      await this.d.runtime.remove(ref);
      this.wake(this.slots.free(refKey(ref)));
      this.cleanedUp.add(agent.metadata.uid);
    }
    const finalizers = agent.metadata.finalizers ?? [];
    if (finalizers.some((f) => f !== FINALIZER_AGENT_CLEANUP)) return; // held by another: its removal brings us back
    await this.d.events.deleteStream(streamOf(agent));
    await this.d.hooks.notifyAgentDeleted(agent);
    // An agent marked before agentplane had a finalizer of its own carries none: delete it.
    if (finalizers.includes(FINALIZER_AGENT_CLEANUP)) await this.d.agents.removeFinalizer(ref.namespace, ref.name, FINALIZER_AGENT_CLEANUP);
    else await this.d.agents.delete(ref.namespace, ref.name).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
    });
    this.cancelsSent.delete(key);
    this.ended.delete(key);
    this.cleanedUp.delete(agent.metadata.uid);
    this.lastActive.delete(agent.metadata.uid);
    log.info('agent deleted');
  }

  /** Writes WorkerReady when it differs from what `agent` shows. */
  private async setWorkerReady(agent: Agent, status: ConditionStatus, reason: string, message: string): Promise<void> {
    const cur = findCondition(agent.status.conditions, WORKER_READY);
    if (cur?.status === status && cur.reason === reason && cur.message === message) return;
    await this.d.agents.updateStatus(agent.metadata.namespace, agent.metadata.name, (s) => {
      s.conditions = setCondition(s.conditions ?? [], { type: WORKER_READY, status, reason, message });
    });
  }
}

/** 600000 -> "10m", 90000 -> "1m30s", 2500 -> "2.5s". */
function formatDuration(ms: number): string {
  const m = Math.floor(ms / 60_000);
  const sec = (ms % 60_000) / 1000;
  return m && sec ? `${m}m${sec}s` : m ? `${m}m` : `${sec}s`;
}
