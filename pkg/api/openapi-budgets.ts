// The OpenAPI paths of namespace Budgets (/api/v1/budgets; docs/budgets.md), with their schemas.

import type { OpenAPIV3 } from 'openapi-types';
import { budgetPatchRequestSchema, budgetRequestSchema, budgetSpecSchema, budgetStatusSchema } from './budget.js';
import { type Schema, toOpenApi } from './openapi-common.js';
import { kindPaths } from './openapi-kind.js';

const budgetResponseSchema = {
  type: 'object',
  required: ['name', 'namespace', 'period', 'onExceed', 'createdAt', 'periodStart', 'spent', 'used', 'agents'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    ...budgetSpecSchema.properties,
    ...budgetStatusSchema.properties,
  },
} as const;

export function budgetComponents(): Record<string, Schema> {
  return {
    BudgetRequest: toOpenApi(budgetRequestSchema),
    BudgetPatchRequest: toOpenApi({
      ...budgetPatchRequestSchema,
      // A limit given as null is removed: taken by the service before its schema applies.
      properties: {
        ...budgetPatchRequestSchema.properties,
        maxCostUsd: { ...budgetPatchRequestSchema.properties.maxCostUsd, nullable: true },
        maxTokens: { ...budgetPatchRequestSchema.properties.maxTokens, nullable: true },
      },
      description: 'the fields given change; maxTokens or maxCostUsd given as null is removed (one limit must stay)',
    }),
    BudgetResponse: toOpenApi(budgetResponseSchema),
  };
}

export function budgetPaths(): OpenAPIV3.PathsObject {
  return kindPaths({
    plural: 'budgets',
    kind: 'Budget',
    one: "the budget with its current period's spend",
    list: "budgets, each with its current period's spend in all and per agent",
  });
}
