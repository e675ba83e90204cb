// The agent reconciler. Level-triggered: each pass reads the agent and its squad from the shared
// informers and its worker from the runtime, computes what should be (worker running or not,
// where: placement.ts; task handed over or cancelled: cancel-handoff.ts) and applies the
// difference. Safe to run twice and after a crash. An agent being deleted goes to
// agent-finalizer.ts; starting, stopping and releasing workers within the slots to
// agent-workers.ts.
//
// Nothing is kept here: each pass works from the cache, the store and the runtime.

import { type Agent, isBusy } from '../api/agent.js';
import { cancelRequested, dropFollowUp, pendingFollowUps, rerunRequested, setRerun, TRACEPARENT_ANNOTATION } from '../api/agent-annotations.js';
import type { ObjectRef } from '../api/meta.js';
import type { Squad } from '../api/squad.js';
import type { Logger } from '../observability/logger.js';
import { ATTR_RUNTIME, taskAttributes } from '../observability/trace-attributes.js';
import { spanUnder, traceparentOf } from '../observability/tracing.js';
import type { WorkerStart } from '../observability/metrics.js';
import type { Hooks } from '../plugin/hooks.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime, TaskSpec, WorkerStatus } from '../runtime/runtime.js';
import type { AgentFinalizer } from './agent-finalizer.js';
import { type ApprovalHandoff, workerReason } from './approval-handoff.js';
import type { AgentWorkers } from './agent-workers.js';
import type { CancelHandoff } from './cancel-handoff.js';
import type { CopyHolds } from './checkpoint-controller.js';
import type { CheckpointRestore } from './checkpoint-restore.js';
import type { TaskUsageSource } from './event-ingest.js';
import type { Result } from './framework/controller.js';
import { mustStop, type Placement, placementFor } from './placement.js';
import { admitted, setQueued, setWorkerReady } from './worker-ready.js';

/** How soon a cancel (or a stored follow-up) the worker could not take is tried again. */
const CANCEL_RETRY_MS = 500;
/** How long a worker may take to accept a stored follow-up. */
const STEER_TIMEOUT_MS = 10_000;
/** How soon a task held back while the agent's workspace is copied is tried again. */
const HOLD_RETRY_MS = 200;
/** How soon an agent waiting in line looks again, should no freed slot or task wake it first. */
const LINE_RETRY_MS = 10_000;

export interface AgentReconcilerDeps {
  agents: Registry<Agent>;
  informers: { agents: Informer<Agent>; squads: Informer<Squad> };
  runtime: AgentRuntime;
  hooks: Hooks;
  logger: Logger;
  taskUsage?: TaskUsageSource;
  workers: AgentWorkers;
  cancels: CancelHandoff;
  approvals: ApprovalHandoff;
  finalizer: AgentFinalizer;
  /** Agents started from a checkpoint get its copy before their first worker (checkpoint-restore.ts). */
  restore?: CheckpointRestore;
  /** Agents whose workspace is being copied: no task is handed over meanwhile. */
  holds?: CopyHolds;
}

export class AgentReconciler {
  constructor(private readonly d: AgentReconcilerDeps) {}

  async reconcile(ref: ObjectRef): Promise<Result | void> {
    const log = this.d.logger.child({ namespace: ref.namespace, name: ref.name });
    const result = await this.pass(ref, log);
    // The running task's approvals: deadlines, decisions to announce and hand over (approval-handoff.ts).
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (!agent?.status.approvals?.length || agent.metadata.deletionTimestamp) return result;
    const next = await this.d.approvals.settle(agent, log);
    if (next === undefined) return result;
    return { requeueAfter: Math.min(next, result?.requeueAfter ?? Infinity) };
  }

  private async pass(ref: ObjectRef, log: Logger): Promise<Result | void> {
    const agent = this.d.informers.agents.get(ref.namespace, ref.name);
    if (!agent) {
      await this.d.workers.stop(ref);
      return;
    }
    if (agent.metadata.deletionTimestamp) return this.d.finalizer.finalize(agent, log);

    let worker = await this.d.runtime.status(ref);
    const cancel = await this.d.cancels.settle(agent, worker);
    if (cancel === 'settled') return;
    // A cancel the worker could not take now (it is reconnecting) is tried again shortly.
    if (cancel === 'pending') return { requeueAfter: CANCEL_RETRY_MS };

    const place = placementFor(this.d.informers, agent);
    if (mustStop(place, worker)) {
      if (!(await this.stopMisplaced(ref, agent, place, worker))) return;
      worker = { phase: 'Absent', group: null };
    }
    if (!place.wanted) {
      this.d.workers.giveUp(ref); // a place in line given up
      if (agent.status.status !== 'Failed' && !place.released) {
        await this.workerReady(agent, 'Stopped', agent.status.status === 'Sleeping' ? 'the agent is asleep' : 'no worker is wanted');
      }
      return;
    }
    if (worker.phase === 'Absent') return this.startWorker(ref, agent, place, log);
    // Admission's count follows the world: a task running is held, none running (or waiting) is freed.
    if (worker.runningTask !== undefined) this.d.workers.holdTask(ref);
    else if (!(agent.spec.task > agent.status.observedTask)) this.d.workers.freeTask(ref);
    this.d.workers.hold(ref); // a worker found running (a pod after a restart) counts too
    if (worker.phase !== 'Ready') return;
    return this.useWorker(agent, place, worker, log);
  }

