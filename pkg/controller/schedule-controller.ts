// The schedule controller (docs/schedules.md): level-triggered, on the leader only. Each reconcile
// reads the schedule, its agent and the clock, finds what is due (schedule-due.ts), acts and
// records it in the schedule's status, then sleeps until the next due time.
//
// Every run goes the same way, so that a run is given once whichever replica leads and wherever
// a reconcile stops: (1) it is claimed in the schedule's status (`pendingRun`, with
// lastScheduleTime or lastTrigger moved on, one write); (2) the agent is given the task, the
// run's key noted on the agent in the same write (`agentplane.io/scheduled-run`); (3) the status
// records it Started and drops the claim. A reconcile that finds a claim whose key is already on
// the agent records (3) instead of giving the task again. A busy agent keeps the claim waiting
// (Allow; Replace after cancelling its task) or skips the run (Forbid).

import { type Agent, isBusy } from '../api/agent.js';
import { cancelRequested, requestCancel } from '../api/agent-annotations.js';
import { setCondition } from '../api/condition.js';
import { ApiError } from '../api/errors.js';
import type { ObjectRef } from '../api/meta.js';
import {
  type PendingRun,
  runKey,
  type RunOutcome,
  type Schedule,
  SCHEDULED_RUN_ANNOTATION,
  type ScheduleRun,
  type ScheduleStatus,
  TRIGGER_ANNOTATION,
} from '../api/schedule.js';
import type { Logger } from '../observability/logger.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import { Controller, type Result } from './framework/controller.js';
import { dueRun } from './schedule-due.js';

export interface ScheduleControllerDeps {
  schedules: Registry<Schedule>;
  agents: Registry<Agent>;
  informers: { schedules: Informer<Schedule>; agents: Informer<Agent> };
  logger: Logger;
  /** The clock (milliseconds since the epoch); a fake one in tests. */
  now?: () => number;
  /** The longest sleep between two reconciles of a schedule (a clock that jumps is caught up then). */
  maxSleepMs?: number;
}

const READY = 'Ready';
const ENDED: Record<string, RunOutcome> = { Complete: 'Complete', Error: 'Error', Cancelled: 'Cancelled' };
const iso = (d: Date | number): string => new Date(d).toISOString();

/** Writes only what changes: nothing when the status comes out equal. */
type StatusEdit = (s: ScheduleStatus) => void;

