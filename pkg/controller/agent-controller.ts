// The agent reconciler. Level-triggered: each pass reads the agent, its worker and its
// connection, computes what should be (worker running or not, task handed over or not) and
// applies the difference. Safe to run twice and after a crash: a restarted service finds
// interrupted tasks and settles them, and starts the workers that should run.

import type { Agent } from '../api/agent.js';
import type { AgentEvent, EventDraft } from '../api/event.js';
import { isTerminal } from '../api/event.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Hooks, TaskOutcome } from '../plugin/hooks.js';
import type { EventLog } from '../registry/event-log.js';
import type { StreamRef } from '../registry/events.js';
import type { Registry } from '../registry/registry.js';
import type { SquadIndex } from '../registry/squad/index.js';
import { groupName } from '../registry/squad/membership.js';
import type { AgentRuntime, RuntimeEvent, TaskSpec } from '../runtime/runtime.js';
import { applyEvent } from './task-status.js';
import { KeyedSerializer } from '../registry/serializer.js';
import { WorkQueue } from './framework/workqueue.js';

/** Consecutive worker exits without a connection before the agent is marked Failed. */
const MAX_START_FAILURES = 3;
const RESYNC_MS = 30_000;

export interface AgentControllerDeps {
  agents: Registry<Agent>;
  /** Squad membership, kept from a watch (started by the caller). */
  squads: SquadIndex;
  events: EventLog;
  runtime: AgentRuntime;
  hooks: Hooks;
  metrics: Metrics;
  logger: Logger;
}

export const streamOf = (a: Agent): StreamRef => ({
  namespace: a.metadata.namespace,
  name: a.metadata.name,
  uid: a.metadata.uid,
});

const parseKey = (key: string): ObjectRef => {
  const i = key.indexOf('/');
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
};

export class AgentController {
  private readonly queue: WorkQueue;
  private readonly ingestion = new KeyedSerializer();
  private readonly startFailures = new Map<string, number>();
  private readonly unsubscribe: (() => void)[] = [];
  private resync?: NodeJS.Timeout;

  constructor(private readonly d: AgentControllerDeps) {
    this.queue = new WorkQueue((k) => this.reconcile(k), d.logger);
  }

  async start(): Promise<void> {
    const { agents, runtime } = this.d;
    this.unsubscribe.push(
      agents.watch((ev) => {
        const { namespace, name } = ev.object.metadata;
        this.queue.add(refKey(ev.object.metadata));
        // A member waking or sleeping decides whether its squad's group is up: reconcile them all.
        const squad = this.d.squads.squadOf(namespace, name);
        if (squad) this.enqueueMembers(namespace, this.d.squads.membersOf(namespace, squad));
      }),
    );
    // A membership change moves workers: reconcile everyone it touched.
    this.d.squads.onChange((namespace, _squad, touched) => this.enqueueMembers(namespace, touched));
    this.unsubscribe.push(
      runtime.watch((ev) => {
        if (ev.type === 'ready') {
          this.startFailures.delete(refKey(ev.ref));
          this.queue.add(refKey(ev.ref));
        } else if (ev.type === 'disconnected') this.queue.add(refKey(ev.ref));
        else if (ev.type === 'event') void this.ingest(ev.ref, ev.uid, ev.taskId, ev.event);
        else if (ev.type === 'exited') void this.onWorkerExit(ev);
      }),
    );
    await this.recoverInterruptedTasks();
    this.resyncAll();
    this.resync = setInterval(() => this.resyncAll(), RESYNC_MS).unref();
  }

  stop(): void {
    this.queue.close();
    if (this.resync) clearInterval(this.resync);
    this.unsubscribe.forEach((fn) => fn());
  }

  /** Resolves when no reconcile is in flight. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  enqueue(ref: ObjectRef): void {
    this.queue.add(refKey(ref));
  }

  /** Appends a service-side event to an agent's stream (same path as worker events). */
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined> {
    return this.ingest(agent.metadata, agent.metadata.uid, agent.spec.task, draft);
  }

