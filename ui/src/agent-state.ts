// The agent page's header (status, task status) from the events the page already has, with the
// agent's REST answer, polled slowly, as the fallback: whichever of the two is newer wins. Events
// arrive as they happen; a poll says what was true when it was sent. The newer poll matters when
// the stream has nothing to say: a task another client sent that has not started yet, a sleep
// or wake, a stream that is down.

import type { AgentEvent, Agent } from './types';

/**
 * How long after an event a poll's answer may still be older than it: the server stores an event
 * and sends it to the page before it folds it into the agent's status.
 */
export const FOLD_GRACE_MS = 1000;

export interface HeaderState {
  status: string | undefined;
  taskStatus: string | undefined;
}

export function headerState(
  polled: { agent: Agent | undefined; at: number },
  fromEvents: { state: { event: AgentEvent; taskStatus: string } | undefined; at: number },
): HeaderState {
  const a = polled.agent;
  const s = fromEvents.state;
  if (!s || (a && polled.at - FOLD_GRACE_MS > fromEvents.at)) return { status: a?.status, taskStatus: a?.taskStatus };
  // A task that started has a worker running it; when it ends, the worker stays (until it sleeps).
  const status = s.taskStatus === 'InProgress' ? 'Running' : (a?.status ?? 'Running');
  return { status, taskStatus: s.taskStatus };
}
