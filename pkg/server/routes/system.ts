// Health, readiness, the OpenAPI document and Prometheus metrics.

import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from '../../api/openapi.js';
import type { Metrics } from '../../observability/metrics.js';

export function systemRoutes(metrics: Metrics) {
  const openapi = buildOpenApi();
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/healthz', async () => ({ status: 'ok' }));
    app.get('/readyz', async () => ({ status: 'ok' }));
    app.get('/openapi.json', async () => openapi);
    app.get('/metrics', async (_req, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    });
  };
}
