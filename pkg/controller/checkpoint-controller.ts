// The checkpoint reconciler: takes each Pending AgentCheckpoint through the runtime's checkpoint
// storage once its agent runs no task, and removes the copy of each checkpoint that is gone.
// Level-triggered over the checkpoint and agent informers: a checkpoint waiting for a task to
// end is looked at again when its agent changes; at start every copy without its object is
// removed, so a delete missed while the server was down is caught up. The copy is taken while
// the agent's next task is held back (CopyHolds), so it is one moment between two tasks.

import { type Agent, isBusy } from '../api/agent.js';
import { type AgentCheckpoint, checkpointShortName, type CheckpointStatus } from '../api/checkpoint.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import type { Squad } from '../api/squad.js';
import { memberNames } from '../registry/squad/membership.js';
import type { AgentRuntime, CheckpointStorage } from '../runtime/runtime.js';
import { Controller, type Result } from './framework/controller.js';

const idOf = (c: AgentCheckpoint): string => `${c.metadata.namespace}/${c.metadata.name}`;
/** What is taken together: one checkpoint, or a squad's members' checkpoints of one name. */
const setKey = (c: AgentCheckpoint): string => `${c.metadata.namespace}/${c.spec.squad ? `squad:${c.spec.squad}.${checkpointShortName(c)}` : c.metadata.name}`;
const waitingFor = (a: Agent): string => `waiting for task ${a.spec.task} of agent "${a.metadata.name}" to end`;

/** How soon a checkpoint waiting for its agent's task looks again, should no agent change wake it. */
const WAIT_RETRY_MS = 5_000;

/**
 * Agents whose workspace is being copied (or restored): the agent reconciler hands them no task
 * meanwhile. Shared by the checkpoint controller and the agent reconciler, in the leader.
 */
export class CopyHolds {
  private readonly held = new Map<string, number>();

  has(ref: ObjectRef): boolean {
    return this.held.has(refKey(ref));
  }

  /** Holds the agents while `fn` runs; holds nest. */
  async during<T>(refs: ObjectRef | ObjectRef[], fn: () => Promise<T>): Promise<T> {
    const keys = (Array.isArray(refs) ? refs : [refs]).map(refKey);
    for (const key of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      for (const key of keys) {
        const n = (this.held.get(key) ?? 1) - 1;
        if (n > 0) this.held.set(key, n);
        else this.held.delete(key);
      }
    }
  }
}

/** The model proxy's gate (pkg/modelproxy/turn-gate.ts): an agent's next model request waits while held. */
export interface TurnHolds {
  hold(ref: ObjectRef, onWaiting: () => void): void;
  isWaiting(ref: ObjectRef): boolean;
  release(ref: ObjectRef, onWaiting: () => void): void;
}

export interface CheckpointControllerOptions {
  checkpoints: Registry<AgentCheckpoint>;
  agents: Registry<Agent>;
  informers: { checkpoints: Informer<AgentCheckpoint>; agents: Informer<Agent>; squads: Informer<Squad> };
  runtime: AgentRuntime;
  holds: CopyHolds;
  /** Pauses running tasks at a step boundary (the model proxy's gate); absent: checkpoints wait for tasks to end. */
  turns?: TurnHolds;
  logger: Logger;
}

export class CheckpointController {
  readonly controller: Controller;
  /** Checkpoint sets being taken (a squad's members' reconciles may run at once). */
  private readonly taking = new Set<string>();
  /** Turns held for a set of running agents, by set. */
  private readonly turnHolds = new Map<string, { refs: ObjectRef[]; again: () => void; checkpoints: string[] }>();

  constructor(private readonly o: CheckpointControllerOptions) {
    this.controller = new Controller({ name: 'checkpoint', logger: o.logger, reconcile: (ref) => this.reconcile(ref), maxConcurrent: 2 });
    this.controller.watch(o.informers.checkpoints);
    // An agent's change (its task ended) may let its pending checkpoints be taken.
    this.controller.watch(o.informers.agents, (a) =>
      o.informers.checkpoints
        .list(a.metadata.namespace)
        .filter((c) => c.spec.agent === a.metadata.name && c.status.phase === 'Pending')
        .map((c) => c.metadata),
    );
  }