  /**
   * Stops a worker that runs where it should not; false when it stays for now (a running task
   * finishes before a move, or storage shows the agent wants it after all).
   */
  private async stopMisplaced(ref: ObjectRef, agent: Agent, place: Placement, worker: WorkerStatus): Promise<boolean> {
    // Moving between solo and a group means a new worker: let a running task finish first.
    if (place.wanted && worker.runningTask !== undefined) return false;
    // Stopping is the one step not cheaply undone, and the cache may lag a write (a wake just
    // sent): confirm against storage; when it disagrees, the event on its way reconciles again.
    const stored = await this.d.agents.get(ref.namespace, ref.name);
    if (stored && !stored.metadata.deletionTimestamp && !mustStop(placementFor(this.d.informers, stored), worker)) return false;
    if (!place.released) await this.workerReady(agent, place.wanted ? 'Starting' : 'Stopped', place.wanted ? 'the worker is moving' : 'no worker is wanted');
    await this.d.workers.stop(ref);
    return true;
  }

  /** Asks the runtime for the agent's worker once admitted; its `ready` brings us back. */
  private async startWorker(ref: ObjectRef, agent: Agent, place: Placement, log: Logger): Promise<Result | void> {
    if (this.d.restore?.pending(agent)) return this.d.restore.restore(agent, log);
    const decision = await this.d.workers.takeSlot(agent, log);
    if (!decision.admitted) {
      // A stable message: one write when the agent lines up, not one each time the line moves.
      await setQueued(this.d.agents, agent, decision.reason, decision.message, true);
      return { requeueAfter: decision.retryMs ?? LINE_RETRY_MS };
    }
    // Its first worker is a create's start; any later one (after a release, a sleep, a restart) a wake's.
    this.d.workers.starts(ref, agent.status.observedTask === 0 ? 'create' : 'wake');
    // Part of the pending task's trace (docs/tracing.md); a worker started for no task is in none.
    const traceparent = agent.spec.task > agent.status.observedTask ? agent.metadata.annotations?.[TRACEPARENT_ANNOTATION] : undefined;
    const attributes = { ...taskAttributes(ref.namespace, ref.name, agent.spec.task), [ATTR_RUNTIME]: this.d.runtime.name };
    await spanUnder(traceparent, 'agentplane.worker.start', attributes, () => this.ensureWorker(ref, agent, place));
    await this.workerReady(agent, 'Starting', 'the worker is starting');
  }

  private ensureWorker(ref: ObjectRef, agent: Agent, place: Placement): Promise<void> {
    return this.d.runtime.ensure({
      ref,
      uid: agent.metadata.uid,
      template: agent.spec.templateRef,
      role: agent.spec.role,
      ...(place.group ? { group: place.group, peers: place.peers } : {}),
      ...(place.group && agent.status.status === 'Sleeping' ? { wakeIdle: true } : {}),
    });
  }

  /** The worker is connected: hands it stored follow-ups, the next task, or releases it when idle. */
  private async useWorker(agent: Agent, place: Placement, worker: WorkerStatus, log: Logger): Promise<Result | void> {
    await setWorkerReady(this.d.agents, agent, 'True', 'Connected', 'the worker is connected');
    // The worker's start counts for a task handed over now; one that waits longer did not wait for it.
    const start = this.d.workers.takeStart(agent.metadata);
    if (worker.runningTask === agent.spec.task && !(await this.handFollowUps(agent, log))) return { requeueAfter: CANCEL_RETRY_MS };
    if (agent.status.status === 'Sleeping' || cancelRequested(agent)) return;
    if (agent.spec.task > agent.status.observedTask && worker.runningTask === undefined) return this.dispatch(agent, log, start);
    // A task that waited for approval when its worker ended with the service runs again (task-recovery.ts).
    if (rerunRequested(agent) && worker.runningTask === undefined) return this.dispatch(agent, log, start);
    if (!place.group && worker.runningTask === undefined && !isBusy(agent)) return this.d.workers.releaseWhenIdle(agent, log);
  }

