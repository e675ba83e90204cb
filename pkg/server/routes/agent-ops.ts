// The agent operations beside its object and its events: POST /api/v1/agents/:name/compact (the
// running task's session compacted by the engine), GET /api/v1/agents/:name/cost (spending per
// task and per model, from the events), and the running task's tool-call approvals: GET
// /api/v1/agents/:name/approvals, POST /api/v1/agents/:name/approvals/:id (decide one).

import type { FastifyInstance } from 'fastify';
import { ANONYMOUS } from '../audit/event.js';
import type { AgentApprovals } from '../services/agent-approvals.js';
import type { AgentCompaction } from '../services/agent-compaction.js';
import type { AgentCosts } from '../services/agent-costs.js';
import { jsonBody } from '../body.js';
import { costOptions } from '../cost-query.js';
import { namespaceOf, type Query } from '../params.js';

interface NameParams {
  name: string;
}

export function agentOpRoutes(compaction: AgentCompaction, costs: AgentCosts, approvals: AgentApprovals) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Params: NameParams }>('/api/v1/agents/:name/approvals', async (req) => {
      const namespace = namespaceOf(req.query as Query);
      return { agent: req.params.name, namespace, approvals: await approvals.list(namespace, req.params.name) };
    });

    // Deciding is a verb of its own (agents/approvals, create), apart from changing the agent.
    app.post<{ Params: NameParams & { id: string } }>('/api/v1/agents/:name/approvals/:id', async (req) => {
      const user = req.user?.username ?? ANONYMOUS.username;
      return approvals.decide(namespaceOf(req.query as Query), req.params.name, req.params.id, jsonBody(req), user);
    });

    app.post<{ Params: NameParams }>('/api/v1/agents/:name/compact', async (req, reply) => {
      const { response, code } = await compaction.compact(namespaceOf(req.query as Query), req.params.name, jsonBody(req));
      return reply.status(code).send(response);
    });

    app.get<{ Params: NameParams }>('/api/v1/agents/:name/cost', async (req) => {
      const q = req.query as Query;
      return costs.cost(namespaceOf(q), req.params.name, costOptions(q));
    });
  };
}
