// Budget rules: a namespace's spending limit per period (docs/budgets.md). Field validation and
// at least one limit; the status is never stored (computed on reads from the agents), so a write
// of it is dropped.

import { BUDGET_KIND, type Budget, budgetSpecSchema, budgetStatusSchema, validateBudgetLimits } from '../../api/budget.js';
import { API_VERSION } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields } from '../table.js';

const limitText = (b: Budget): string =>
  [b.spec.maxTokens !== undefined ? `${b.spec.maxTokens} tokens` : '', b.spec.maxCostUsd !== undefined ? `$${b.spec.maxCostUsd}` : '']
    .filter(Boolean)
    .join(', ');

export const budgetStrategy: Strategy<Budget> = {
  kind: BUDGET_KIND,
  specSchema: budgetSpecSchema,

  prepareForCreate(b) {
    b.apiVersion = API_VERSION;
    b.kind = BUDGET_KIND;
    b.status = {};
  },

  prepareForUpdate(b) {
    b.status = {};
  },

  prepareForStatusUpdate(b) {
    b.status = {};
  },

  validateStatusUpdate(b) {
    return validateSchema(budgetStatusSchema, b.status, 'status');
  },

  validate(b) {
    return [
      ...validateObjectName(b.metadata.name, b.metadata.namespace),
      ...validateSchema(budgetSpecSchema, b.spec, 'spec'),
      ...validateBudgetLimits(b.spec, 'spec'),
    ];
  },

  validateUpdate() {
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('Period', 'day or month (UTC).'),
      column('Limit', 'maxTokens and/or maxCostUsd, for all agents of the namespace in the period.'),
      column('Used', "The most used limit's share in the current period."),
      column('OnExceed', 'Stop or Pause.'),
      ageColumn,
      column('Tokens', 'Tokens spent in the current period.', 1, 'integer'),
      column('Cost', 'Cost spent in the current period, US dollars.', 1),
    ],
    row: (b, now) => [
      b.metadata.name,
      b.spec.period,
      limitText(b),
      `${Math.round((b.status.used ?? 0) * 100)}%`,
      b.spec.onExceed,
      age(b.metadata, now),
      b.status.spent?.tokens ?? 0,
      `$${(b.status.spent?.costUsd ?? 0).toFixed(4)}`,
    ],
  },

  selectableFields: (b) => ({
    ...objectMetaFields(b.metadata),
    'spec.period': b.spec.period,
    'spec.onExceed': b.spec.onExceed,
  }),
};
