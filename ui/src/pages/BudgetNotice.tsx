// An agent's budget in words, and the notice of a task a budget holds (status Paused): raising
// the agent's own budget from here lets the task go on (a namespace Budget is raised with
// `agentplane budget set` or PATCH /api/v1/budgets/:name).

import { type FormEvent, useState } from 'react';
import { api, q } from '../api';
import { usd } from '../costs';
import { href } from '../hooks';
import type { Agent } from '../types';

export function budgetText(a: Agent): string {
  const b = a.budget;
  if (!b) return '—';
  const parts = [b.maxTokens !== undefined ? `${b.maxTokens.toLocaleString()} tokens` : '', b.maxCostUsd !== undefined ? usd(b.maxCostUsd) : ''].filter(
    Boolean,
  );
  return `${parts.join(', ')} ${b.perTask ? 'per task' : 'in all'}; on exceed ${b.onExceed}`;
}

export function PausedNotice({ agent, path, namespace, onDone }: { agent: Agent; path: string; namespace: string; onDone: () => void }) {
  const b = agent.budget;
  const [tokens, setTokens] = useState(b?.maxTokens !== undefined ? String(b.maxTokens * 2) : '');
  const [cost, setCost] = useState(b?.maxCostUsd !== undefined ? String(b.maxCostUsd * 2) : '');
  const [error, setError] = useState<string>();
  const raise = (e: FormEvent): void => {
    e.preventDefault();
    if (!b) return;
    const budget = { ...b, ...(tokens ? { maxTokens: Number(tokens) } : {}), ...(cost ? { maxCostUsd: Number(cost) } : {}) };
    api('PATCH', `${path}${q({ namespace })}`, { budget })
      .then(() => {
        setError(undefined);
        onDone();
      })
      .catch((err: Error) => setError(err.message));
  };
  return (
    <div className="paused card" role="status" data-testid="agent-paused">
      <strong>Paused: a budget is spent.</strong> The task waits before its next model request until the budget is raised (or the task is cancelled).{' '}
      {b ? (
        <form onSubmit={raise} className="raise">
          {b.maxTokens !== undefined ? (
            <label>
              Max tokens <input type="number" min={0} value={tokens} onChange={(e) => setTokens(e.target.value)} data-testid="raise-tokens" />
            </label>
          ) : null}
          {b.maxCostUsd !== undefined ? (
            <label>
              Max cost (USD) <input type="number" min={0} step="any" value={cost} onChange={(e) => setCost(e.target.value)} />
            </label>
          ) : null}
          <button type="submit" data-testid="raise-budget">
            Raise the budget
          </button>
        </form>
      ) : (
        <span>
          The namespace&apos;s <a href={href('budgets')}>Budget</a> holds it.
        </span>
      )}
      {error ? <p className="error">{error}</p> : null}
    </div>
  );
}
