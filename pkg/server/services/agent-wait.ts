// Waiting for an agent to reach a state, as the REST operations that answer once something
// happened (cancel, delete, steering, compaction) do.

import { randomUUID } from 'node:crypto';
import type { Agent } from '../../api/agent.js';
import { type FollowUp, pendingFollowUps, requestFollowUp } from '../../api/agent-annotations.js';
import type { ObjectRef } from '../../api/meta.js';
import { type Registry, REST_OWNER } from '../../registry/registry.js';
import { onAgentChange } from '../agent-changes.js';

/**
 * Waits until `done` holds for the agent (undefined once it is gone), or `timeoutMs` passes.
 * It follows the registry's watch rather than polling storage, which in the Kubernetes home
 * would be an API call each time. Returns the last state seen of the agent (`known` at first).
 */
export async function waitForAgent(
  agents: Registry<Agent>,
  ref: ObjectRef,
  done: (a: Agent | undefined) => boolean,
  known: Agent,
  timeoutMs: number,
): Promise<{ agent: Agent; settled: boolean }> {
  const { namespace, name } = ref;
  let current: Agent | undefined = known;
  let lastSeen = known;
  let finish!: (settled: boolean) => void;
  const finished = new Promise<boolean>((resolve) => (finish = resolve));
  const see = (a: Agent | undefined): void => {
    current = a;
    if (a) lastSeen = a;
    if (done(a)) finish(true);
  };
  // Subscribe before reading, so no change falls between the read and the watch.
  const unsubscribe = onAgentChange(agents, ref, see);
  const timer = setTimeout(() => finish(done(current)), timeoutMs);
  try {
    see(await agents.get(namespace, name));
    const settled = await finished;
    // What the watch handed over is shared with other waiters: the caller gets its own copy.
    return { agent: structuredClone(current ?? lastSeen), settled };
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

/** The agent's task `task` is over (or the agent is gone): nothing more can be handed to it. */
export const taskOver = (a: Agent | undefined, task: number): boolean => !a || a.spec.task !== task || a.status.taskStatus !== 'InProgress';

/**
 * How long a request that hands something to a running task (steering, a message, a compaction)
 * waits for the worker to take it. Past it the answer is 202: the follow-up stays stored for the
 * task, which takes it at its next turn (a task held in a long step or an approval takes it
 * later), so the client must not send it again. One rule for every such route.
 */
export const FOLLOW_UP_WAIT_MS = 5_000;

/**
 * Stores a follow-up (steering, or a compaction request) on the agent for its running task
 * `task`, and waits until the agent controller has handed it to the worker, which removes it.
 * `stored` false: the task was over before the write. `settled` false: not taken within
 * `timeoutMs` (it stays queued for the task).
 */
export async function handOverFollowUp(
  agents: Registry<Agent>,
  ref: ObjectRef,
  task: number,
  followUp: Omit<FollowUp, 'id'>,
  timeoutMs = FOLLOW_UP_WAIT_MS,
): Promise<{ stored: false } | { stored: true; agent: Agent; settled: boolean }> {
  const id = randomUUID();
  let stored = true;
  const after = await agents.update(
    ref.namespace,
    ref.name,
    (a) => {
      stored = !taskOver(a, task);
      if (stored) requestFollowUp(a, { id, ...followUp });
    },
    { owner: REST_OWNER },
  );
  if (!stored) return { stored: false };
  const waiting = (a: Agent | undefined): boolean => !!a && a.spec.task === task && pendingFollowUps(a).some((f) => f.id === id);
  return { stored: true, ...(await waitForAgent(agents, ref, (a) => !waiting(a), after, timeoutMs)) };
}
