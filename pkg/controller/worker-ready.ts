// The WorkerReady condition, which the agent controller owns: the reconciler, the worker pool and
// crash recovery (task-recovery.ts) all write it, each only when it differs from what the agent shows.

import { type Agent, WORKER_READY } from '../api/agent.js';
import { type ConditionStatus, findCondition, setCondition } from '../api/condition.js';
import type { Registry } from '../registry/registry.js';

/** Why an agent waits for its worker: every slot is held (`--max-workers`). */
export const WORKER_QUEUED = 'Queued';

/** Writes WorkerReady when it differs from what `agent` shows. */
export async function setWorkerReady(agents: Registry<Agent>, agent: Agent, status: ConditionStatus, reason: string, message: string): Promise<void> {
  const cur = findCondition(agent.status.conditions, WORKER_READY);
  if (cur?.status === status && cur.reason === reason && cur.message === message) return;
  await agents.updateStatus(agent.metadata.namespace, agent.metadata.name, (s) => {
    s.conditions = setCondition(s.conditions ?? [], { type: WORKER_READY, status, reason, message });
  });
}