  async start(): Promise<void> {
    await this.controller.start();
    await this.removeOrphans();
  }

  async stop(): Promise<void> {
    this.controller.stop();
    await this.controller.idle();
  }

  private async reconcile(ref: ObjectRef): Promise<Result | void> {
    const storage = this.o.runtime.checkpoints;
    const c = this.o.informers.checkpoints.get(ref.namespace, ref.name);
    if (!c) {
      // Gone: turns held for it go on, and its copy goes.
      for (const [key, h] of this.turnHolds) if (h.checkpoints.includes(refKey(ref))) this.releaseHold(key);
      await storage?.remove(refKey(ref));
      return;
    }
    if (c.status.phase !== 'Pending' || c.metadata.deletionTimestamp) return;
    if (!storage) return this.setStatus(c, { phase: 'Failed', message: `the ${this.o.runtime.name} runtime cannot take checkpoints` });
    const set = this.setOf(c);
    if ('waiting' in set) return this.wait([c], set.waiting);
    // Two members' reconciles of one squad checkpoint: the first takes them all.
    const key = setKey(c);
    if (this.taking.has(key)) return;
    this.taking.add(key);
    try {
      return await this.take(set.members, storage);
    } finally {
      this.taking.delete(key);
    }
  }

  /**
   * The checkpoints taken together with `c`: itself, or for a squad's, its members' checkpoints
   * of the same name, once every member of the squad has one.
   */
  private setOf(c: AgentCheckpoint): { members: AgentCheckpoint[] } | { waiting: string } {
    if (!c.spec.squad) return { members: [c] };
    const short = checkpointShortName(c);
    const siblings = this.o.informers.checkpoints
      .list(c.metadata.namespace)
      .filter((s) => s.spec.squad === c.spec.squad && checkpointShortName(s) === short && !s.metadata.deletionTimestamp);
    const squad = this.o.informers.squads.get(c.metadata.namespace, c.spec.squad);
    const missing = squad ? memberNames(squad).filter((m) => !siblings.some((s) => s.spec.agent === m)) : [];
    if (missing.length) return { waiting: `waiting for the checkpoints of squad "${c.spec.squad}" members ${missing.join(', ')}` };
    return { members: siblings.filter((s) => s.status.phase === 'Pending') };
  }

  /** Copies the set's agents' workspaces at one moment: while none runs a task, their next tasks held back. */
  private async take(set: AgentCheckpoint[], storage: CheckpointStorage): Promise<Result | void> {
    const { namespace } = set[0].metadata;
    const gone = (a: Agent | undefined): boolean => !a || !!a.metadata.deletionTimestamp;
    const cached = set.map((c) => this.o.informers.agents.get(namespace, c.spec.agent));
    if (cached.some(gone)) return this.failAll(set, `agent "${set[cached.findIndex(gone)].spec.agent}" not found`);
    const busy = cached.filter((a) => isBusy(a!)) as Agent[];
    if (busy.length) {
      // A running task is paused at its next step: its next model request waits while the copy is taken.
      if (!this.o.turns) return this.wait(set, waitingFor(busy[0]));
      this.holdTurns(set, busy);
      const notYet = busy.find((a) => !this.o.turns!.isWaiting(a.metadata));
      if (notYet) return this.wait(set, `waiting for task ${notYet.spec.task} of agent "${notYet.metadata.name}" to reach its next step`);
    }
    try {
      return await this.copy(set, storage);
    } finally {
      this.releaseTurns(set);
    }
  }

