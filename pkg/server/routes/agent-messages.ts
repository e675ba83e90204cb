// POST /api/v1/agents/:name/messages: a message to an agent, from a person or another agent of
// its namespace (docs/messages.md). 200 when delivered (a follow-up or a new task), 202 when
// queued on a sleeping agent. A verb of its own: create on agents/messages.

import type { FastifyInstance } from 'fastify';
import { ANONYMOUS } from '../audit/event.js';
import type { AgentMessages } from '../services/agent-messages.js';
import { jsonBody } from '../body.js';
import { namespaceOf, type Query } from '../params.js';

export function agentMessageRoutes(messages: AgentMessages) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post<{ Params: { name: string } }>('/api/v1/agents/:name/messages', async (req, reply) => {
      const user = req.user?.username ?? ANONYMOUS.username;
      const { response, code } = await messages.send(namespaceOf(req.query as Query), req.params.name, jsonBody(req), user);
      return reply.status(code).send(response);
    });
  };
}
