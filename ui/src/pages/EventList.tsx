// The agent's events in order: text, thinking, follow-ups, task outcomes, and each tool call
// folded with its result into one row that says what it runs and opens to its input and output.

import { useMemo } from 'react';
import { usd } from '../costs';
import { foldRows, type ToolState } from '../task-events';
import { describeTool } from '../tool-summary';
import type { AgentEvent } from '../types';

/** `over`: the agent is gone, so none of its calls still runs. */
export function EventList({ events, over = false }: { events: AgentEvent[]; over?: boolean }) {
  const rows = useMemo(() => foldRows(events, over), [events, over]);
  if (!events.length) return <p className="muted">No events yet.</p>;
  return (
    <ol className="events" data-testid="events">
      {rows.map((r) => (r.kind === 'tool' ? <ToolRow key={r.call.seq} call={r.call} result={r.result} state={r.state} /> : <EventRow key={r.e.seq} e={r.e} />))}
    </ol>
  );
}

const STATE_TITLE: Record<ToolState, string> = {
  running: 'running',
  ok: 'finished',
  error: 'finished with an error',
  cancelled: 'the task was cancelled before this call returned',
  ended: 'the task ended before this call returned',
};

function ToolRow({ call, result, state }: { call: AgentEvent; result: AgentEvent | undefined; state: ToolState }) {
  const tool = describeTool(String(call.payload.tool), call.payload.input);
  return (
    <li className={`event tool tool-${state}`} data-type="tool_call" data-seq={call.seq}>
      <details>
        <summary>
          <span className="kind">tool</span> <code className="tool-name">{tool.name}</code>{' '}
          <span className={`badge tool-state-${state}`} title={STATE_TITLE[state]}>
            {state}
          </span>{' '}
          {tool.detail ? (
            <code className="tool-detail" title={tool.hint ?? tool.detail}>
              {tool.detail}
            </code>
          ) : null}
        </summary>
        <div className="tool-body">
          {tool.hint ? <p className="muted">{tool.hint}</p> : null}
          <h4>Input</h4>
          <pre>{JSON.stringify(call.payload.input, null, 2)}</pre>
          <h4>Output</h4>
          <pre>{result ? String(result.payload.output) : state === 'running' ? '…' : `(none: ${STATE_TITLE[state]})`}</pre>
        </div>
      </details>
    </li>
  );
}

function EventRow({ e }: { e: AgentEvent }) {
  const p = e.payload;
  let body: React.ReactNode;
  switch (e.type) {
    case 'task_started':
      body = (
        <>
          Task {e.task} started: <q>{String(p.instructions)}</q>
        </>
      );
      break;
    case 'text':
      body = <span className="text">{String(p.content)}</span>;
      break;
    case 'thinking':
      body = <span className="muted">{String(p.content)}</span>;
      break;
    case 'user_message':
      body = (
        <>
          Steered: <q>{String(p.content)}</q>
        </>
      );
      break;
    case 'message':
      // A message between agents (docs/messages.md): who to whom, and how it was delivered.
      body = (
        <>
          <strong data-testid="message-route">
            {String(p.from)} → {String(p.to)}
          </strong>
          {p.direction === 'sent' ? <span className="muted"> (sent)</span> : null}
          {p.delivery === 'queued' ? <span className="muted"> (queued until it wakes)</span> : null}: <q>{String(p.text)}</q>
        </>
      );
      break;
    case 'task_completed':
      body = (
        <>
          Task {e.task} completed: {String(p.result)}{' '}
          <span className="muted">
            ({usd(p.cost_usd as number)}, {String(p.turns)} turns, {((p.duration_ms as number) / 1000).toFixed(1)} s)
          </span>
        </>
      );
      break;
    case 'task_cancelled':
      body = (
        <>
          Task {e.task} cancelled: {String(p.reason)}
        </>
      );
      break;
    case 'error':
      body = <span className="error">{String(p.message)}</span>;
      break;
    case 'model_retry':
      body = <span className="muted">{String(p.message)}</span>;
      break;
    case 'approval_requested':
      body = (
        <>
          <strong>{String(p.tool)}</strong> waits for approval <code className="tool-detail">{JSON.stringify(p.input)}</code>
        </>
      );
      break;
    case 'approval_decided':
      body = (
        <>
          <strong>{String(p.tool)}</strong> {p.decision === 'allow' ? 'allowed' : 'denied'} by {String(p.decidedBy)}
          {p.reason ? <span className="muted">: {String(p.reason)}</span> : null}
        </>
      );
      break;
    case 'budget_warning':
    case 'budget_exceeded':
      body = <span className={e.type === 'budget_exceeded' ? 'error' : 'warning'}>{String(p.message)}</span>;
      break;
    default:
      body = <pre>{JSON.stringify(p)}</pre>;
  }
  return (
    <li className={`event ev-${e.type}`} data-type={e.type} data-seq={e.seq}>
      <span className="kind">{e.type.replace('_', ' ')}</span> <time className="muted">{new Date(e.timestamp).toLocaleTimeString()}</time> {body}
    </li>
  );
}
