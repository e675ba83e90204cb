// An agent created with a task while a cap on workers is reached (its namespace's, or
// --max-workers) is stored Queued at once, with the reason and message the agent controller
// would write a moment later (docs/admission.md "Queued at create"). The create's answer then
// shows the wait, and a burst of creates into a full namespace costs one write each instead of
// two: the controller finds the conditions it would set already there and writes nothing.
//
// Only a hint: the controller still decides. An agent it admits after all (a worker freed
// meanwhile) loses Queued with its next WorkerReady, as any agent leaving the line does.

import { AGENT_KIND, type Agent, deriveAgentStatus } from '../../api/agent.js';
import { queuedConditions } from '../../api/agent-queue.js';
import type { AdmissionPlugin, Attributes } from './admission.js';

/** Why an agent created now would wait for a worker; undefined when it would not, or nobody knows here. */
export type QueuedAtCreate = (agent: Agent) => { reason: string; message: string } | undefined;

export function agentLine(queuedAtCreate: QueuedAtCreate): AdmissionPlugin {
  return {
    name: 'AgentLine',
    kinds: [AGENT_KIND],
    operations: ['CREATE'],
    admit(a: Attributes): void {
      const agent = a.object as Agent;
      const wait = queuedAtCreate(agent);
      if (!wait) return;
      agent.status.conditions = queuedConditions(agent.status.conditions ?? [], wait.reason, wait.message, true);
      deriveAgentStatus(agent);
    },
  };
}
