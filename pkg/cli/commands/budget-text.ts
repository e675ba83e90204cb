// An agent's budget and spend in words, for describe and `budget agent`.

import type { AgentBudget, AgentSpend } from '../../api/budget.js';

/** "50000 tokens, $2.00 per task; Pause" / "<none>". */
export function describeBudget(b: AgentBudget | undefined): string {
  if (!b) return '<none>';
  const parts = [b.maxTokens !== undefined ? `${b.maxTokens} tokens` : '', b.maxCostUsd !== undefined ? `$${b.maxCostUsd.toFixed(2)}` : ''].filter(Boolean);
  return `${parts.join(', ')} ${b.perTask ? 'per task' : 'in all'}; on exceed ${b.onExceed}`;
}

/** "12345 tokens, $0.0370 in all; today 2345 tokens, $0.0070". */
export function describeSpend(sp: AgentSpend | undefined): string {
  if (!sp) return 'nothing yet';
  const today = new Date().toISOString().slice(0, 10);
  const day = sp.day?.start === today ? `; today ${sp.day.tokens} tokens, $${sp.day.costUsd.toFixed(4)}` : '';
  return `${sp.tokens} tokens, $${sp.costUsd.toFixed(4)} in all${day}`;
}