  private enqueueMembers(namespace: string, names: string[]): void {
    for (const name of names) this.queue.add(refKey({ namespace, name }));
  }

  private resyncAll(): void {
    void this.d.agents.list().then(({ items }) => items.forEach((a) => this.queue.add(refKey(a.metadata))));
  }

  private async reconcile(key: string): Promise<void> {
    const ref = parseKey(key);
    const { agents, runtime } = this.d;
    const agent = await agents.get(ref.namespace, ref.name);
    const log = this.d.logger.child({ namespace: ref.namespace, name: ref.name });

    if (!agent) {
      await runtime.stop(ref);
      return;
    }
    if (agent.metadata.deletionTimestamp) return this.finalize(agent, log);

    const asleep = agent.status.status === 'Sleeping';
    const place = await this.placementFor(agent);
    if (agent.status.status === 'Failed' && !(agent.spec.task > agent.status.observedTask)) place.wanted = false;

    let worker = await runtime.status(ref);
    if (worker.phase !== 'Absent' && (!place.wanted || worker.group !== (place.group ?? null))) {
      // Moving between solo and a group means a new worker: let a running task finish first.
      if (place.wanted && worker.runningTask !== undefined) return;
      await runtime.stop(ref);
      worker = { phase: 'Absent', group: null };
    }
    if (!place.wanted) return;

    if (worker.phase === 'Absent') {
      await runtime.ensure({
        ref,
        uid: agent.metadata.uid,
        ...(place.group ? { group: place.group, peers: place.peers } : {}),
        ...(place.group && asleep ? { wakeIdle: true } : {}),
      });
      if (!asleep && agent.status.status !== 'Pending') await this.setPhase(ref, 'Pending');
      return; // the worker's `ready` brings us back
    }
    if (worker.phase !== 'Ready' || asleep) return;
    if (agent.status.status !== 'Running') await this.setPhase(ref, 'Running');

    if (agent.spec.task > agent.status.observedTask && worker.runningTask === undefined) {
      await this.dispatch(agent, log);
    }
  }

  /**
   * Where the agent's worker should run. A solo agent runs while awake. A squad member runs in
   * its squad's group while any member is awake (asleep members idle there); when all members
   * sleep, the group goes away.
   */
  private async placementFor(agent: Agent): Promise<{ wanted: boolean; group?: string; peers?: string[] }> {
    const { namespace, name } = agent.metadata;
    const squad = this.d.squads.squadOf(namespace, name);
    if (!squad) return { wanted: agent.status.status !== 'Sleeping' };
    const members = this.d.squads.membersOf(namespace, squad);
    const states = await Promise.all(members.map((m) => (m === name ? agent : this.d.agents.get(namespace, m))));
    const awake = states.some((a) => a && !a.metadata.deletionTimestamp && a.status.status !== 'Sleeping');
    return { wanted: awake, group: groupName(namespace, squad), peers: members };
  }

  private async dispatch(agent: Agent, log: Logger): Promise<void> {
    const ref = agent.metadata;
    const msg: TaskSpec = {
      taskId: agent.spec.task,
      instructions: agent.spec.instructions,
      ...(agent.spec.systemPrompt ? { systemPrompt: agent.spec.systemPrompt } : {}),
      model: agent.spec.model,
      role: agent.spec.role,
      ...(agent.status.sessionId ? { resume: agent.status.sessionId } : {}),
      mcpServers: await this.d.hooks.resolveMcpServers(agent),
    };
    if (!(await this.d.runtime.dispatch(ref, msg))) return; // not ready after all; the next `ready` retries
    await this.d.agents.updateStatus(ref.namespace, ref.name, (s) => {
      s.observedTask = Math.max(s.observedTask, msg.taskId);
    });
    log.info({ task: msg.taskId }, 'task dispatched');
  }

