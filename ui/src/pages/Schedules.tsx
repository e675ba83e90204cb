// Schedules (docs/schedules.md): each one's agent, cron, last and next run, with Trigger and
// Suspend/Resume buttons.

import { useState } from 'react';
import { api, listError, q } from '../api';
import { href, usePoll } from '../hooks';
import type { Schedule } from '../types';
import { LIST_POLL_MS } from './Agents';

const when = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : '—');

function lastRun(s: Schedule): string {
  const r = s.lastRun;
  if (!r) return '—';
  return `${r.outcome}${r.task !== undefined ? ` (task ${r.task})` : ''} at ${when(r.time)}${r.triggered ? ', triggered' : ''}${r.reason ? `: ${r.reason}` : ''}`;
}

export function SchedulesPage({ scope }: { scope: string }) {
  const list = usePoll(() => api<{ schedules: Schedule[] }>('GET', `/api/v1/schedules${q({ namespace: scope || undefined })}`), LIST_POLL_MS);
  const [failure, setFailure] = useState<string>();
  const schedules = (list.data?.schedules ?? []).sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  const act = async (s: Schedule, what: 'trigger' | 'suspend' | 'resume'): Promise<void> => {
    setFailure(undefined);
    const path = `/api/v1/schedules/${encodeURIComponent(s.name)}`;
    const ns = q({ namespace: s.namespace });
    try {
      if (what === 'trigger') await api('POST', `${path}/trigger${ns}`);
      else await api('PATCH', `${path}${ns}`, { suspend: what === 'suspend' });
    } catch (err) {
      setFailure(err instanceof Error ? err.message : String(err));
    }
    list.refresh();
  };
  return (
    <div>
      <h1>Schedules</h1>
      <p className="muted">
        Each gives an agent a task on a cron schedule; a busy agent queues the run (Allow), skips it (Forbid) or has its task replaced (Replace).
      </p>
      {listError(list.error, scope) ? <p className="error">{listError(list.error, scope)}</p> : null}
      {failure ? <p className="error">{failure}</p> : null}
      {list.data && !schedules.length ? <p className="muted">No schedules.</p> : null}
      {schedules.map((s) => (
        <section key={`${s.namespace}/${s.name}`} className="card" data-schedule={s.name}>
          <h2>
            {s.name} <small className="muted">in {s.namespace}</small>{' '}
            <span className={`badge ${s.suspend ? 'status-Sleeping' : 'status-Running'}`} data-testid="schedule-state">
              {s.suspend ? 'Suspended' : 'Active'}
            </span>
          </h2>
          <p>
            <code>{s.cron}</code> ({s.timeZone ?? 'UTC'}) for <a href={href('agents', s.namespace, s.agent)}>{s.agent}</a>; {s.concurrencyPolicy}
            {s.startingDeadlineSeconds !== undefined ? `; deadline ${s.startingDeadlineSeconds} s` : ''}.
          </p>
          <p data-testid="schedule-last">Last run: {lastRun(s)}</p>
          <p data-testid="schedule-next">Next: {s.suspend ? '— (suspended)' : when(s.nextScheduleTime)}</p>
          <p>
            <button type="button" onClick={() => void act(s, 'trigger')}>
              Trigger
            </button>{' '}
            <button type="button" onClick={() => void act(s, s.suspend ? 'resume' : 'suspend')}>
              {s.suspend ? 'Resume' : 'Suspend'}
            </button>
          </p>
        </section>
      ))}
    </div>
  );
}
