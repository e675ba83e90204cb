// The OpenAPI paths of namespace Budgets (/api/v1/budgets; docs/budgets.md), with their schemas.

import type { OpenAPIV3 } from 'openapi-types';
import { budgetPatchRequestSchema, budgetRequestSchema, budgetSpecSchema, budgetStatusSchema } from './budget.js';
import { errors, json, listNsParam, nameParam, nsParam, ref, type Schema, toOpenApi } from './openapi-common.js';

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
      description: 'the fields given change; maxTokens or maxCostUsd given as null is removed (one limit must stay)',
    }),
    BudgetResponse: toOpenApi(budgetResponseSchema),
  };
}

export function budgetPaths(): OpenAPIV3.PathsObject {
  const one = { description: "the budget with its current period's spend", content: json(ref('BudgetResponse')) };
  return {
    '/api/v1/budgets': {
      get: {
        operationId: 'listBudgets',
        parameters: [listNsParam],
        responses: {
          '200': {
            description: "budgets, each with its current period's spend in all and per agent",
            content: json({ type: 'object', required: ['budgets'], properties: { budgets: { type: 'array', items: ref('BudgetResponse') } } }),
          },
          ...errors(400),
        },
      },
      post: {
        operationId: 'createBudget',
        requestBody: { required: true, content: json(ref('BudgetRequest')) },
        responses: { '201': { description: 'budget created', content: json(ref('BudgetResponse')) }, ...errors(400, 409, 413, 415) },
      },
    },
    '/api/v1/budgets/{name}': {
      get: { operationId: 'getBudget', parameters: [nameParam, nsParam], responses: { '200': one, ...errors(400, 404) } },
      patch: {
        operationId: 'patchBudget',
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json(ref('BudgetPatchRequest')) },
        responses: { '200': one, ...errors(400, 404, 409, 413, 415) },
      },
      delete: {
        operationId: 'deleteBudget',
        parameters: [nameParam, nsParam],
        responses: { '200': { description: 'deleted; the budget as it was', content: json(ref('BudgetResponse')) }, ...errors(400, 404) },
      },
    },
  };
}