  /** Worker and service events go through here, in order per agent. */
  private ingest(ref: ObjectRef, uid: string, taskId: number, draft: EventDraft): Promise<AgentEvent | undefined> {
    return this.ingestion.run(refKey(ref), async () => {
      const agent = await this.d.agents.get(ref.namespace, ref.name);
      if (!agent || agent.metadata.uid !== uid || agent.metadata.deletionTimestamp) return undefined;
      if (taskId !== agent.spec.task) return undefined; // a stale event of an earlier task
      const ev = await this.d.events.append(streamOf(agent), { ...draft, task: taskId });
      const updated = await this.d.agents.updateStatus(ref.namespace, ref.name, (s) => applyEvent(s, ev));
      if (isTerminal(ev.type)) await this.taskEnded(updated, ev);
      return ev;
    });
  }

  private async taskEnded(agent: Agent, ev: AgentEvent): Promise<void> {
    const outcome: TaskOutcome =
      ev.type === 'task_completed' ? 'completed' : ev.type === 'task_cancelled' ? 'cancelled' : 'error';
    this.d.metrics.tasks.inc({ outcome });
    if (ev.type === 'task_completed') {
      const p = (ev as AgentEvent<'task_completed'>).payload;
      this.d.metrics.taskDuration.observe(p.duration_ms / 1000);
      if (p.cost_usd > 0) this.d.metrics.cost.inc(p.cost_usd);
    }
    await this.d.hooks.notifyTaskEnded(agent, outcome);
    this.queue.add(refKey(agent.metadata));
  }

  private async onWorkerExit(e: Extract<RuntimeEvent, { type: 'exited' }>): Promise<void> {
    const key = refKey(e.ref);
    const agent = await this.d.agents.get(e.ref.namespace, e.ref.name);
    if (!agent) return;
    if (agent.status.taskStatus === 'InProgress' && agent.status.observedTask === agent.spec.task) {
      await this.emit(agent, {
        type: 'error',
        payload: { message: `the agent's worker exited (code ${e.code}, signal ${e.signal}) during the task`, reason: 'WorkerLost' },
      });
    }
    const failures = this.hadNoConnection(key);
    if (failures >= MAX_START_FAILURES) {
      await this.d.agents.updateStatus(e.ref.namespace, e.ref.name, (s) => {
        s.status = 'Failed';
        s.message = `the worker exited ${failures} times before connecting (last code ${e.code}); send a new task to retry`;
      });
      this.startFailures.delete(key);
    }
    this.queue.add(key);
  }

  private hadNoConnection(key: string): number {
    const n = (this.startFailures.get(key) ?? 0) + 1;
    this.startFailures.set(key, n);
    return n;
  }

  /** Tasks that were running when the service stopped cannot continue: settle them as errors. */
  private async recoverInterruptedTasks(): Promise<void> {
    const { items } = await this.d.agents.list();
    for (const a of items) {
      if (a.status.taskStatus === 'InProgress' && a.status.observedTask === a.spec.task && !a.metadata.deletionTimestamp) {
        await this.emit(a, {
          type: 'error',
          payload: { message: 'the task was interrupted because the service restarted', reason: 'Interrupted' },
        });
      }
      if (a.status.status === 'Running') await this.setPhase(a.metadata, 'Pending');
    }
  }

  private async finalize(agent: Agent, log: Logger): Promise<void> {
    const ref = agent.metadata;
    await this.d.runtime.remove(ref);
    await this.d.events.deleteStream(streamOf(agent));
    await this.d.hooks.notifyAgentDeleted(agent);
    await this.d.agents.finalize(ref.namespace, ref.name);
    log.info('agent deleted');
  }

  private async setPhase(ref: ObjectRef, phase: Agent['status']['status']): Promise<void> {
    await this.d.agents.updateStatus(ref.namespace, ref.name, (s) => {
      if (s.status === 'Sleeping') return;
      s.status = phase;
      if (phase !== 'Failed') delete s.message;
    });
  }
}
