// A task's usage figures come from the model proxy's meter, never from its worker (whose channel
// the agent's own tools can speak on): the worker's task_completed gets the metered tokens as
// `usage`, and its cost estimate is capped by what those tokens could have cost.

import type { EventDraft } from '../api/event.js';
import { costCeiling, type TokenUsage } from '../modelproxy/usage.js';

/**
 * `draft` with the meter's figures: `usage` only when the meter counted some, `cost_usd` at most
 * their ceiling. Without a meter (`metered` undefined) only a claimed `usage` is removed.
 */
export function meteredCompletion(
  draft: EventDraft<'task_completed'>,
  metered: { usage: TokenUsage | undefined; byModel?: Record<string, TokenUsage> | undefined } | undefined,
): EventDraft<'task_completed'> {
  const { usage: _claimed, model_usage: _claimedByModel, ...payload } = draft.payload;
  if (!metered) return { ...draft, payload };
  const cost = Math.min(Number.isFinite(payload.cost_usd) ? payload.cost_usd : 0, costCeiling(metered.usage));
  return {
    ...draft,
    payload: { ...payload, cost_usd: cost, ...(metered.usage ? { usage: metered.usage } : {}), ...(metered.usage && metered.byModel ? { model_usage: metered.byModel } : {}) },
  };
}
