// The agent's checkpoints: take one, list them, start a new agent from one (it opens on the new
// agent's page), delete one. Read again when a task ends and after each action; a Pending one
// (waiting for the running task's next step) is read again until it is taken.

import { type FormEvent, useEffect, useState } from 'react';
import { api, q } from '../api';
import { href, usePoll } from '../hooks';
import type { Checkpoint } from '../types';

/** Read this often while one is Pending (being taken), else only on changes and now and then. */
const PENDING_POLL_MS = 1000;
const IDLE_POLL_MS = 15_000;

const size = (bytes: number | null): string =>
  bytes === null ? '—' : bytes < 1024 ? `${bytes} B` : bytes < 1 << 20 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / (1 << 20)).toFixed(1)} MiB`;

export function Checkpoints({ path, namespace, reloadOn, gone }: { path: string; namespace: string; reloadOn: number; gone: boolean }) {
  const [fast, setFast] = useState(false);
  const list = usePoll(() => api<{ checkpoints: Checkpoint[] }>('GET', `${path}/checkpoints${q({ namespace })}`), fast ? PENDING_POLL_MS : IDLE_POLL_MS, [
    path,
    namespace,
  ]);
  const pending = (list.data?.checkpoints ?? []).some((c) => c.phase === 'Pending');
  useEffect(() => setFast(pending), [pending]);
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => list.refresh(), [reloadOn]);
  const take = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    try {
      await api('POST', `${path}/checkpoints${q({ namespace })}`, { name });
      setName('');
    } catch (err) {
      setError((err as Error).message);
    }
    list.refresh();
  };
  const remove = async (c: Checkpoint): Promise<void> => {
    setError(undefined);
    try {
      await api('DELETE', `${path}/checkpoints/${encodeURIComponent(c.name)}${q({ namespace })}`);
    } catch (err) {
      setError((err as Error).message);
    }
    list.refresh();
  };
  const items = list.data?.checkpoints ?? [];
  return (
    <div className="checkpoints card" data-testid="checkpoints">
      <form aria-label="Take a checkpoint" onSubmit={(e) => void take(e)}>
        <input name="checkpoint" placeholder="checkpoint name" value={name} onChange={(e) => setName(e.target.value)} disabled={gone} required />
        <button type="submit" disabled={gone || !name}>
          Take checkpoint
        </button>
        <span className="muted"> a copy of the workspace and conversation; a running task is paused at its next step for it</span>
      </form>
      {error ? <p className="error">{error}</p> : null}
      {items.length === 0 ? (
        <p className="muted">No checkpoints.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Phase</th>
                <th>Task</th>
                <th>Size</th>
                <th>Taken</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((c) => (
                <tr key={c.name} data-checkpoint={c.name}>
                  <td>{c.name}</td>
                  <td title={c.message}>
                    <span className={`badge phase-${c.phase}`}>{c.phase}</span>
                  </td>
                  <td>{c.task === null ? '—' : `${c.task}${c.duringTask ? ' (during)' : ''}`}</td>
                  <td>{size(c.bytes)}</td>
                  <td>{c.takenAt ? new Date(c.takenAt).toLocaleString() : c.message}</td>
                  <td>
                    {c.phase === 'Ready' ? <Fork checkpoint={c} /> : null}
                    <button type="button" onClick={() => void remove(c)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** A new agent from the checkpoint, with its first task; opens its page. */
function Fork({ checkpoint }: { checkpoint: Checkpoint }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [error, setError] = useState<string>();
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New agent from it
      </button>
    );
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    try {
      await api('POST', '/api/v1/agents', { name, namespace: checkpoint.namespace, instructions, fromCheckpoint: checkpoint.fromCheckpoint });
      window.location.hash = href('agents', checkpoint.namespace, name);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form aria-label={`New agent from ${checkpoint.name}`} className="fork" onSubmit={(e) => void submit(e)}>
      <input name="name" placeholder="new agent name" value={name} onChange={(e) => setName(e.target.value)} required />
      <textarea name="instructions" placeholder="its first task" value={instructions} onChange={(e) => setInstructions(e.target.value)} required />
      <button type="submit">Start</button>
      {error ? <span className="error">{error}</span> : null}
    </form>
  );
}
