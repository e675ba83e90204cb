// Sleep and wake, as a reconciler over agents: the only writer of the Asleep condition (the
// agent's `status` reads Sleeping from it).
//
// lifecycle "Sleep" is an action: an idle agent sleeps now; a busy solo agent sleeps when its
// task ends; a busy squad member has its task cancelled (docs/squads.md "Lifecycle"), then sleeps. A task
// sent to a sleeping agent wakes it for good: assigning a task resets "Sleep" to "" (the agent
// strategy), and only a squad breaking up puts an idle member back to sleep (the squad
// controller). "Wake" and "" mean awake. "AutoDelete" deletes the agent after the task it names.
// Everything here is level-triggered: the same state gives the same action, whichever API (or
// how many times) wrote it.

import { type Agent, ASLEEP, isBusy, onlyMessageMoved } from '../../pkg/api/agent.js';
import { isTrue, setCondition } from '../../pkg/api/condition.js';
import type { ObjectRef } from '../../pkg/api/meta.js';
import { claimOf } from '../../pkg/api/squad.js';
import type { AdmissionPlugin, Controller, Logger, PluginContext } from '../../pkg/plugin/types.js';

/** The task number AutoDelete waits for; plugin-owned state, kept as an annotation. */
export const AUTO_DELETE_AFTER = 'agentplane.io/auto-delete-after-task';

export class SleepWake {
  private readonly controller: Controller;

  constructor(
    private readonly ctx: PluginContext,
    private readonly log: Logger,
  ) {
    this.controller = ctx.controller({ name: 'sleep-wake', reconcile: (ref) => this.reconcile(ref) });
    this.controller.watch(ctx.informers.agents, undefined, { ignoreUpdate: onlyMessageMoved });
  }

  /**
   * Notes which task AutoDelete waits for when the lifecycle becomes AutoDelete: the running one
   * on a busy agent, else the next one.
   */
  readonly autoDeleteAdmission: AdmissionPlugin = {
    name: 'AutoDeleteTask',
    kinds: ['Agent'],
    operations: ['CREATE', 'UPDATE'],
    admit: (a) => {
      const agent = a.object as Agent;
      const old = a.oldObject as Agent | undefined;
      if (agent.spec.lifecycle !== 'AutoDelete' || old?.spec.lifecycle === 'AutoDelete') return;
      const after = String(isBusy(agent) ? agent.spec.task : agent.spec.task + 1);
      agent.metadata.annotations = { ...agent.metadata.annotations, [AUTO_DELETE_AFTER]: after };
    },
  };

  private async reconcile(ref: ObjectRef): Promise<void> {
    const { namespace, name } = ref;
    const a = this.ctx.informers.agents.get(namespace, name);
    if (!a || a.metadata.deletionTimestamp) return;

    if (autoDeleteDue(a)) {
      this.log.info({ namespace, name }, 'task completed: auto-deleting the agent');
      await this.ctx.operations.delete(namespace, name);
      return;
    }
    const busy = isBusy(a);
    if (a.spec.lifecycle === 'Sleep' && busy && claimOf(a)) {
      // A squad member goes to sleep at once: its task is cancelled; the cancel settles the task
      // and the next pass puts it to sleep.
      await this.ctx.operations.cancel(namespace, name, 'put to sleep');
      return;
    }
    const asleep = isTrue(a.status.conditions, ASLEEP);
    const wantAsleep = a.spec.lifecycle === 'Sleep' && !busy;
    if (wantAsleep === asleep) return;
    await this.ctx.registry.agents.updateStatus(namespace, name, (s, cur) => {
      const sleep = cur.spec.lifecycle === 'Sleep' && !isBusy(cur);
      s.conditions = setCondition(s.conditions ?? [], {
        type: ASLEEP,
        status: sleep ? 'True' : 'False',
        reason: sleep ? 'SleepRequested' : 'Awake',
        message: sleep ? 'lifecycle Sleep: the agent sleeps until a task wakes it' : 'the agent is awake',
      });
    });
    this.log.info({ namespace, name, asleep: wantAsleep }, wantAsleep ? 'agent asleep' : 'agent woken');
  }
}

function autoDeleteDue(a: Agent): boolean {
  const after = Number(a.metadata.annotations?.[AUTO_DELETE_AFTER]);
  return (
    a.spec.lifecycle === 'AutoDelete' && Number.isInteger(after) && a.status.taskStatus === 'Complete' && a.status.observedTask >= after && a.spec.task >= after
  );
}
