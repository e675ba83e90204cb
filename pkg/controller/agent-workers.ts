// The agents' workers as the agent controller starts, stops and releases them: admission before a
// start and before a task (admission.ts counts and orders; here the longest-idle worker is
// released to make room), the idle clock that releases a solo agent's worker (`--idle-timeout`),
// the start time (agentplane_worker_start_seconds, and the start a task then waits for, timed to
// its first model request by the meter) and the count of exits before a worker connected
// (agentplane_worker_start_failures_total), after which the agent is marked Failed.
//
// In memory only, all re-observed: admission's holders are rebuilt as the reconciler finds workers
// running (`hold`), the idle clock starts again at the first reconcile after a restart (a worker
// is released later, never sooner), and start failures count again from zero (a worker that
// keeps failing is judged again after MAX_START_FAILURES more exits).

import { type Agent, isBusy, QUEUED, WORKER_READY, WORKER_RELEASED } from '../api/agent.js';
import { idleTimeoutOf } from '../api/agent-annotations.js';
import { waiterOf } from '../api/agent-queue.js';
import { findCondition, setCondition } from '../api/condition.js';
import type { AgentEvent, EventDraft } from '../api/event.js';
import { type ObjectRef, parseRefKey, refKey } from '../api/meta.js';
import type { Squad } from '../api/squad.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics, WorkerStart } from '../observability/metrics.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import { squadListing } from '../registry/squad/membership.js';
import type { AgentRuntime, RuntimeEvent } from '../runtime/runtime.js';
import type { Result } from './framework/controller.js';
import { Admission, type AdmissionLimits, type Decision } from './admission.js';
import { setWorkerReady, TASK_LIMIT } from './worker-ready.js';

/** Consecutive worker exits without a connection before the agent is marked Failed. */
const MAX_START_FAILURES = 3;
/** How long a solo agent's worker may sit without a task before it is released (`--idle-timeout`). */
export const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;

export interface AgentWorkersDeps {
  agents: Registry<Agent>;
  informers: { agents: Informer<Agent>; squads: Informer<Squad> };
  runtime: AgentRuntime;
  metrics: Metrics;
  logger: Logger;
  /** Idle time after which a solo agent's worker (and engine) is released; 0 never. Default 10 min. */
  idleTimeoutMs?: number;
  /** The caps on workers and tasks, and the start rate (admission.ts). */
  admission?: AdmissionLimits;
  /** Reads the clock (tests). */
  now?: () => number;
  /** Appends a service-side event to the agent's current task (event-ingest.ts). */
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined>;
  /** Queues the agent's reconcile. */
  enqueue(ref: ObjectRef): void;
}

export class AgentWorkers {
  private admission: Admission;
  /** When the worker each agent waits for was asked for (agentplane_worker_start_seconds). */
  private readonly starting = new Map<string, { asked: number; start: WorkerStart }>();
  /** Each connected worker's start, until the task that waited for it is handed over (`takeStart`). */
  private readonly started = new Map<string, WorkerStart>();
  /** Consecutive exits of each agent's worker before it connected. */
  private readonly startFailures = new Map<string, number>();
  /** When each agent's worker last did something (by uid): connected, took a task, ended one. */
  private readonly lastActive = new Map<string, number>();

  constructor(private readonly d: AgentWorkersDeps) {
    this.admission = new Admission(d.admission ?? {});
    d.metrics.workerSlots.set(Math.max(0, this.admission.maxWorkers));
  }

  /**
   * Admission as the stored agents show it, when the controller starts (after a restart, or on
   * becoming leader): queued agents keep their places (their Queued conditions), agents whose
   * worker was up or starting hold their slots, and running tasks their places; each reconcile
   * then corrects what the world says otherwise.
   */
  seed(agents: Agent[]): void {
    this.admission = new Admission(this.d.admission ?? {});
    for (const a of agents) {
      const key = refKey(a.metadata);
      const q = findCondition(a.status.conditions, QUEUED);
      const ready = findCondition(a.status.conditions, WORKER_READY);
      if (q?.status === 'True') this.admission.seed([{ waiter: waiterOf(a), forTask: q.reason === TASK_LIMIT }]);
      if (ready?.status === 'True' || ready?.reason === 'Starting') this.admission.holdWorker(key);
      if (a.status.taskStatus === 'InProgress' && a.status.observedTask === a.spec.task) this.admission.holdTask(key);
    }
    this.settle();
  }