export class ScheduleController {
  readonly controller: Controller;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly d: ScheduleControllerDeps) {
    this.now = d.now ?? Date.now;
    this.log = d.logger;
    this.controller = new Controller({ name: 'schedule', logger: d.logger, reconcile: (ref) => this.reconcile(ref) });
    // Its own status writes change nothing it reads: a spec, an annotation (trigger) or a deletion does.
    this.controller.watch(d.informers.schedules, undefined, {
      ignoreUpdate: (old, obj) =>
        JSON.stringify([old.spec, old.metadata.annotations, old.metadata.deletionTimestamp]) ===
        JSON.stringify([obj.spec, obj.metadata.annotations, obj.metadata.deletionTimestamp]),
    });
    // An agent's task ending lets a waiting run start and settles the last run's outcome.
    this.controller.watch(d.informers.agents, (a) =>
      d.informers.schedules
        .list(a.metadata.namespace)
        .filter((s) => s.spec.agent === a.metadata.name)
        .map((s) => s.metadata),
    );
  }

  start(): Promise<void> {
    return this.controller.start();
  }

  stop(): void {
    this.controller.stop();
  }

  idle(): Promise<void> {
    return this.controller.idle();
  }

  async reconcile(ref: ObjectRef): Promise<Result> {
    // From storage, not the cache: what this controller wrote last must be what it reads, or a
    // cache a write behind would show a due time as not yet handled.
    const s = await this.d.schedules.get(ref.namespace, ref.name);
    if (!s || s.metadata.deletionTimestamp) return {};
    const now = new Date(this.now());
    let current = s;
    const agent = (): Agent | undefined => this.d.informers.agents.get(s.metadata.namespace, s.spec.agent);
    const edit = async (fn: StatusEdit): Promise<void> => {
      const next = structuredClone(current.status);
      fn(next);
      if (JSON.stringify(next) === JSON.stringify(current.status)) return;
      current = await this.d.schedules.updateStatus(ref.namespace, ref.name, (st) => {
        for (const k of Object.keys(st)) delete (st as Record<string, unknown>)[k];
        Object.assign(st, structuredClone(next));
      });
    };

    await edit((st) => settleOutcome(st, agent()));
    // A claim left by an earlier reconcile goes first: a new run waits behind it.
    if (current.status.pendingRun) await this.startPending(current, agent, edit);

    const trigger = current.metadata.annotations?.[TRIGGER_ANNOTATION];
    if (trigger && trigger !== current.status.lastTrigger) {
      await this.fire(current, agent(), { time: iso(now), trigger }, edit, (st) => (st.lastTrigger = trigger));
      if (current.status.pendingRun) await this.startPending(current, agent, edit);
    }

    const due = dueRun(current, now);
    if (due.kind === 'missed') {
      const reason = `missed: ${due.lateBySeconds}s late, past startingDeadlineSeconds (${current.spec.startingDeadlineSeconds}); not started late`;
      this.log.info({ namespace: ref.namespace, name: ref.name, time: iso(due.time) }, 'schedule run missed');
      await edit((st) => {
        st.lastScheduleTime = iso(due.time);
        st.lastRun = { time: iso(due.time), outcome: 'Missed', reason };
      });
    } else if (due.kind === 'run') {
      await this.fire(current, agent(), { time: iso(due.time) }, edit, (st) => (st.lastScheduleTime = iso(due.time)));
    }
    if (current.status.pendingRun) await this.startPending(current, agent, edit);

    const next = dueRun(current, new Date(this.now())).next;
    await edit((st) => {
      if (next) st.nextScheduleTime = iso(next);
      else delete st.nextScheduleTime;
      const a = agent();
      st.conditions = setCondition(
        st.conditions ?? [],
        a
          ? {
              type: READY,
              status: 'True',
              reason: current.spec.suspend ? 'Suspended' : 'Scheduled',
              message: current.spec.suspend ? 'suspended: no run fires' : `next run ${next ? iso(next) : 'never'}`,
            }
          : { type: READY, status: 'False', reason: 'AgentNotFound', message: `agent "${current.spec.agent}" does not exist in namespace "${ref.namespace}"` },
        () => iso(this.now()),
      );
    });
    if (!next) return {};
    // A little after the due time, so the clock reads it as come.
    return { requeueAfter: Math.min(Math.max(next.getTime() - this.now() + 5, 5), this.d.maxSleepMs ?? 3_600_000) };
  }

  /**
   * A run that came due (or was asked for): skipped on a busy agent under Forbid, else claimed
   * (pendingRun) in the same write that records it handled (`handled`).
   */
  private async fire(s: Schedule, agent: Agent | undefined, run: PendingRun, edit: (fn: StatusEdit) => Promise<void>, handled: StatusEdit): Promise<void> {
    const triggered = run.trigger !== undefined;
    const record = (outcome: RunOutcome, reason: string): Promise<void> =>
      edit((st) => {
        handled(st);
        st.lastRun = { time: run.time, outcome, reason, ...(triggered ? { triggered } : {}) };
      });
    const fields = { namespace: s.metadata.namespace, name: s.metadata.name, agent: s.spec.agent, time: run.time, triggered };
    if (!agent) {
      this.log.info(fields, 'schedule run failed: no such agent');
      return record('Failed', `agent "${s.spec.agent}" does not exist`);
    }
    if (s.status.pendingRun) return record('Skipped', `a run of ${s.status.pendingRun.time} is still waiting for the agent's task ${agent.spec.task} to end`);
    if (isBusy(agent) && s.spec.concurrencyPolicy === 'Forbid') {
      this.log.info({ ...fields, task: agent.spec.task }, 'schedule run skipped: agent busy (Forbid)');
      return record('Skipped', `agent "${s.spec.agent}" was busy with task ${agent.spec.task} (concurrencyPolicy Forbid)`);
    }
    const replacing = isBusy(agent) && s.spec.concurrencyPolicy === 'Replace' ? { replacing: agent.spec.task } : {};
    await edit((st) => {
      handled(st);
      st.pendingRun = { ...run, ...replacing };
    });
  }

  /** Gives the claimed run's task to the agent once it is idle (cancelling its task under Replace), and records it. */
  private async startPending(s0: Schedule, agentOf: () => Agent | undefined, edit: (fn: StatusEdit) => Promise<void>): Promise<void> {
    const pending = s0.status.pendingRun!;
    const { namespace, name } = s0.metadata;
    const key = runKey(name, pending.time);
    const triggered = pending.trigger !== undefined ? { triggered: true } : {};
    const started = (task: number): Promise<void> =>
      edit((st) => {
        delete st.pendingRun;
        st.lastRun = { time: pending.time, outcome: 'Started', task, ...triggered };
      });
    const agent = agentOf();
    if (!agent) {
      return edit((st) => {
        delete st.pendingRun;
        st.lastRun = { time: pending.time, outcome: 'Failed', reason: `agent "${s0.spec.agent}" does not exist`, ...triggered };
      });
    }
    if (agent.metadata.annotations?.[SCHEDULED_RUN_ANNOTATION] === key) return started(agent.spec.task);
    if (isBusy(agent)) return this.waitBehind(s0, agent, pending, edit);
    let given: Agent;
    try {
      given = await this.d.agents.update(namespace, s0.spec.agent, (a) => {
        if (a.metadata.annotations?.[SCHEDULED_RUN_ANNOTATION] === key) return;
        a.spec.instructions = s0.spec.instructions;
        a.spec.task += 1;
        a.metadata.annotations = { ...a.metadata.annotations, [SCHEDULED_RUN_ANNOTATION]: key };
      });
    } catch (err) {
      // Busy again (another client gave it a task first), or being deleted: the claim waits.
      if (err instanceof ApiError && err.reason === 'Conflict') return;
      throw err;
    }
    this.log.info({ namespace, name, agent: s0.spec.agent, task: given.spec.task, time: pending.time }, 'schedule run started');
    return started(given.spec.task);
  }

  private async waitBehind(s: Schedule, agent: Agent, pending: PendingRun, edit: (fn: StatusEdit) => Promise<void>): Promise<void> {
    const replace = pending.replacing !== undefined;
    if (replace && !cancelRequested(agent)) {
      await this.d.agents.update(s.metadata.namespace, s.spec.agent, (a) => {
        if (isBusy(a) && !cancelRequested(a)) requestCancel(a, `replaced by a run of schedule "${s.metadata.name}" (concurrencyPolicy Replace)`);
      });
    }
    const reason = replace
      ? `cancelling the agent's task ${agent.spec.task} (concurrencyPolicy Replace)`
      : `waiting for the agent's task ${agent.spec.task} to end (concurrencyPolicy Allow)`;
    const triggered = pending.trigger !== undefined ? { triggered: true } : {};
    await edit((st) => {
      if (st.lastRun?.time === pending.time && st.lastRun.outcome === 'Queued') return;
      st.lastRun = { time: pending.time, outcome: 'Queued', reason, ...triggered };
    });
  }
}

/** A Started run's outcome becomes its task's end once the agent shows it. */
function settleOutcome(st: ScheduleStatus, agent: Agent | undefined): void {
  const run: ScheduleRun | undefined = st.lastRun;
  if (!run || run.outcome !== 'Started' || run.task === undefined || !agent) return;
  if (agent.spec.task !== run.task || isBusy(agent)) return;
  const end = ENDED[agent.status.taskStatus];
  if (end) st.lastRun = { ...run, outcome: end };
}
