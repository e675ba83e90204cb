// REST mirror of squads: /api/v1/squads (spec 4.3, DESIGN decisions).

import type { FastifyInstance } from 'fastify';
import { pageQuery } from '../services/paging.js';
import type { SquadService } from '../services/squad-service.js';
import { jsonBody } from '../body.js';
import { queryNamespaceOf, namespaceOf, type Query, withQueryNamespace } from '../params.js';

interface NameParams {
  name: string;
}

export function squadRoutes(squads: SquadService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/v1/squads', async (req, reply) => {
      return reply.status(201).send(await squads.toResponse(await squads.create(withQueryNamespace(jsonBody(req), req.query as Query))));
    });

    app.get('/api/v1/squads', async (req) => {
      const q = req.query as Query;
      const { items, ...paging } = await squads.list(queryNamespaceOf(q), pageQuery(q));
      return { squads: await Promise.all(items.map((s) => squads.toResponse(s))), ...paging };
    });

    app.get<{ Params: NameParams }>('/api/v1/squads/:name', async (req) => {
      return squads.toResponse(await squads.get(namespaceOf(req.query as Query), req.params.name));
    });

    app.patch<{ Params: NameParams }>('/api/v1/squads/:name', async (req) => {
      return squads.toResponse(await squads.patch(namespaceOf(req.query as Query), req.params.name, jsonBody(req)));
    });

    app.delete<{ Params: NameParams }>('/api/v1/squads/:name', async (req) => {
      return squads.toResponse(await squads.delete(namespaceOf(req.query as Query), req.params.name));
    });

    app.post<{ Params: NameParams }>('/api/v1/squads/:name/members', async (req) => {
      return squads.toResponse(await squads.addMember(namespaceOf(req.query as Query), req.params.name, jsonBody(req)));
    });

    app.delete<{ Params: NameParams & { agent: string } }>('/api/v1/squads/:name/members/:agent', async (req) => {
      return squads.toResponse(await squads.removeMember(namespaceOf(req.query as Query), req.params.name, req.params.agent));
    });

    app.post<{ Params: NameParams }>('/api/v1/squads/:name/break-up', async (req) => {
      return squads.toResponse(await squads.breakUp(namespaceOf(req.query as Query), req.params.name));
    });
  };
}