  /** Copies the set's workspaces while their agents' next tasks and held turns wait. */
  private copy(set: AgentCheckpoint[], storage: CheckpointStorage): Promise<Result | void> {
    const { namespace } = set[0].metadata;
    const refOf = (c: AgentCheckpoint): ObjectRef => ({ namespace, name: c.spec.agent });
    const gone = (a: Agent | undefined): boolean => !a || !!a.metadata.deletionTimestamp;
    const paused = (a: Agent): boolean => !!this.o.turns?.isWaiting(a.metadata);
    return this.o.holds.during(set.map(refOf), async () => {
      // Held: no task is handed over from now on. Storage, not the cache, says none was just assigned.
      const agents = await Promise.all(set.map((c) => this.o.agents.get(namespace, c.spec.agent)));
      if (agents.some(gone)) return this.failAll(set, `agent "${set[agents.findIndex(gone)].spec.agent}" not found`);
      for (const a of agents) {
        if (paused(a!)) continue;
        if (isBusy(a!) || (await this.o.runtime.status(a!.metadata)).runningTask !== undefined) return this.wait(set, waitingFor(a!));
      }
      const takenAt = new Date().toISOString();
      const taken: { bytes: number; sessionId?: string }[] = [];
      try {
        // A squad's copies are all of this moment: ones left by a take cut short are taken again.
        if (set.length > 1) for (const c of set) await storage.remove(idOf(c));
        for (const c of set) taken.push(await storage.take(idOf(c), refOf(c)));
      } catch (err) {
        this.o.logger.warn({ namespace, checkpoints: set.map((c) => c.metadata.name), err: (err as Error).message }, 'checkpoint failed');
        for (const c of set) await storage.remove(idOf(c)).catch(() => undefined);
        return this.failAll(set, `the copy failed: ${(err as Error).message}`);
      }
      for (const [i, c] of set.entries()) {
        const a = agents[i]!;
        const during = paused(a);
        // Between tasks the status names the session the next task resumes; during one, the
        // session the running task writes (its id is known to the status only once it ends).
        const sessionId = during ? (taken[i].sessionId ?? a.status.sessionId) : (a.status.sessionId ?? taken[i].sessionId);
        const task = during ? a.spec.task : a.status.observedTask;
        this.o.logger.info({ namespace, name: a.metadata.name, checkpoint: c.metadata.name, bytes: taken[i].bytes, task, during }, 'checkpoint taken');
        await this.setStatus(c, {
          phase: 'Ready',
          takenAt,
          task,
          ...(during ? { duringTask: true } : {}),
          ...(sessionId ? { sessionId } : {}),
          bytes: taken[i].bytes,
        });
      }
    });
  }

  /** Asks for the running agents' next model requests to wait; each that does brings the set back here. */
  private holdTurns(set: AgentCheckpoint[], busy: Agent[]): void {
    const key = setKey(set[0]);
    if (this.turnHolds.has(key)) return;
    const again = (): void => set.forEach((c) => this.controller.enqueue(c.metadata));
    const refs = busy.map((a) => a.metadata);
    this.turnHolds.set(key, { refs, again, checkpoints: set.map((c) => refKey(c.metadata)) });
    for (const ref of refs) this.o.turns!.hold(ref, again);
  }

  private releaseTurns(set: AgentCheckpoint[]): void {
    this.releaseHold(setKey(set[0]));
  }

  private releaseHold(key: string): void {
    const h = this.turnHolds.get(key);
    if (!h) return;
    this.turnHolds.delete(key);
    for (const ref of h.refs) this.o.turns!.release(ref, h.again);
  }

  private async failAll(set: AgentCheckpoint[], message: string): Promise<void> {
    for (const c of set) await this.setStatus(c, { phase: 'Failed', message });
  }

  /** Pending while a task runs: said once, looked at again when the agent changes. */
  private async wait(set: AgentCheckpoint[], message: string): Promise<Result> {
    for (const c of set) await this.setStatus(c, { phase: 'Pending', message });
    return { requeueAfter: WAIT_RETRY_MS };
  }

  private async setStatus(c: AgentCheckpoint, status: CheckpointStatus): Promise<void> {
    if (JSON.stringify(c.status) === JSON.stringify(status)) return;
    await this.o.checkpoints.updateStatus(c.metadata.namespace, c.metadata.name, (s) => {
      for (const k of Object.keys(s) as (keyof CheckpointStatus)[]) delete s[k];
      Object.assign(s, status);
    });
  }

  /** Copies whose checkpoint was deleted while no server watched. */
  private async removeOrphans(): Promise<void> {
    const storage = this.o.runtime.checkpoints;
    for (const id of (await storage?.list()) ?? []) {
      const [namespace, name] = id.split('/') as [string, string];
      if (!(await this.o.checkpoints.get(namespace, name))) {
        this.o.logger.info({ checkpoint: id }, 'removing the copy of a deleted checkpoint');
        await storage!.remove(id);
      }
    }
  }
}
