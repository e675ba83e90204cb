// REST mirror of namespace Budgets: /api/v1/budgets (docs/budgets.md). Each answer carries the
// Budget's spend in its current period, in all and per agent.

import type { FastifyInstance } from 'fastify';
import { toBudgetResponse } from '../../api/budget.js';
import type { BudgetService } from '../services/budget-service.js';
import { pageQuery } from '../services/paging.js';
import { jsonBody } from '../body.js';
import { namespaceOf, type Query, queryNamespaceOf, withQueryNamespace } from '../params.js';

interface NameParams {
  name: string;
}

export function budgetRoutes(service: BudgetService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/v1/budgets', async (req, reply) => {
      return reply.status(201).send(toBudgetResponse(await service.create(withQueryNamespace(jsonBody(req), req.query as Query))));
    });

    app.get('/api/v1/budgets', async (req) => {
      const q = req.query as Query;
      const { items, ...paging } = await service.list(queryNamespaceOf(q), pageQuery(q));
      return { budgets: items.map(toBudgetResponse), ...paging };
    });

    app.get<{ Params: NameParams }>('/api/v1/budgets/:name', async (req) => {
      return toBudgetResponse(await service.get(namespaceOf(req.query as Query), req.params.name));
    });

    app.patch<{ Params: NameParams }>('/api/v1/budgets/:name', async (req) => {
      return toBudgetResponse(await service.patch(namespaceOf(req.query as Query), req.params.name, jsonBody(req)));
    });

    app.delete<{ Params: NameParams }>('/api/v1/budgets/:name', async (req) => {
      return toBudgetResponse(await service.delete(namespaceOf(req.query as Query), req.params.name));
    });
  };
}
