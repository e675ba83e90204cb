// A namespace Budget's status, computed on every read (never stored): the spend of the
// namespace's agents in the Budget's current period, from their status (ended tasks) and the
// model proxy's running figures of their current tasks.

import { type Agent, isBusy } from './agent.js';
import { addSpend, type Budget, type BudgetSpec, type BudgetStatus, periodStart, readBudget, type Spend, spendIn } from './budget.js';

/** The running task's spend so far (the model proxy's meter); none without one. */
export type RunningSpend = (a: Agent) => Spend;

export function budgetStatus(spec: BudgetSpec, agents: readonly Agent[], now: Date, running?: RunningSpend): BudgetStatus {
  let spent: Spend = { tokens: 0, costUsd: 0 };
  const parts: ({ name: string } & Spend)[] = [];
  for (const a of agents) {
    const own = addSpend(spendIn(a.status.spend, spec.period, now), running && isBusy(a) ? running(a) : { tokens: 0, costUsd: 0 });
    if (own.tokens === 0 && own.costUsd === 0) continue;
    parts.push({ name: a.metadata.name, ...own });
    spent = addSpend(spent, own);
  }
  parts.sort((x, y) => y.costUsd - x.costUsd || y.tokens - x.tokens || x.name.localeCompare(y.name));
  return { periodStart: periodStart(spec.period, now), spent, used: readBudget(spec, spent)?.share ?? 0, agents: parts };
}

/** `items` with their status computed (copies). */
export function withBudgetStatus(items: Budget[], agentsOf: (namespace: string) => Agent[], running?: RunningSpend, now = new Date()): Budget[] {
  return items.map((b) => ({ ...b, status: budgetStatus(b.spec, agentsOf(b.metadata.namespace), now, running) }));
}
