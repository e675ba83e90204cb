// REST mirror of connectors: /api/v1/connectors (spec 4.2), plus GET .../tools.

import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../api/errors.js';
import type { ConnectorService } from '../services/connector-service.js';
import { pageQuery } from '../services/paging.js';
import { jsonBody } from '../body.js';
import { queryNamespaceOf, namespaceOf, type Query, withQueryNamespace } from '../params.js';

interface NameParams {
  name: string;
}

export function connectorRoutes(service: ConnectorService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/v1/connectors', async (req, reply) => {
      return reply.status(201).send(await service.create(withQueryNamespace(jsonBody(req), req.query as Query)));
    });

    app.get('/api/v1/connectors', async (req) => {
      const q = req.query as Query;
      const { items, ...paging } = await service.list(queryNamespaceOf(q), pageQuery(q));
      return { connectors: items, ...paging };
    });

    app.get<{ Params: NameParams }>('/api/v1/connectors/:name', async (req) => {
      return service.get(namespaceOf(req.query as Query), req.params.name);
    });

    app.delete<{ Params: NameParams }>('/api/v1/connectors/:name', async (req) => {
      const q = req.query as Query;
      return service.delete(namespaceOf(q), req.params.name, forceOf(q));
    });

    app.get<{ Params: NameParams }>('/api/v1/connectors/:name/tools', async (req) => {
      return service.tools(namespaceOf(req.query as Query), req.params.name);
    });
  };
}

function forceOf(q: Query): boolean {
  const v = q.force;
  if (v === undefined) return false;
  if (Array.isArray(v)) throw badRequest('query parameter "force" is given more than once');
  if (v === 'true' || v === '') return true;
  if (v === 'false') return false;
  throw badRequest('query parameter "force" must be "true" or "false"', { causes: [{ field: 'force', message: 'must be "true" or "false"' }] });
}
