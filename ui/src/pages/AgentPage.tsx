// One agent: its state and cost so far, the live event stream (history, then the agent's
// WebSocket), a box for the next task or a steer, cancel/sleep/wake, and its workspace's files.

import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { api, openSocket, q } from '../api';
import { usd } from '../costs';
import { href, usePoll } from '../hooks';
import type { Agent, AgentEvent, WorkspaceView } from '../types';
import { Files } from './Files';

const HISTORY = 200;

export function AgentPage({ namespace, name }: { namespace: string; name: string }) {
  const path = `/api/v1/agents/${encodeURIComponent(name)}`;
  const agent = usePoll(() => api<Agent>('GET', `${path}${q({ namespace })}`), 2000, [namespace, name]);
  const { events, live } = useEventStream(namespace, name);
  const cost = events.reduce((sum, e) => sum + (e.type === 'task_completed' && typeof e.payload.cost_usd === 'number' ? e.payload.cost_usd : 0), 0);
  const a = agent.data;
  const busy = a?.taskStatus === 'InProgress';

  return (
    <div>
      <p>
        <a href={href('agents')}>← Agents</a>
      </p>
      <h1>
        {name} <small className="muted">in {namespace}</small>
      </h1>
      {agent.error ? <p className="error">{agent.error.message}</p> : null}
      {a ? (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <span className={`badge status-${a.status}`} data-testid="agent-status">
              {a.status}
            </span>
          </dd>
          <dt>Task</dt>
          <dd data-testid="task-status">{a.taskStatus || '—'}</dd>
          <dt>Model</dt>
          <dd>{a.model || 'default'}</dd>
          <dt>Cost so far</dt>
          <dd data-testid="cost">{usd(cost)}</dd>
          <dt>Connectors</dt>
          <dd>{a.connectors.length ? a.connectors.join(', ') : '—'}</dd>
          <dt>Stream</dt>
          <dd data-testid="stream-state">{live ? 'live' : 'connecting…'}</dd>
        </dl>
      ) : null}
      <Actions path={path} namespace={namespace} agent={a} onDone={agent.refresh} />
      <TaskBox path={path} namespace={namespace} busy={busy} onDone={agent.refresh} />
      <h2>Events</h2>
      <EventList events={events} />
      <h2>Workspace</h2>
      <Files load={(p) => api<WorkspaceView>('GET', `${path}/files${q({ namespace, path: p })}`)} />
    </div>
  );
}

/** The agent's recent history, then its live events; reconnects (resuming by seq) if dropped. */
function useEventStream(namespace: string, name: string): { events: AgentEvent[]; live: boolean } {
  const [events, setEvents] = useState<AgentEvent[]>([]);
  const [live, setLive] = useState(false);
  useEffect(() => {
    let stopped = false;
    let socket: WebSocket | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    const seen = new Map<number, AgentEvent>();
    const add = (list: AgentEvent[]): void => {
      let changed = false;
      for (const e of list) {
        if (seen.has(e.seq)) continue;
        seen.set(e.seq, e);
        last = Math.max(last, e.seq);
        changed = true;
      }
      if (changed) setEvents([...seen.values()].sort((x, y) => x.seq - y.seq));
    };
    const connect = (): void => {
      if (stopped) return;
      socket = openSocket(`/api/v1/agents/${encodeURIComponent(name)}/ws${q({ namespace, since: last })}`);
      socket.onopen = () => setLive(true);
      socket.onmessage = (m) => add([JSON.parse(String(m.data)) as AgentEvent]);
      socket.onclose = (c) => {
        setLive(false);
        // 4410: deleted, 4404: gone. Anything else (a restart, a dropped network): resume.
        if (!stopped && c.code !== 4410 && c.code !== 4404) retry = setTimeout(connect, 1000);
      };
    };
    setEvents([]);
    api<{ events: AgentEvent[] }>('GET', `/api/v1/agents/${encodeURIComponent(name)}/events${q({ namespace, limit: HISTORY })}`)
      .then((h) => add(h.events))
      .catch(() => undefined)
      .finally(connect);
    return () => {
      stopped = true;
      clearTimeout(retry);
      socket?.close();
    };
  }, [namespace, name]);
  return { events, live };
}

