// REST mirror of secrets: /api/v1/secrets. Answers carry names and keys, never values.

import type { FastifyInstance } from 'fastify';
import type { SecretService } from '../services/secret-service.js';
import { jsonBody } from '../body.js';
import { queryNamespaceOf, namespaceOf, type Query, withQueryNamespace } from '../params.js';

interface NameParams {
  name: string;
}

export function secretRoutes(service: SecretService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/v1/secrets', async (req, reply) => {
      return reply.status(201).send(await service.create(withQueryNamespace(jsonBody(req), req.query as Query)));
    });

    app.get('/api/v1/secrets', async (req) => {
      const q = req.query as Query;
      return { secrets: await service.list(queryNamespaceOf(q)) };
    });

    app.get<{ Params: NameParams }>('/api/v1/secrets/:name', async (req) => {
      return service.get(namespaceOf(req.query as Query), req.params.name);
    });

    app.put<{ Params: NameParams }>('/api/v1/secrets/:name', async (req, reply) => {
      const { secret, created } = await service.replace(queryNamespaceOf(req.query as Query), req.params.name, jsonBody(req));
      return reply.status(created ? 201 : 200).send(secret);
    });

    app.patch<{ Params: NameParams }>('/api/v1/secrets/:name', async (req) => {
      return service.patch(namespaceOf(req.query as Query), req.params.name, jsonBody(req));
    });

    app.delete<{ Params: NameParams }>('/api/v1/secrets/:name', async (req) => {
      return service.delete(namespaceOf(req.query as Query), req.params.name);
    });
  };
}