  /** WorkerReady False with `reason`, written when it differs. */
  private workerReady(agent: Agent, reason: string, message: string): Promise<void> {
    return setWorkerReady(this.d.agents, agent, 'False', reason, message);
  }

  /**
   * Hands the follow-ups and compaction requests stored on the agent (by the REST service, on
   * any replica) to its running task, in order, removing each once the worker took it (at least
   * once: one taken just before this replica stopped leading is handed over again by the next
   * leader). False while the worker cannot take one now (reconnecting): tried again shortly.
   */
  private async handFollowUps(agent: Agent, log: Logger): Promise<boolean> {
    const { namespace, name } = agent.metadata;
    const task = agent.spec.task;
    for (const f of pendingFollowUps(agent)) {
      const accepted = f.compact
        ? await this.d.runtime.compact(agent.metadata, task, f.content || undefined, STEER_TIMEOUT_MS)
        : await this.d.runtime.steer(agent.metadata, task, f.content, STEER_TIMEOUT_MS);
      if (accepted === undefined) return false;
      // Taken, or the task ended meanwhile (stale: the REST call that stored it starts a new task).
      await this.d.agents.update(namespace, name, (a) => dropFollowUp(a, f.id));
      if (accepted) log.info({ task, followUp: f.id, compact: f.compact === true }, f.compact ? 'compaction request handed over' : 'follow-up handed over');
    }
    return true;
  }

  /** The dispatch, in the task's trace (the traceparent its assigning request left on the agent). */
  private dispatch(agent: Agent, log: Logger, start?: WorkerStart): Promise<Result | void> {
    const { namespace, name } = agent.metadata;
    const attributes = { ...taskAttributes(namespace, name, agent.spec.task), 'gen_ai.request.model': agent.spec.model };
    return spanUnder(agent.metadata.annotations?.[TRACEPARENT_ANNOTATION], 'agentplane.dispatch', attributes, () => this.dispatchTask(agent, log, start));
  }

  private async dispatchTask(agent: Agent, log: Logger, start?: WorkerStart): Promise<Result | void> {
    const ref = agent.metadata;
    if (this.d.holds?.has(ref)) return { requeueAfter: HOLD_RETRY_MS }; // a checkpoint is being copied
    const decision = this.d.workers.takeTask(agent);
    if (!decision.admitted) {
      await setQueued(this.d.agents, agent, decision.reason, decision.message, false);
      return { requeueAfter: LINE_RETRY_MS };
    }
    const task: TaskSpec = {
      taskId: agent.spec.task,
      instructions: agent.spec.instructions,
      ...(agent.spec.systemPrompt ? { systemPrompt: agent.spec.systemPrompt } : {}),
      model: agent.spec.model,
      role: agent.spec.role,
      ...(agent.status.sessionId ? { resume: agent.status.sessionId } : {}),
      mcpServers: await this.d.hooks.resolveMcpServers(agent),
      ...(agent.spec.approval ? { approval: agent.spec.approval } : {}),
      ...carriedApprovals(agent),
    };
    const attachments = await this.d.hooks.attachments?.(agent);
    if (attachments) task.attachments = attachments;
    const traceparent = traceparentOf();
    if (traceparent) task.traceparent = traceparent;
    this.d.taskUsage?.taskStarted(ref, agent.metadata.uid, agent.spec.templateRef, start);
    if (!(await this.d.runtime.dispatch(ref, task))) return; // not ready after all; the next `ready` retries
    await this.d.agents.updateStatus(ref.namespace, ref.name, (s) => {
      s.observedTask = Math.max(s.observedTask, task.taskId);
      s.conditions = admitted(s.conditions ?? []);
    });
    if (rerunRequested(agent)) await this.d.agents.update(ref.namespace, ref.name, (a) => setRerun(a, false));
    log.info({ task: task.taskId }, 'task dispatched');
  }
}

/** The approvals a task run again takes with it (its tool call repeated with the same input takes its approval). */
function carriedApprovals(agent: Agent): Pick<TaskSpec, 'carriedApprovals'> {
  const carried = (agent.status.approvals ?? [])
    .filter((a) => a.task === agent.spec.task && !a.handedOver)
    .map((a) => ({ id: a.id, tool: a.tool, input: a.input, ...(a.decision ? { decision: a.decision, reason: workerReason(a) } : {}) }));
  return carried.length ? { carriedApprovals: carried } : {};
}
