// One agent: its state and cost so far, the live event stream (history, then the agent's
// WebSocket), a banner for tool calls that wait for approval, a box for the next task or a steer,
// cancel/sleep/wake, its checkpoints and its workspace's files.
// The header follows the events; the agent itself is polled only as a slow fallback
// (agent-state.ts). A missing or deleted agent's page says so and stops.

import { api, ApiFailure, q } from '../api';
import { headerState } from '../agent-state';
import { taskCost, usd } from '../costs';
import { type Gone, useEventStream } from '../event-stream';
import { href, usePoll } from '../hooks';
import { lastTaskEnd, taskStateOf } from '../task-events';
import type { Agent, WorkspaceView } from '../types';
import { pendingApprovals } from '../approvals';
import { Actions, TaskBox } from './AgentActions';
import { MessageBox } from './MessageBox';
import { ApprovalBanner } from './ApprovalBanner';
import { budgetText, PausedNotice } from './BudgetNotice';
import { Checkpoints } from './Checkpoints';
import { EventList } from './EventList';
import { Files } from './Files';

/** The agent's own fields (lifecycle, model, connectors) and a fallback for the stream's state. */
export const AGENT_POLL_MS = 5000;

export function AgentPage({ namespace, name }: { namespace: string; name: string }) {
  const path = `/api/v1/agents/${encodeURIComponent(name)}`;
  const stream = useEventStream(namespace, name);
  const agent = usePoll(() => api<Agent>('GET', `${path}${q({ namespace })}`), AGENT_POLL_MS, [namespace, name], !stream.gone);
  const notFound = agent.error instanceof ApiFailure && agent.error.status === 404;
  const gone: Gone | undefined = stream.gone ?? (notFound ? (agent.data ? 'deleted' : 'not-found') : undefined);
  const { events, live } = stream;
  const cost = events.reduce((sum, e) => sum + taskCost(e), 0);
  const a = agent.data;
  const header = headerState({ agent: a, at: agent.at }, { state: taskStateOf(events), at: stream.stateAt });

  return (
    <div>
      <p>
        <a href={href('agents')}>← Agents</a>
      </p>
      <h1>
        {name} <small className="muted">in {namespace}</small>
      </h1>
      {gone ? <GoneNotice gone={gone} name={name} namespace={namespace} /> : null}
      {agent.error && !notFound ? <p className="error">{agent.error.message}</p> : null}
      {a ? (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <span className={`badge status-${gone ? 'Gone' : header.status}`} data-testid="agent-status">
              {gone ? 'Deleted' : header.status}
            </span>
          </dd>
          <dt>Task</dt>
          <dd data-testid="task-status">{header.taskStatus || '—'}</dd>
          <dt>Model</dt>
          <dd>{a.model || 'default'}</dd>
          <dt>Cost so far</dt>
          <dd data-testid="cost">{usd(cost)}</dd>
          <dt>Budget</dt>
          <dd data-testid="budget">{budgetText(a)}</dd>
          <dt>Spend</dt>
          <dd data-testid="spend">{a.spend ? `${a.spend.tokens.toLocaleString()} tokens, ${usd(a.spend.costUsd)} (ended tasks)` : '—'}</dd>
          <dt>Connectors</dt>
          <dd>{a.connectors.length ? a.connectors.join(', ') : '—'}</dd>
          <dt>Stream</dt>
          <dd data-testid="stream-state">{gone ? 'ended' : live ? 'live' : 'connecting…'}</dd>
        </dl>
      ) : null}
      <ApprovalBanner path={path} namespace={namespace} pending={pendingApprovals(events)} gone={!!gone} />
      {a && header.status === 'Paused' && !gone ? <PausedNotice agent={a} path={path} namespace={namespace} onDone={agent.refresh} /> : null}
      <Actions path={path} namespace={namespace} status={a ? header.status : undefined} taskStatus={header.taskStatus} gone={!!gone} onDone={agent.refresh} />
      <TaskBox path={path} namespace={namespace} busy={header.taskStatus === 'InProgress'} gone={!!gone} onDone={agent.refresh} />
      <MessageBox path={path} namespace={namespace} gone={!!gone} onDone={agent.refresh} />
      <h2>Events</h2>
      <EventList events={events} over={!!gone} />
      <h2>Checkpoints</h2>
      <Checkpoints path={path} namespace={namespace} reloadOn={lastTaskEnd(events)} gone={!!gone} />
      <h2>Workspace</h2>
      {gone ? (
        <p className="muted">No workspace: the agent is gone.</p>
      ) : (
        // Read again whenever a task ends: that is when its files are there to see.
        <Files load={(p) => api<WorkspaceView>('GET', `${path}/files${q({ namespace, path: p })}`)} reloadOn={lastTaskEnd(events)} />
      )}
    </div>
  );
}

function GoneNotice({ gone, name, namespace }: { gone: Gone; name: string; namespace: string }) {
  return (
    <div className="gone card" role="status" data-testid="agent-gone">
      {gone === 'deleted' ? (
        <>
          <strong>Agent deleted.</strong> <code>{name}</code> in <code>{namespace}</code> was deleted while this page was open; its events up to then are below.
        </>
      ) : (
        <>
          <strong>Agent not found.</strong> There is no agent <code>{name}</code> in <code>{namespace}</code> (never created, or already deleted).
        </>
      )}{' '}
      <a href={href('agents')}>Back to the agents</a>
    </div>
  );
}
