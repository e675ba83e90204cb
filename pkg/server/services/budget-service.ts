// Namespace Budgets behind the REST mirror (/api/v1/budgets; docs/budgets.md). Rules live in the
// budget strategy; reads go through the read cache, which computes each Budget's spend. A limit
// patched to null is removed (one must stay: the strategy's rule).

import { BUDGET_KIND, type Budget, budgetPatchRequestSchema, budgetRequestSchema, type BudgetSpec, validateBudgetLimits } from '../../api/budget.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { KindService } from './kind-service.js';

export type BudgetService = KindService<BudgetSpec, Budget>;

export const budgetService = (budgets: Registry<Budget>, reads: ReadCache<Budget>): BudgetService =>
  new KindService(
    {
      kind: BUDGET_KIND,
      createSchema: budgetRequestSchema,
      patchSchema: budgetPatchRequestSchema,
      removable: ['maxTokens', 'maxCostUsd'],
      validateCreate: (spec) => validateBudgetLimits(spec, '(body)'),
    },
    budgets,
    reads,
  );
