// Squads: phase, and each member's phase and task. A squad's members share one pod (one process
// group in the embedded home), labelled agentplane.io/squad=<name>; there is none while asleep.

import { api, listError, q } from '../api';
import { href, usePoll } from '../hooks';
import type { Squad } from '../types';
import { LIST_POLL_MS } from './Agents';

export function SquadsPage({ scope }: { scope: string }) {
  const list = usePoll(() => api<{ squads: Squad[] }>('GET', `/api/v1/squads${q({ namespace: scope || undefined })}`), LIST_POLL_MS);
  const squads = (list.data?.squads ?? []).sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return (
    <div>
      <h1>Squads</h1>
      {listError(list.error, scope) ? <p className="error">{listError(list.error, scope)}</p> : null}
      {list.data && !squads.length ? <p className="muted">No squads.</p> : null}
      {squads.map((s) => (
        <section key={`${s.namespace}/${s.name}`} className="card" data-squad={s.name}>
          <h2>
            {s.name} <small className="muted">in {s.namespace}</small> <span className={`badge status-${s.phase}`}>{s.phase}</span>
          </h2>
          <p>
            Pod:{' '}
            {s.phase === 'Sleeping' ? (
              <span className="muted">none (asleep; workspaces kept)</span>
            ) : (
              <>
                one shared pod, <code>agentplane.io/squad={s.name}</code>
              </>
            )}
            {s.orphanedSince ? <span className="error"> · orphaned since {new Date(s.orphanedSince).toLocaleString()}</span> : null}
            {s.breakUpRequested ? <span className="muted"> · breaking up</span> : null}
          </p>
          <div className="table-scroll">
            <table>
              <thead>
                <tr>
                  <th>Member</th>
                  <th>Phase</th>
                  <th>Task</th>
                </tr>
              </thead>
              <tbody>
                {s.members.map((m) => (
                  <tr key={m.name}>
                    <td>
                      <a href={href('agents', s.namespace, m.name)}>{m.name}</a>
                    </td>
                    <td>
                      <span className={`badge status-${m.phase}`}>{m.phase}</span>
                    </td>
                    <td>{m.taskStatus || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ))}
    </div>
  );
}
