// REST mirror of agents: /api/v1/agents (spec 4.1).

import type { FastifyInstance } from 'fastify';
import { toAgentResponse } from '../../api/agent.js';
import { EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from '../../api/event.js';
import type { AgentService } from '../services/agent-service.js';
import { pageQuery } from '../services/paging.js';
import { jsonBody } from '../body.js';
import { intParam, queryNamespaceOf, namespaceOf, type Query, refuseQuery, withQueryNamespace } from '../params.js';
import { beforeSeq, cancelResponse, PEER_EVENT_CURSORS, PEER_LIST_FILTERS } from './agent-answers.js';

interface NameParams {
  name: string;
}

export function agentRoutes(service: AgentService) {
  return async (app: FastifyInstance): Promise<void> => {
    // Creating an agent starts its first task; a patch may assign the next: each is the root
    // span of the task's trace (request-spans.ts).
    app.post('/api/v1/agents', { config: { startsTask: true } }, async (req, reply) => {
      const { agent, created } = await service.submitTask(withQueryNamespace(jsonBody(req), req.query as Query));
      return reply.status(created ? 201 : 200).send(toAgentResponse(agent));
    });

    app.get('/api/v1/agents', async (req) => {
      const q = req.query as Query;
      refuseQuery(q, PEER_LIST_FILTERS);
      const { items, ...paging } = await service.list(queryNamespaceOf(q), pageQuery(q));
      return { agents: items.map(toAgentResponse), ...paging };
    });

    app.get<{ Params: NameParams }>('/api/v1/agents/:name', async (req) => {
      return toAgentResponse(await service.get(namespaceOf(req.query as Query), req.params.name));
    });

    app.patch<{ Params: NameParams }>('/api/v1/agents/:name', { config: { startsTask: true } }, async (req, reply) => {
      const { agent, pending } = await service.patch(namespaceOf(req.query as Query), req.params.name, jsonBody(req));
      return reply.status(pending ? 202 : 200).send(toAgentResponse(agent));
    });

    app.delete<{ Params: NameParams }>('/api/v1/agents/:name', async (req, reply) => {
      const { agent, settled } = await service.delete(namespaceOf(req.query as Query), req.params.name);
      return reply.status(settled ? 200 : 202).send(toAgentResponse(agent));
    });

    app.post<{ Params: NameParams }>('/api/v1/agents/:name/cancel', async (req, reply) => {
      const { agent, settled, running } = await service.cancel(namespaceOf(req.query as Query), req.params.name);
      return reply.status(settled ? 200 : 202).send(cancelResponse(agent, settled, running));
    });

    app.get<{ Params: NameParams }>('/api/v1/agents/:name/events', async (req) => {
      const q = req.query as Query;
      refuseQuery(q, PEER_EVENT_CURSORS);
      const namespace = namespaceOf(q);
      const limit = intParam(q, 'limit', { min: 1, max: EVENTS_MAX_LIMIT, default: EVENTS_DEFAULT_LIMIT, clamp: true })!;
      const before = beforeSeq(q);
      const events = await service.history(namespace, req.params.name, limit, before);
      return { agent: req.params.name, namespace, events };
    });
  };
}
