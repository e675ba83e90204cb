// The checkpoint reconciler: takes each Pending AgentCheckpoint through the runtime's checkpoint
// storage once its agent runs no task, and removes the copy of each checkpoint that is gone.
// Level-triggered over the checkpoint and agent informers: a checkpoint waiting for a task to
// end is looked at again when its agent changes; at start every copy without its object is
// removed, so a delete missed while the server was down is caught up. The copy is taken while
// the agent's next task is held back (CopyHolds), so it is one moment between two tasks.

import { type Agent, isBusy } from '../api/agent.js';
import type { AgentCheckpoint, CheckpointStatus } from '../api/checkpoint.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime } from '../runtime/runtime.js';
import { Controller, type Result } from './framework/controller.js';

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

  /** Holds the agent while `fn` runs; holds nest. */
  async during<T>(ref: ObjectRef, fn: () => Promise<T>): Promise<T> {
    const key = refKey(ref);
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = (this.held.get(key) ?? 1) - 1;
      if (n > 0) this.held.set(key, n);
      else this.held.delete(key);
    }
  }
}

export interface CheckpointControllerOptions {
  checkpoints: Registry<AgentCheckpoint>;
  agents: Registry<Agent>;
  informers: { checkpoints: Informer<AgentCheckpoint>; agents: Informer<Agent> };
  runtime: AgentRuntime;
  holds: CopyHolds;
  logger: Logger;
}

export class CheckpointController {
  readonly controller: Controller;

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
      await storage?.remove(refKey(ref));
      return;
    }
    if (c.status.phase !== 'Pending' || c.metadata.deletionTimestamp) return;
    const log = this.o.logger.child({ namespace: ref.namespace, name: c.spec.agent, checkpoint: ref.name });
    if (!storage) return this.setStatus(c, { phase: 'Failed', message: `the ${this.o.runtime.name} runtime cannot take checkpoints` });
    const agentRef = { namespace: ref.namespace, name: c.spec.agent };
    const cached = this.o.informers.agents.get(agentRef.namespace, agentRef.name);
    if (!cached || cached.metadata.deletionTimestamp) return this.setStatus(c, { phase: 'Failed', message: `agent "${c.spec.agent}" not found` });
    if (isBusy(cached)) return this.waitFor(c, cached);
    return this.o.holds.during(agentRef, async () => {
      // Held: no task is handed over from now on. Storage, not the cache, says none was just assigned.
      const agent = await this.o.agents.get(agentRef.namespace, agentRef.name);
      if (!agent) return this.setStatus(c, { phase: 'Failed', message: `agent "${c.spec.agent}" not found` });
      if (isBusy(agent) || (await this.o.runtime.status(agentRef)).runningTask !== undefined) return this.waitFor(c, agent);
      try {
        const { bytes } = await storage.take(refKey(ref), agentRef);
        log.info({ bytes, task: agent.status.observedTask }, 'checkpoint taken');
        return this.setStatus(c, {
          phase: 'Ready',
          takenAt: new Date().toISOString(),
          task: agent.status.observedTask,
          ...(agent.status.sessionId ? { sessionId: agent.status.sessionId } : {}),
          bytes,
        });
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'checkpoint failed');
        await storage.remove(refKey(ref)).catch(() => undefined);
        return this.setStatus(c, { phase: 'Failed', message: `the copy failed: ${(err as Error).message}` });
      }
    });
  }

  /** Pending while the agent's task runs: said once, looked at again when the agent changes. */
  private async waitFor(c: AgentCheckpoint, agent: Agent): Promise<Result> {
    await this.setStatus(c, { phase: 'Pending', message: `waiting for task ${agent.spec.task} of agent "${agent.metadata.name}" to end` });
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