  /**
   * Admission of the agent's worker. When every slot is held, the worker idle the longest (a solo
   * agent with no task) is released to make room; when none is idle, the agent waits in line.
   */
  async takeSlot(agent: Agent, log: Logger): Promise<Decision> {
    const first = this.admission.takeWorker(waiterOf(agent));
    if (first.admitted || first.reason === 'StartRate') return this.settle(first);
    // Room within the namespace's cap comes from one of its own workers; within --max-workers, from any.
    const victim = await this.idlest(first.reason === 'NamespaceWorkerLimit' ? agent.metadata.namespace : undefined);
    if (!victim) return this.settle(first);
    await this.release(
      victim,
      first.reason === 'WorkerLimit'
        ? `no worker: released to make room for agent ${agent.metadata.name} (all ${this.admission.maxWorkers} workers were in use, --max-workers); the next task starts one`
        : `no worker: released to make room for agent ${agent.metadata.name} (namespace ${agent.metadata.namespace} was at its cap of workers); the next task starts one`,
    );
    log.info({ released: victim.metadata.name }, 'idle worker released to make room');
    return this.settle(this.admission.takeWorker(waiterOf(agent)));
  }

  /** The wait a reached cap on workers means for the agent now (admission.ts `capReached`); changes nothing. */
  capReached(agent: Agent): Decision | undefined {
    return this.admission.capReached(waiterOf(agent));
  }

  /** Admission of the agent's next task (the namespace's cap on running tasks). */
  takeTask(agent: Agent): Decision {
    return this.settle(this.admission.takeTask(waiterOf(agent)));
  }

  /** A task found running counts among its namespace's. */
  holdTask(ref: ObjectRef): void {
    this.admission.holdTask(refKey(ref));
  }

  /** The agent runs no task and waits for none: its place among running tasks goes to the next. */
  freeTask(ref: ObjectRef): void {
    this.wake(this.admission.freeTask(refKey(ref)));
  }

  /** A worker found running (a pod after a restart) holds a slot too. */
  hold(ref: ObjectRef): void {
    this.admission.holdWorker(refKey(ref));
  }

  /** The agent no longer wants a worker, or its worker is removed: its slot or place in line goes to the next. */
  giveUp(ref: ObjectRef): void {
    this.wake(this.admission.freeWorker(refKey(ref)));
  }

  /** The agent's worker was asked for: its start time counts from now. */
  starts(ref: ObjectRef, start: WorkerStart['start']): void {
    this.starting.set(refKey(ref), { asked: performance.now(), start: { start, at: (this.d.now ?? Date.now)() } });
  }

  /** The start of the agent's worker, once, for the task handed to it first (undefined after). */
  takeStart(ref: ObjectRef): WorkerStart | undefined {
    const key = refKey(ref);
    const start = this.started.get(key);
    this.started.delete(key);
    return start;
  }

  /** Stops the agent's worker and gives its slot to the next agent in line. */
  async stop(ref: ObjectRef): Promise<void> {
    this.starting.delete(refKey(ref));
    this.started.delete(refKey(ref));
    await this.d.runtime.stop(ref);
    this.giveUp(ref);
  }

  /** The agent's worker connected: its start is measured, its failures and idle time forgotten. */
  connected(ref: ObjectRef): void {
    const key = refKey(ref);
    const s = this.starting.get(key);
    if (s !== undefined) {
      this.d.metrics.workerStart.observe((performance.now() - s.asked) / 1000);
      this.started.set(key, s.start);
    }
    this.starting.delete(key);
    this.startFailures.delete(key);
    this.forgetActivity(ref);
  }

