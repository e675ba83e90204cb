// The agent page's controls: cancel, sleep and wake, and the box that sends the next task or
// steers the running one. All disabled once the agent is gone.

import { type FormEvent, useState } from 'react';
import { api, q } from '../api';

export interface ActionsProps {
  path: string;
  namespace: string;
  /** The header's status and task status (agent-state.ts); undefined until known. */
  status: string | undefined;
  taskStatus: string | undefined;
  gone: boolean;
  onDone: () => void;
}

export function Actions({ path, namespace, status, taskStatus, gone, onDone }: ActionsProps) {
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
  const known = status !== undefined && !gone;
  return (
    <div className="actions">
      <button type="button" onClick={() => void act('POST', '/cancel')} disabled={!known || taskStatus !== 'InProgress'}>
        Cancel task
      </button>
      <button type="button" onClick={() => void act('PATCH', '', { lifecycle: 'Sleep' })} disabled={!known || status === 'Sleeping'}>
        Sleep
      </button>
      <button type="button" onClick={() => void act('PATCH', '', { lifecycle: 'Wake' })} disabled={!known || status !== 'Sleeping'}>
        Wake
      </button>
      {error ? <span className="error">{error}</span> : null}
    </div>
  );
}

/** PATCH instructions: steers the running task, or starts the next one on an idle agent. */
export function TaskBox({ path, namespace, busy, gone, onDone }: { path: string; namespace: string; busy: boolean; gone: boolean; onDone: () => void }) {
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
        <textarea name="instructions" rows={3} required disabled={gone} value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <button type="submit" disabled={gone}>
        {busy ? 'Steer' : 'Send task'}
      </button>
      {error ? <p className="error">{error}</p> : null}
    </form>
  );
}
