// The agent controller: composes the parts that run agents, each in its own file.
//
//   agent-reconciler.ts  the level-triggered reconcile: worker wanted or not, where, task handed over
//   placement.ts         where an agent's worker should run (solo, its squad's group, nowhere)
//   cancel-handoff.ts    a cancel request acted on once: handed to the worker, or settled here
//   approval-handoff.ts  tool-call approvals: deadlines, decisions announced and handed to the worker
//   agent-workers.ts     starting, stopping and releasing workers within admission's caps (admission.ts)
//   event-ingest.ts      worker and service events -> event log -> status (task-status.ts), metering
//   task-recovery.ts     after a crash or restart: tasks that were running resume or are settled
//   agent-finalizer.ts   deletion: the running task cancelled, worker and stream removed, finalizer off
//   worker-ready.ts      the WorkerReady condition, written only when it changes
//
// This file routes the runtime's events to them and keeps the surface cmd/agentplane/serve.ts
// and the model proxy use (start, stop, idle, emit, taskEvent, failTask).
//
// It owns the WorkerReady condition and the task fields of the status (through the events it
// appends); `status` itself is derived by the agent strategy.

import { type Agent, isBusy, onlyMessageMoved } from '../api/agent.js';
import type { AgentEvent, EventDraft } from '../api/event.js';
import type { ObjectRef } from '../api/meta.js';
import type { Squad } from '../api/squad.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Hooks } from '../plugin/hooks.js';
import type { Informer } from '../registry/cache/informer.js';
import type { EventLog } from '../registry/event-log.js';
import type { Registry } from '../registry/registry.js';
import { memberNames, squadListing } from '../registry/squad/membership.js';
import type { AgentRuntime, RuntimeEvent } from '../runtime/runtime.js';
import type { AdmissionLimits } from './admission.js';
import { AgentFinalizer } from './agent-finalizer.js';
import { AgentReconciler } from './agent-reconciler.js';
import { ApprovalHandoff } from './approval-handoff.js';
import { AgentWorkers } from './agent-workers.js';
import { CancelHandoff } from './cancel-handoff.js';
import type { CopyHolds } from './checkpoint-controller.js';
import type { CheckpointRestore } from './checkpoint-restore.js';
import { EventIngest, type TaskUsageSource } from './event-ingest.js';
import { Controller } from './framework/controller.js';
import { placementFor } from './placement.js';
import { TaskRecovery } from './task-recovery.js';

export { DEFAULT_IDLE_TIMEOUT_MS } from './agent-workers.js';
export { streamOf, type TaskUsageSource } from './event-ingest.js';
export { WORKER_QUEUED } from './worker-ready.js';

const RESYNC_MS = 30_000;

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
  /** Override the time a running task's surviving worker has to reconnect (tests; task-recovery.ts). */
  resumeGraceMs?: number;
  /** Idle time after which a solo agent's worker (and engine) is released; 0 never. Default 10 min. */
  idleTimeoutMs?: number;
  /** The caps on workers and tasks, and the start rate (admission.ts); absent: none. */
  admission?: AdmissionLimits;
  /** Checkpoints: restored into agents started from one, and copied while their tasks wait. */
  checkpoints?: { restore: CheckpointRestore; holds: CopyHolds };
  /** Reads the clock (tests). */
  now?: () => number;
}

export class AgentController {
  readonly controller: Controller;
  private readonly ingest: EventIngest;
  private readonly workers: AgentWorkers;
  private readonly cancels: CancelHandoff;
  private readonly approvals: ApprovalHandoff;
  private readonly recovery: TaskRecovery;
  private unsubscribe?: () => void;
  private resync?: NodeJS.Timeout;
  /** Between start and stop: admission's counts follow the world only while this leads. */
  private running = false;

