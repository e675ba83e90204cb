// The agent page's "Send message" form (POST …/messages, docs/messages.md): a message from a person
// (or, named in "From", an agent of the namespace) that goes into the running task, starts a task
// on an idle agent, or waits for a sleeping one to wake ("Wake it" wakes it now).

import { type FormEvent, useState } from 'react';
import { api, q } from '../api';

interface MessageAnswer {
  delivery: 'followUp' | 'task' | 'queued';
  task: number;
  woken: boolean;
}

const said = (a: MessageAnswer): string =>
  a.delivery === 'followUp'
    ? `Delivered into the running task ${a.task}.`
    : a.delivery === 'task'
      ? `Delivered as task ${a.task}.`
      : a.woken
        ? 'Queued; the agent is being woken and takes it as its next task.'
        : 'Queued: the agent sleeps and takes it when it wakes.';

export function MessageBox({ path, namespace, gone, onDone }: { path: string; namespace: string; gone: boolean; onDone: () => void }) {
  const [text, setText] = useState('');
  const [from, setFrom] = useState('');
  const [wake, setWake] = useState(false);
  const [error, setError] = useState<string>();
  const [result, setResult] = useState<string>();
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    setResult(undefined);
    try {
      const body = { text, ...(from.trim() ? { from: from.trim() } : {}), ...(wake ? { wake: true } : {}) };
      const answer = await api<MessageAnswer>('POST', `${path}/messages${q({ namespace })}`, body);
      setText('');
      setResult(said(answer));
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form className="message-box card" onSubmit={(e) => void submit(e)} data-testid="message-box">
      <label>
        Send message
        <textarea name="message" rows={2} required disabled={gone} value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <div className="row">
        <label>
          From <input name="from" placeholder="you" disabled={gone} value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label className="wake">
          <input type="checkbox" name="wake" disabled={gone} checked={wake} onChange={(e) => setWake(e.target.checked)} /> Wake it if it sleeps
        </label>
        <button type="submit" disabled={gone}>
          Send message
        </button>
      </div>
      {result ? (
        <p className="muted" data-testid="message-result">
          {result}
        </p>
      ) : null}
      {error ? <p className="error">{error}</p> : null}
    </form>
  );
}
