// Health, readiness, the OpenAPI document and Prometheus metrics.

import type { FastifyInstance } from 'fastify';
import { ApiError, toRestBody } from '../../api/errors.js';
import { buildOpenApi } from '../../api/openapi.js';
import type { Metrics } from '../../observability/metrics.js';

/** One thing /readyz asks: resolves when it can serve, rejects (with why) when it cannot. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

/** How long one check may take before it counts as failed: a hung store is not ready. */
const CHECK_TIMEOUT_MS = 2_000;

export function systemRoutes(metrics: Metrics, readiness: readonly ReadinessCheck[] = []) {
  const openapi = buildOpenApi();
  // The same checks as agentplane_ready{check}, so an alert sees what the probe sees.
  metrics.collectReadiness(async () => {
    const passed = await Promise.all(readiness.map(async (c): Promise<[string, number]> => [c.name, (await failure(c)) === undefined ? 1 : 0]));
    return Object.fromEntries(passed);
  });
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/healthz', async () => ({ status: 'ok' }));
    // Not ready while a store it needs is unreachable: the Service then sends requests to a
    // replica that can serve them (liveness stays ok, so the pod is not restarted for it).
    app.get('/readyz', async (_req, reply) => {
      const failed = (await Promise.all(readiness.map(async (c) => ({ name: c.name, error: await failure(c) })))).filter((r) => r.error !== undefined);
      if (!failed.length) return { status: 'ok' };
      // Answered here, not thrown: a probe every few seconds must not log an error each time (the
      // dependency logs its outage itself).
      const e = new ApiError('ServiceUnavailable', 503, `not ready: ${failed.map((f) => `${f.name}: ${f.error}`).join('; ')}`, {
        causes: failed.map((f) => ({ field: f.name, message: f.error! })),
      });
      return reply.code(503).send(toRestBody(e));
    });
    app.get('/openapi.json', async () => openapi);
    app.get('/metrics', async (_req, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    });
  };
}

/** Why the check failed, or undefined when it passed in time. */
async function failure(c: ReadinessCheck): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([c.check(), timeout]);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}
