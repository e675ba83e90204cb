// Agents by namespace (status, task status, model, last activity, cost), a form to create one,
// and each namespace's cost over time. The list is polled every 2 s (docs/dashboard.md "Live
// updates"); costs and last activity come from the agents' events (costs.ts).

import { type FormEvent, useState } from 'react';
import { api, listError, q } from '../api';
import { CostChart } from '../CostChart';
import { ago, costsOf, refreshCosts, usd } from '../costs';
import { href, usePoll } from '../hooks';
import { type Agent, statusLabel } from '../types';

export const LIST_POLL_MS = 2000;

export function AgentsPage({ scope }: { scope: string }) {
  const list = usePoll(async () => {
    const { agents } = await api<{ agents: Agent[] }>('GET', `/api/v1/agents${q({ namespace: scope || undefined })}`);
    // Sequentially: one small events request per agent, never a burst.
    for (const a of agents) await refreshCosts(a.namespace, a.name).catch(() => undefined);
    return agents;
  }, LIST_POLL_MS);
  const byNamespace = new Map<string, Agent[]>();
  for (const a of list.data ?? []) byNamespace.set(a.namespace, [...(byNamespace.get(a.namespace) ?? []), a]);
  const namespaces = [...byNamespace.keys()].sort();

  return (
    <div>
      <h1>Agents</h1>
      <CreateAgent defaultNamespace={scope || 'default'} onCreated={list.refresh} />
      {listError(list.error, scope) ? <p className="error">{listError(list.error, scope)}</p> : null}
      {list.data && !list.data.length ? <p className="muted">No agents yet: create one above.</p> : null}
      {namespaces.map((ns) => {
        const agents = byNamespace.get(ns)!.sort((a, b) => a.name.localeCompare(b.name));
        return (
          <section key={ns} className="namespace" data-testid={`namespace-${ns}`}>
            <h2>
              Namespace <code>{ns}</code>
            </h2>
            {/* Seven columns: on a narrow screen the table scrolls in its box, not the page. */}
            <div className="table-scroll">
              <table className="agents">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Status</th>
                    <th>Task</th>
                    <th>Model</th>
                    <th>Last activity</th>
                    <th>Cost</th>
                    <th>Last message</th>
                  </tr>
                </thead>
                <tbody>
                  {agents.map((a) => {
                    const c = costsOf(a.namespace, a.name);
                    return (
                      <tr key={a.name} data-agent={a.name}>
                        <td>
                          <a href={href('agents', a.namespace, a.name)}>{a.name}</a>
                        </td>
                        <td>
                          <span className={`badge status-${a.status}`}>{statusLabel(a)}</span>
                        </td>
                        <td className="task-status">{a.taskStatus || '—'}</td>
                        <td className="model">{a.model || 'default'}</td>
                        <td title={c?.lastActivity}>{ago(c?.lastActivity)}</td>
                        <td className="cost">{usd(c?.cost)}</td>
                        <td className="message">{a.lastTaskMessage}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            <h3>Cost over time</h3>
            <CostChart namespace={ns} series={agents.map((a) => ({ agent: a.name, points: costsOf(a.namespace, a.name)?.points ?? [] }))} />
          </section>
        );
      })}
    </div>
  );
}

function CreateAgent({ defaultNamespace, onCreated }: { defaultNamespace: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [namespace, setNamespace] = useState(defaultNamespace);
  const [model, setModel] = useState('');
  const [instructions, setInstructions] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const a = await api<Agent>('POST', '/api/v1/agents', { name, namespace: namespace || 'default', instructions, ...(model ? { model } : {}) });
      onCreated();
      location.hash = href('agents', a.namespace, a.name);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="create card" onSubmit={(e) => void submit(e)} aria-label="Create an agent">
      <h2>New agent</h2>
      <div className="row">
        <label>
          Name <input name="name" required value={name} onChange={(e) => setName(e.target.value)} placeholder="hello" />
        </label>
        <label>
          Namespace <input name="namespace" value={namespace} onChange={(e) => setNamespace(e.target.value)} />
        </label>
        <label>
          Model <input name="model" value={model} onChange={(e) => setModel(e.target.value)} placeholder="server default" />
        </label>
      </div>
      <label>
        Task
        <textarea
          name="instructions"
          required
          rows={4}
          value={instructions}
          onChange={(e) => setInstructions(e.target.value)}
          placeholder="What should it do?"
        />
      </label>
      <button type="submit" disabled={busy}>
        Create and run
      </button>
      {error ? <p className="error">{error}</p> : null}
    </form>
  );
}