  constructor(private readonly d: AgentControllerDeps) {
    const { agents, squads } = d.informers;
    const enqueue = (ref: ObjectRef): void => this.controller.enqueue(ref);
    const emit = (agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined> => this.emit(agent, draft);
    this.ingest = new EventIngest({
      ...d,
      cache: agents,
      forgetTask: (agent) => {
        this.cancels.forget(agent.metadata);
        this.approvals.forget(agent.metadata);
        this.workers.forgetActivityOf(agent.metadata.uid);
      },
      enqueue,
    });
    this.workers = new AgentWorkers({ ...d, emit, enqueue });
    this.cancels = new CancelHandoff({ ...d, emit });
    this.approvals = new ApprovalHandoff({ ...d, emit });
    this.recovery = new TaskRecovery({ ...d, cache: agents, emit });
    const finalizer = new AgentFinalizer({ ...d, ingest: this.ingest, workers: this.workers, cancels: this.cancels });
    const reconciler = new AgentReconciler({ ...d, workers: this.workers, cancels: this.cancels, approvals: this.approvals, finalizer, ...d.checkpoints });
    this.controller = new Controller({ name: 'agent', logger: d.logger, reconcile: (ref) => reconciler.reconcile(ref) });
    // A member waking or sleeping decides whether its squad's group is up: its mates too.
    this.controller.watch(agents, (a) => [a.metadata, ...this.squadMates(a.metadata)], { ignoreUpdate: onlyMessageMoved });
    // A membership change moves workers.
    this.controller.watch(squads, (s) => memberNames(s).map((name) => ({ namespace: s.metadata.namespace, name })));
  }

  async start(): Promise<void> {
    await Promise.all([this.d.informers.agents.start(), this.d.informers.squads.start()]);
    this.workers.seed(this.d.informers.agents.list());
    await this.recovery.recover();
    this.unsubscribe = this.d.runtime.watch((ev) => this.onRuntimeEvent(ev));
    await this.controller.start();
    this.resync = setInterval(() => this.d.informers.agents.list().forEach((a) => this.controller.enqueue(a.metadata)), RESYNC_MS).unref();
    this.running = true;
  }

  stop(): void {
    this.running = false;
    this.recovery.stop();
    this.ingest.stop();
    if (this.resync) clearInterval(this.resync);
    this.unsubscribe?.();
    this.controller.stop();
  }

  /**
   * Why an agent given a task now would wait for a worker, when it holds none and a cap on
   * workers is reached (admission.ts `capReached`): admission (registry/admission/agent-line.ts)
   * stores it Queued with that write instead of this controller writing it a moment later.
   * Undefined when this controller is not running (another replica leads) or no cap is reached.
   */
  waitForWorker(agent: Agent): { reason: string; message: string } | undefined {
    if (!this.running || !isBusy(agent) || this.d.checkpoints?.restore.pending(agent)) return undefined;
    // A squad member may join its group's running worker: only a solo agent's start is decided here.
    const place = placementFor(this.d.informers, agent);
    const d = place.wanted && !place.group ? this.workers.capReached(agent) : undefined;
    return d && !d.admitted ? { reason: d.reason, message: d.message } : undefined;
  }

  /** Resolves when no reconcile is in flight. */
  idle(): Promise<void> {
    return this.controller.idle();
  }

  /** Appends a service-side event to an agent's stream (same path as worker events). */
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined> {
    return this.ingest.emit(agent, draft);
  }

  /**
   * Appends a service-side event to the agent incarnation's running task (a model retry);
   * undefined when no task of that incarnation is running.
   */
  async taskEvent(ref: ObjectRef, uid: string, draft: EventDraft): Promise<AgentEvent | undefined> {
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (!agent || agent.metadata.uid !== uid || !isBusy(agent)) return undefined;
    return this.ingest.ingest(ref, uid, agent.spec.task, draft);
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
    const ev = await this.ingest.ingest(ref, uid, task, { type: 'error', payload: error });
    if (ev) await this.d.runtime.cancel(ref, task, error.message);
  }

  private onRuntimeEvent(ev: RuntimeEvent): void {
    switch (ev.type) {
      case 'ready':
        this.workers.connected(ev.ref);
        this.recovery.connected(ev.ref);
        // A worker that connects again may have missed a cancel: hand it over once more.
        this.cancels.forget(ev.ref);
        this.controller.enqueue(ev.ref);
        break;
      case 'disconnected':
        this.controller.enqueue(ev.ref);
        break;
      case 'event':
        // ingest handles storage failures itself; anything else is logged, never left unhandled.
        void this.ingest
          .ingest(ev.ref, ev.uid, ev.taskId, ev.event)
          .catch((err: unknown) => this.d.logger.error({ ...ev.ref, err: String(err) }, 'handling a worker event failed'));
        break;
      case 'exited':
        void this.workers.exited(ev).catch((err: unknown) => this.d.logger.error({ ...ev.ref, err: String(err) }, 'handling a worker exit failed'));
        break;
    }
  }

  private squadMates(ref: ObjectRef): ObjectRef[] {
    const squad = squadListing(this.d.informers.squads, ref);
    return squad
      ? memberNames(squad)
          .map((name) => ({ namespace: ref.namespace, name }))
          .filter((m) => m.name !== ref.name)
      : [];
  }
}
