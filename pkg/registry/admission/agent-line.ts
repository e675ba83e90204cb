// An agent given a task (created with one, or sent a new one) while it holds no worker and a cap
// on workers is reached (its namespace's, or --max-workers) is stored Queued by that write, with
// the reason and message the agent controller would write a moment later (docs/admission.md
// "Queued by the write that brings the task"). The write's answer then shows the wait, and a
// burst of tasks into a full namespace costs one write each instead of two: the controller finds
// the conditions it would set already there and writes nothing.
//
// Only a hint: the controller still decides. An agent it admits after all (a worker freed
// meanwhile) loses Queued with its next WorkerReady, as any agent leaving the line does.

import { AGENT_KIND, type Agent, deriveAgentStatus } from '../../api/agent.js';
import { queuedConditions } from '../../api/agent-queue.js';
import type { AdmissionPlugin, Attributes } from './admission.js';

/** Why the agent, given a task now, would wait for a worker; undefined when it would not, or nobody knows here. */
export type WaitForWorker = (agent: Agent) => { reason: string; message: string } | undefined;

export function agentLine(waitForWorker: WaitForWorker): AdmissionPlugin {
  return {
    name: 'AgentLine',
    kinds: [AGENT_KIND],
    operations: ['CREATE', 'UPDATE'],
    admit(a: Attributes): void {
      const agent = a.object as Agent;
      const old = a.oldObject as Agent | undefined;
      // Only the write that brings a task: status writes and other edits are the controller's.
      if (old && !(agent.spec.task > old.spec.task)) return;
      const wait = waitForWorker(agent);
      if (!wait) return;
      agent.status.conditions = queuedConditions(agent.status.conditions ?? [], wait.reason, wait.message, true);
      deriveAgentStatus(agent);
    },
  };
}
