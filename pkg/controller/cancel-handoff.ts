// A cancel request on an agent's current task (cancelRequested, written by the REST and
// aggregated APIs), acted on by the reconciler once: handed to the worker running the task, or
// settled here for a task no worker has yet, so that it is never dispatched.
//
// In memory only: the task whose cancel was handed over, per agent, so that a request is sent
// once. Forgotten when the worker connects again (it may have missed it) and at a restart, where
// the request, stored on the agent, is handed over once more.

import { type Agent, isBusy } from '../api/agent.js';
import { cancelRequested } from '../api/agent-annotations.js';
import type { AgentEvent, EventDraft } from '../api/event.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime, WorkerStatus } from '../runtime/runtime.js';
import { admitted } from './worker-ready.js';

export type CancelState = 'sent' | 'settled' | 'pending' | undefined;

export interface CancelHandoffDeps {
  agents: Registry<Agent>;
  runtime: AgentRuntime;
  /** Appends a service-side event to the agent's current task (event-ingest.ts). */
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined>;
}

export class CancelHandoff {
  /** The task whose cancel was handed to the worker, per agent: a request is sent once. */
  private readonly sent = new Map<string, number>();

  constructor(private readonly d: CancelHandoffDeps) {}

  /**
   * Acts on a cancel request for the current task: hands it to the worker running the task
   * (`sent`), or settles a task no worker has yet (`settled`). `pending` when the task was
   * handed over but its worker cannot take the cancel now; undefined when there is none to act on.
   */
  async settle(agent: Agent, worker: WorkerStatus): Promise<CancelState> {
    const request = cancelRequested(agent);
    if (!request || !isBusy(agent)) return undefined;
    const { namespace, name } = agent.metadata;
    const key = refKey(agent.metadata);
    const task = agent.spec.task;
    if (this.sent.get(key) === task) return 'sent';
    if (task > agent.status.observedTask && worker.runningTask !== task) {
      // Not handed to a worker: settle it here, so it is never dispatched.
      await this.d.agents.updateStatus(namespace, name, (s) => {
        s.observedTask = Math.max(s.observedTask, task);
        s.conditions = admitted(s.conditions ?? []); // no longer waits in line
      });
      await this.d.emit(agent, { type: 'task_cancelled', payload: { reason: request.reason } });
      return 'settled';
    }
    if (worker.runningTask === task && (await this.d.runtime.cancel(agent.metadata, task, request.reason))) {
      this.sent.set(key, task);
      return 'sent';
    }
    return 'pending';
  }

  /** The task ended, the agent is gone, or its worker connected again (it may have missed the cancel). */
  forget(ref: ObjectRef): void {
    this.sent.delete(refKey(ref));
  }
}
