// Messages queued on a sleeping agent (docs/messages.md) become its next task once it is no longer
// asleep and idle: woken by a PATCH of lifecycle, by a message with `wake: true`, or by a squad. A
// level-triggered reconciler over agents: the state (queued messages on an awake, idle agent)
// decides, and one conditional write both assigns the task and empties the queue, so a message is
// delivered once whichever replica leads and however often this runs.

import { type Agent, isBusy } from '../api/agent.js';
import { queuedMessages, queuedPrompt, setQueuedMessages } from '../api/agent-message.js';
import type { ObjectRef } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import { Controller } from './framework/controller.js';

/** The agent's queued messages may be delivered now: it is not (going) asleep, and has no task. */
const deliverable = (a: Agent): boolean => !a.metadata.deletionTimestamp && a.spec.lifecycle !== 'Sleep' && !isBusy(a) && queuedMessages(a).length > 0;

/** Ends an update that has nothing to write (the agent moved on since the cache showed it). */
const NOTHING = new Error('nothing to deliver');

export interface MessageDeliveryDeps {
  agents: Registry<Agent>;
  cache: Informer<Agent>;
  logger: Logger;
}

export class MessageDelivery {
  readonly controller: Controller;

  constructor(private readonly d: MessageDeliveryDeps) {
    this.controller = new Controller({ name: 'message-delivery', logger: d.logger, reconcile: (ref) => this.reconcile(ref) });
    // Only agents with messages queued matter; every other change is passed over.
    this.controller.watch(d.cache, undefined, { ignoreUpdate: (_old, obj) => queuedMessages(obj).length === 0 });
  }

  private async reconcile(ref: ObjectRef): Promise<void> {
    const a = this.d.cache.get(ref.namespace, ref.name);
    if (!a || !deliverable(a)) return;
    let count = 0;
    const after = await this.d.agents
      .update(ref.namespace, ref.name, (cur) => {
        if (!deliverable(cur)) throw NOTHING;
        const items = queuedMessages(cur);
        count = items.length;
        cur.spec.instructions = queuedPrompt(items);
        cur.spec.task += 1;
        setQueuedMessages(cur, []);
      })
      .catch((err: unknown) => {
        if (err === NOTHING) return undefined;
        throw err;
      });
    if (after) this.d.logger.info({ namespace: ref.namespace, name: ref.name, task: after.spec.task, messages: count }, 'queued messages delivered as a task');
  }
}
