// Health, readiness, the OpenAPI document and Prometheus metrics.

import type { FastifyInstance } from 'fastify';
import { ApiError, toRestBody } from '../../api/errors.js';
import { buildOpenApi } from '../../api/openapi.js';
import type { Metrics } from '../../observability/metrics.js';

/** A dependency readiness waits on: rejects, saying why, while it is unavailable. */
export type ReadinessCheck = { name: string; check: () => Promise<void> };

export function systemRoutes(metrics: Metrics, readiness: ReadinessCheck[] = []) {
  const openapi = buildOpenApi();
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/healthz', async () => ({ status: 'ok' }));
    // Not ready while a dependency (the shared event store) is unreachable: the Service sends
    // requests to the replicas that can serve them. Answered here, not thrown: a probe every few
    // seconds must not log an error each time (the dependency logs its outage itself).
    app.get('/readyz', async (_req, reply) => {
      for (const { name, check } of readiness) {
        try {
          await check();
        } catch (err) {
          const e = new ApiError('ServiceUnavailable', 503, `not ready: ${name}: ${(err as Error)?.message ?? String(err)}`);
          return reply.status(503).send(toRestBody(e));
        }
      }
      return { status: 'ok' };
    });
    app.get('/openapi.json', async () => openapi);
    app.get('/metrics', async (_req, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    });
  };
}
