// Sleep and wake, as a reconciler over agents. The only writer of the Sleeping phase.
//
// lifecycle "Sleep" is an action: an idle agent sleeps now; a busy solo agent sleeps when its
// task ends. A task sent to a sleeping agent wakes it for good: assigning a task resets "Sleep"
// to "" (the agent strategy), and only a squad breaking up puts an idle member back to sleep
// (the squad controller). "Wake" and "" mean awake. "AutoDelete" deletes the agent after its
// next task completes. Edge-triggered parts (cancel a member's task when it is put to sleep,
// note which task AutoDelete waits for) run on the lifecycleRequested hook.

import type { Agent } from '../../pkg/api/agent.js';
import { refKey } from '../../pkg/api/meta.js';
import { WorkQueue } from '../../pkg/controller/framework/workqueue.js';
import type { Logger } from '../../pkg/observability/logger.js';
import type { PluginContext } from '../../pkg/plugin/types.js';
import { isBusy } from '../../pkg/registry/agent/strategy.js';
import { squadOf } from '../../pkg/registry/squad/membership.js';

/** The task number AutoDelete waits for; plugin-owned state, kept as an annotation. */
export const AUTO_DELETE_AFTER = 'agentplane.io/auto-delete-after-task';

export class SleepWake {
  private readonly queue: WorkQueue;
  private unsubscribe?: () => void;

  constructor(
    private readonly ctx: PluginContext,
    private readonly log: Logger,
  ) {
    this.queue = new WorkQueue((k) => this.reconcile(k), log);
  }

  start(): void {
    const { agents } = this.ctx.registry;
    this.unsubscribe = agents.watch((ev) => {
      if (ev.type !== 'DELETED') this.queue.add(refKey(ev.object.metadata));
    });
    void agents.list().then(({ items }) => items.forEach((a) => this.queue.add(refKey(a.metadata))));
  }

  stop(): void {
    this.queue.close();
    this.unsubscribe?.();
  }

  /** PATCH set the lifecycle: the edge-triggered half. */
  async lifecycleRequested(agent: Agent): Promise<void> {
    const { namespace, name } = agent.metadata;
    if (agent.spec.lifecycle === 'Sleep' && isBusy(agent)) {
      // A squad member goes to sleep at once: its task is cancelled (spec section 3).
      if (await squadOf(this.ctx.registry.squads, namespace, name)) {
        await this.ctx.operations
          .cancel(namespace, name, 'put to sleep')
          .catch((err: unknown) => this.log.warn({ namespace, name, err: String(err) }, 'could not cancel the task of a member put to sleep'));
      }
    }
    if (agent.spec.lifecycle === 'AutoDelete') {
      const after = String(isBusy(agent) ? agent.spec.task : agent.spec.task + 1);
      await this.ctx.registry.agents.update(namespace, name, (a) => {
        a.metadata.annotations = { ...a.metadata.annotations, [AUTO_DELETE_AFTER]: after };
      });
    }
  }

  private async reconcile(key: string): Promise<void> {
    const i = key.indexOf('/');
    const namespace = key.slice(0, i);
    const name = key.slice(i + 1);
    const { agents } = this.ctx.registry;
    const a = await agents.get(namespace, name);
    if (!a || a.metadata.deletionTimestamp) return;

    if (this.autoDeleteDue(a)) {
      this.log.info({ namespace, name }, 'task completed: auto-deleting the agent');
      await this.ctx.operations.delete(namespace, name);
      return;
    }
    const busy = isBusy(a);
    const asleep = a.status.status === 'Sleeping';
    const wantAsleep = a.spec.lifecycle === 'Sleep' && !busy;
    if (wantAsleep === asleep) return;
    await agents.updateStatus(namespace, name, (s, cur) => {
      if (cur.spec.lifecycle === 'Sleep' && !isBusy(cur)) {
        s.status = 'Sleeping';
        delete s.message;
      } else if (s.status === 'Sleeping') {
        s.status = 'Pending'; // the agent controller brings the worker back
      }
    });
    this.log.info({ namespace, name, asleep: wantAsleep }, wantAsleep ? 'agent asleep' : 'agent woken');
  }

  private autoDeleteDue(a: Agent): boolean {
    const after = Number(a.metadata.annotations?.[AUTO_DELETE_AFTER]);
    return (
      a.spec.lifecycle === 'AutoDelete' &&
      Number.isInteger(after) &&
      a.status.taskStatus === 'Complete' &&
      a.status.observedTask >= after &&
      a.spec.task >= after
    );
  }
}
