// REST routes of a kind served by a KindService: /api/v1/<plural> (list, create) and
// /api/v1/<plural>/:name (get, patch, delete), namespaced by `?namespace=`. A list answers
// `{<plural>: [...], continue?, remainingItemCount?}`.

import type { FastifyInstance } from 'fastify';
import type { Resource } from '../../api/meta.js';
import type { KindService } from '../services/kind-service.js';
import { pageQuery } from '../services/paging.js';
import { jsonBody } from '../body.js';
import { namespaceOf, type Query, queryNamespaceOf, withQueryNamespace } from '../params.js';

interface NameParams {
  name: string;
}

export function kindRoutes<S extends object, T extends Resource<S, object>>(plural: string, service: KindService<S, T>, toResponse: (o: T) => unknown) {
  const base = `/api/v1/${plural}`;
  return async (app: FastifyInstance): Promise<void> => {
    app.post(base, async (req, reply) => {
      return reply.status(201).send(toResponse(await service.create(withQueryNamespace(jsonBody(req), req.query as Query))));
    });

    app.get(base, async (req) => {
      const q = req.query as Query;
      const { items, ...paging } = await service.list(queryNamespaceOf(q), pageQuery(q));
      return { [plural]: items.map(toResponse), ...paging };
    });

    app.get<{ Params: NameParams }>(`${base}/:name`, async (req) => {
      return toResponse(await service.get(namespaceOf(req.query as Query), req.params.name));
    });

    app.patch<{ Params: NameParams }>(`${base}/:name`, async (req) => {
      return toResponse(await service.patch(namespaceOf(req.query as Query), req.params.name, jsonBody(req)));
    });

    app.delete<{ Params: NameParams }>(`${base}/:name`, async (req) => {
      return toResponse(await service.delete(namespaceOf(req.query as Query), req.params.name));
    });
  };
}
