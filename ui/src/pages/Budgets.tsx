// Namespace Budgets (docs/budgets.md): each one's period, limits, how much of it is used, and
// which agents spent it.

import { api, listError, q } from '../api';
import { usd } from '../costs';
import { href, usePoll } from '../hooks';
import type { Budget } from '../types';
import { LIST_POLL_MS } from './Agents';

const limits = (b: Pick<Budget, 'maxTokens' | 'maxCostUsd'>): string =>
  [b.maxTokens !== undefined ? `${b.maxTokens.toLocaleString()} tokens` : '', b.maxCostUsd !== undefined ? usd(b.maxCostUsd) : ''].filter(Boolean).join(', ');

export function BudgetsPage({ scope }: { scope: string }) {
  const list = usePoll(() => api<{ budgets: Budget[] }>('GET', `/api/v1/budgets${q({ namespace: scope || undefined })}`), LIST_POLL_MS);
  const budgets = (list.data?.budgets ?? []).sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return (
    <div>
      <h1>Budgets</h1>
      <p className="muted">
        Each caps the model spend of every agent in its namespace together, per UTC day or month: a warning at 80%, then the task that asks is stopped or
        paused.
      </p>
      {listError(list.error, scope) ? <p className="error">{listError(list.error, scope)}</p> : null}
      {list.data && !budgets.length ? <p className="muted">No budgets.</p> : null}
      {budgets.map((b) => (
        <section key={`${b.namespace}/${b.name}`} className="card" data-budget={b.name}>
          <h2>
            {b.name} <small className="muted">in {b.namespace}</small>{' '}
            <span className={`badge ${b.used >= 1 ? 'status-Failed' : b.used >= 0.8 ? 'status-Queued' : 'status-Running'}`} data-testid="budget-used">
              {Math.round(b.used * 100)}% used
            </span>
          </h2>
          <p>
            {limits(b)} per {b.period} (since {b.periodStart}); on exceed {b.onExceed}. Spent: {b.spent.tokens.toLocaleString()} tokens, {usd(b.spent.costUsd)}.
          </p>
          <progress max={1} value={Math.min(1, b.used)} />
          <p>
            Agents:{' '}
            {b.agents.length
              ? b.agents.map((a, i) => (
                  <span key={a.name}>
                    {i ? ', ' : ''}
                    <a href={href('agents', b.namespace, a.name)}>{a.name}</a> {a.tokens.toLocaleString()} tokens ({usd(a.costUsd)})
                  </span>
                ))
              : '—'}
          </p>
        </section>
      ))}
    </div>
  );
}