function Actions({ path, namespace, agent, onDone }: { path: string; namespace: string; agent: Agent | undefined; onDone: () => void }) {
  const [error, setError] = useState<string>();
  const act = async (method: string, sub: string, body?: unknown): Promise<void> => {
    setError(undefined);
    try {
      await api(method, `${path}${sub}${q({ namespace })}`, body);
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div className="actions">
      <button type="button" onClick={() => void act('POST', '/cancel')} disabled={agent?.taskStatus !== 'InProgress'}>
        Cancel task
      </button>
      <button type="button" onClick={() => void act('PATCH', '', { lifecycle: 'Sleep' })} disabled={agent?.status === 'Sleeping'}>
        Sleep
      </button>
      <button type="button" onClick={() => void act('PATCH', '', { lifecycle: 'Wake' })} disabled={agent?.status !== 'Sleeping'}>
        Wake
      </button>
      {error ? <span className="error">{error}</span> : null}
    </div>
  );
}

/** PATCH instructions: steers the running task, or starts the next one on an idle agent. */
function TaskBox({ path, namespace, busy, onDone }: { path: string; namespace: string; busy: boolean; onDone: () => void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    try {
      await api('PATCH', `${path}${q({ namespace })}`, { instructions: text });
      setText('');
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form className="task-box card" onSubmit={(e) => void submit(e)}>
      <label>
        {busy ? 'Steer the running task' : 'Next task'}
        <textarea name="instructions" rows={3} required value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <button type="submit">{busy ? 'Steer' : 'Send task'}</button>
      {error ? <p className="error">{error}</p> : null}
    </form>
  );
}

type Row = { kind: 'event'; e: AgentEvent } | { kind: 'tool'; call: AgentEvent; result?: AgentEvent };

/** Events in order, a tool call and its result folded into one collapsed row. */
function EventList({ events }: { events: AgentEvent[] }) {
  const rows = useMemo(() => {
    const out: Row[] = [];
    const calls = new Map<string, Row & { kind: 'tool' }>();
    for (const e of events) {
      if (e.type === 'tool_call') {
        const row = { kind: 'tool' as const, call: e };
        calls.set(`${e.task}/${String(e.payload.id)}`, row);
        out.push(row);
      } else if (e.type === 'tool_result' && calls.has(`${e.task}/${String(e.payload.id)}`)) {
        calls.get(`${e.task}/${String(e.payload.id)}`)!.result = e;
      } else out.push({ kind: 'event', e });
    }
    return out;
  }, [events]);
  if (!events.length) return <p className="muted">No events yet.</p>;
  return (
    <ol className="events" data-testid="events">
      {rows.map((r) => (r.kind === 'tool' ? <ToolRow key={r.call.seq} call={r.call} result={r.result} /> : <EventRow key={r.e.seq} e={r.e} />))}
    </ol>
  );
}

function ToolRow({ call, result }: { call: AgentEvent; result: AgentEvent | undefined }) {
  const state = !result ? 'running' : result.payload.isError ? 'error' : 'ok';
  return (
    <li className={`event tool tool-${state}`} data-type="tool_call" data-seq={call.seq}>
      <details>
        <summary>
          <span className="kind">tool</span> <code>{String(call.payload.tool)}</code> <span className={`badge tool-state-${state}`}>{state}</span>
        </summary>
        <div className="tool-body">
          <h4>Input</h4>
          <pre>{JSON.stringify(call.payload.input, null, 2)}</pre>
          <h4>Result</h4>
          <pre>{result ? String(result.payload.output) : '…'}</pre>
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
      body = <>Task {e.task} started: <q>{String(p.instructions)}</q></>;
      break;
    case 'text':
      body = <span className="text">{String(p.content)}</span>;
      break;
    case 'thinking':
      body = <span className="muted">{String(p.content)}</span>;
      break;
    case 'user_message':
      body = <>Steered: <q>{String(p.content)}</q></>;
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
      body = <>Task {e.task} cancelled: {String(p.reason)}</>;
      break;
    case 'error':
      body = <span className="error">{String(p.message)}</span>;
      break;
    case 'model_retry':
      body = <span className="muted">{String(p.message)}</span>;
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
