// The WorkerReady and Queued conditions, which the agent controller owns: the reconciler, the
// worker pool and crash recovery (task-recovery.ts) all write them, each only when it differs
// from what the agent shows.

import { type Agent, QUEUED, WORKER_READY } from '../api/agent.js';
import { queuedConditions, WORKER_QUEUED } from '../api/agent-queue.js';
import { type Condition, type ConditionStatus, findCondition, setCondition } from '../api/condition.js';
import type { Registry } from '../registry/registry.js';

/** Queued's reason while the agent's task waits for its namespace's cap on running tasks. */
export const TASK_LIMIT = 'NamespaceTaskLimit';

export { WORKER_QUEUED };

/** Writes WorkerReady when it differs from what `agent` shows. */
export async function setWorkerReady(agents: Registry<Agent>, agent: Agent, status: ConditionStatus, reason: string, message: string): Promise<void> {
  const cur = findCondition(agent.status.conditions, WORKER_READY);
  const q = findCondition(agent.status.conditions, QUEUED);
  // A wait for a worker ends with any other WorkerReady; a wait to run a task does not.
  const queued = q?.status === 'True' && q.reason !== TASK_LIMIT;
  if (cur?.status === status && cur.reason === reason && cur.message === message && (!queued || reason === WORKER_QUEUED)) return;
  await agents.updateStatus(agent.metadata.namespace, agent.metadata.name, (s) => {
    s.conditions = setCondition(s.conditions ?? [], { type: WORKER_READY, status, reason, message });
    // Any WorkerReady but Queued means the wait for a worker is over.
    if (reason !== WORKER_QUEUED && queued) s.conditions = admitted(s.conditions);
  });
}

/**
 * The agent waits in its namespace's line: Queued True (its transition time, when it lined up,
 * keeps its place) and, when it waits for a worker, WorkerReady False with reason Queued. One
 * write, and none when nothing changes.
 */
export async function setQueued(agents: Registry<Agent>, agent: Agent, reason: string, message: string, forWorker: boolean): Promise<void> {
  const q = findCondition(agent.status.conditions, QUEUED);
  const ready = findCondition(agent.status.conditions, WORKER_READY);
  const readySame = !forWorker || (ready?.status === 'False' && ready.reason === WORKER_QUEUED && ready.message === message);
  if (q?.status === 'True' && q.reason === reason && q.message === message && readySame) return;
  await agents.updateStatus(agent.metadata.namespace, agent.metadata.name, (s) => {
    s.conditions = queuedConditions(s.conditions ?? [], reason, message, forWorker);
  });
}

/** Queued set False (reason Admitted) when it was True; the list otherwise as it is. */
export function admitted(conditions: Condition[]): Condition[] {
  return findCondition(conditions, QUEUED)?.status === 'True'
    ? setCondition(conditions, { type: QUEUED, status: 'False', reason: 'Admitted', message: 'admitted' })
    : conditions;
}