  /** The worker just did something: its idle time starts again. */
  forgetActivity(ref: ObjectRef): void {
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (agent) this.lastActive.delete(agent.metadata.uid);
  }

  /** The agent incarnation's task ended, or it is gone: its idle time starts again. */
  forgetActivityOf(uid: string): void {
    this.lastActive.delete(uid);
  }

  /**
   * A solo agent's worker with nothing to do is released after the idle timeout, or at once when
   * another agent waits for a worker slot (`--max-workers`): WorkerReady says
   * `Released` first (so placement stops wanting a worker), then the worker stops. Its next task
   * starts one again, which resumes the engine session from the workspace. Squad groups are left
   * alone: members share one process or pod, kept while any member is awake.
   */
  async releaseWhenIdle(agent: Agent, log: Logger): Promise<Result | void> {
    if (this.admission.holdsWorker(refKey(agent.metadata)) && this.admission.roomWanted(agent.metadata.namespace)) {
      // Another agent waits for a worker: this idle one makes room now.
      await this.release(agent, 'no worker: released to make room for a waiting agent (the workers allowed were in use); the next task starts one');
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

  /**
   * The agent's worker exited: a task it ran ends as an error; after MAX_START_FAILURES exits
   * without connecting the agent is marked Failed, and the task waiting for it ends as an error.
   */
  async exited(e: Extract<RuntimeEvent, { type: 'exited' }>): Promise<void> {
    const key = refKey(e.ref);
    if (this.starting.has(key)) this.d.metrics.workerStartFailures.inc();
    this.starting.delete(key);
    this.started.delete(key);
    const agent = await this.d.agents.get(e.ref.namespace, e.ref.name);
    if (!agent) return;
    if (agent.status.taskStatus === 'InProgress' && agent.status.observedTask === agent.spec.task) {
      await this.d.emit(agent, {
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
      if (waiting) await this.d.emit(agent, { type: 'error', payload: { message, reason: 'WorkerStartFailed' } });
      this.startFailures.delete(key);
    }
    this.d.enqueue(e.ref);
  }

  /** Releases an idle agent's worker: WorkerReady says `Released` first, then the worker stops. */
  private async release(agent: Agent, message: string): Promise<void> {
    await setWorkerReady(this.d.agents, agent, 'False', WORKER_RELEASED, message);
    await this.stop(agent.metadata);
    this.lastActive.delete(agent.metadata.uid);
    this.d.metrics.workersReleased.inc();
  }

  private wake(keys: string[]): void {
    this.settle();
    for (const key of keys) {
      this.d.enqueue(parseRefKey(key));
    }
  }

  private settle<T>(decision?: T): T {
    this.d.metrics.workersWaiting.set(this.admission.waiting);
    return decision as T;
  }

  /** The slot holder idle the longest: a solo agent whose worker is up with nothing to do. */
  private async idlest(inNamespace?: string): Promise<Agent | undefined> {
    let best: { agent: Agent; since: number } | undefined;
    for (const key of this.admission.workerHolders()) {
      const { namespace, name } = parseRefKey(key);
      if (inNamespace !== undefined && namespace !== inNamespace) continue;
      const a = this.d.informers.agents.get(namespace, name);
      if (!a || isBusy(a) || a.spec.task > a.status.observedTask || squadListing(this.d.informers.squads, a.metadata)) continue;
      const w = await this.d.runtime.status(a.metadata);
      if (w.phase !== 'Ready' || w.runningTask !== undefined) continue;
      const since = this.lastActive.get(a.metadata.uid) ?? Number.MAX_SAFE_INTEGER;
      if (!best || since < best.since) best = { agent: a, since };
    }
    return best?.agent;
  }
}

/** 600000 -> "10m", 90000 -> "1m30s", 2500 -> "2.5s". */
function formatDuration(ms: number): string {
  const m = Math.floor(ms / 60_000);
  const sec = (ms % 60_000) / 1000;
  return m && sec ? `${m}m${sec}s` : m ? `${m}m` : `${sec}s`;
}
