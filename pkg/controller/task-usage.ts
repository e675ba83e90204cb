// A task's usage figures come from the model proxy's meter, never from its worker (whose channel
// the agent's own tools can speak on): the event that ends a task (completed, cancelled or failed)
// gets the metered tokens as `usage`, and the worker's cost estimate is capped by what those
// tokens could have cost.

import type { EventDraft, TaskSpend } from '../api/event.js';
import { costCeiling, type TokenUsage } from '../modelproxy/usage.js';

export type TaskEnd = EventDraft<'task_completed'> | EventDraft<'task_cancelled'> | EventDraft<'error'>;

/**
 * `draft` with the meter's figures: `usage` (and `model_usage`, by model) only when the meter counted some, a claimed
 * `cost_usd` at most their ceiling. Without a meter (`metered` undefined) only a claimed `usage`
 * is removed.
 */
export function meteredEnd<D extends TaskEnd>(
  draft: D,
  metered: { usage: TokenUsage | undefined; byModel?: Record<string, TokenUsage> | undefined } | undefined,
): D {
  const { usage: _claimed, model_usage: _claimedByModel, ...payload } = draft.payload as D['payload'] & TaskSpend;
  if (!metered) return { ...draft, payload };
  const claimed = payload.cost_usd;
  const cost = claimed === undefined ? {} : { cost_usd: Math.min(Number.isFinite(claimed) ? claimed : 0, costCeiling(metered.usage)) };
  const tokens = metered.usage ? { usage: metered.usage, ...(metered.byModel ? { model_usage: metered.byModel } : {}) } : {};
  return { ...draft, payload: { ...payload, ...cost, ...tokens } };
}
