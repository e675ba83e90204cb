// The agent operations beside its object and its events: POST /api/v1/agents/:name/compact (the
// running task's session compacted by the engine) and GET /api/v1/agents/:name/cost (spending per
// task and per model, from the events).

import type { FastifyInstance } from 'fastify';
import type { AgentCompaction } from '../services/agent-compaction.js';
import type { AgentCosts } from '../services/agent-costs.js';
import { jsonBody } from '../body.js';
import { costOptions } from '../cost-query.js';
import { namespaceOf, type Query } from '../params.js';

interface NameParams {
  name: string;
}

export function agentOpRoutes(compaction: AgentCompaction, costs: AgentCosts) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post<{ Params: NameParams }>('/api/v1/agents/:name/compact', async (req) => {
      return compaction.compact(namespaceOf(req.query as Query), req.params.name, jsonBody(req));
    });

    app.get<{ Params: NameParams }>('/api/v1/agents/:name/cost', async (req) => {
      const q = req.query as Query;
      return costs.cost(namespaceOf(q), req.params.name, costOptions(q));
    });
  };
}
