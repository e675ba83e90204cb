// Shapes of the agent routes' answers and the query parameters they refuse, apart from the
// routes themselves.

import { type Agent, toAgentResponse } from '../../api/agent.js';
import type { CancelResponse } from '../../api/agent-ops.js';
import { badRequest } from '../../api/errors.js';
import { intParam, type Query } from '../params.js';

/** POST .../cancel: the agent, with whether a task was cancelled and what happened. */
export function cancelResponse(agent: Agent, settled: boolean, running: boolean): CancelResponse {
  const { name } = agent.metadata;
  const task = agent.spec.task;
  const message = !running
    ? `nothing was running: agent "${name}" has no task in progress`
    : settled
      ? `task ${task} of agent "${name}" cancelled`
      : `cancel of task ${task} of agent "${name}" requested; its worker has not confirmed yet`;
  return { ...toAgentResponse(agent), cancelled: running, message };
}

/** List filters komputer-ai's clients send (GET /agents), which the list would otherwise ignore. */
export const PEER_LIST_FILTERS: Readonly<Record<string, string>> = {
  status: 'filter the answer yourself, or list with the aggregated API and a field selector (status.status)',
  label: 'list with the aggregated API and a label selector (kubectl get agents -l key=value)',
  q: 'filter the answer yourself',
  sort: 'agents come sorted by namespace and name',
  offset: 'page with limit and the continue token of the previous page',
};

/** Event cursors komputer-ai's clients send (GET .../events): timestamps, where agentplane's cursors are seqs. */
export const PEER_EVENT_CURSORS: Readonly<Record<string, string>> = {
  after: 'follow new events on the WebSocket (/ws?since=<seq>)',
  around: 'page back with before=<seq>',
};

/**
 * GET .../events `before`: an event's seq. komputer-ai's clients send an RFC 3339 timestamp
 * there; the answer says what the cursor is instead of only that it is no integer.
 */
export function beforeSeq(q: Query): number | undefined {
  const raw = q.before;
  if (typeof raw === 'string' && raw !== '' && !/^\d+$/.test(raw)) {
    throw badRequest(
      `query parameter "before" is an event seq (an integer, 1 or more), not ${JSON.stringify(raw.slice(0, 64))}: timestamps are not cursors here`,
      {
        causes: [{ field: 'before', message: 'must be an event seq (an integer 1 or more); timestamps are not supported' }],
      },
    );
  }
  return intParam(q, 'before', { min: 1 });
}
