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
/** How often the checks run for agentplane_ready{check} besides the /readyz calls. */
export const READINESS_REFRESH_MS = 10_000;

export interface SystemRouteOptions {
  /** Overrides READINESS_REFRESH_MS (tests use a short one). */
  readinessRefreshMs?: number;
}

export function systemRoutes(metrics: Metrics, readiness: readonly ReadinessCheck[] = [], opts: SystemRouteOptions = {}) {
  const openapi = buildOpenApi();
  const check = readinessReporter(metrics, readiness);
  return async (app: FastifyInstance): Promise<void> => {
    // agentplane_ready{check} is the last result of the /readyz checks, so an alert sees what the
    // probe sees; a scrape reads it and never waits on (nor loads) the event store. The checks
    // also run on a timer, rather than at a scrape that finds them stale: the gauge stays
    // current (within the period) with no probe calling /readyz (the embedded home), and the
    // store's load does not depend on how many Prometheus scrape, nor how often.
    let timer: NodeJS.Timeout | undefined;
    if (readiness.length) {
      app.addHook('onReady', async () => {
        void check();
        timer = setInterval(() => void check(), opts.readinessRefreshMs ?? READINESS_REFRESH_MS).unref();
      });
      app.addHook('onClose', async () => clearInterval(timer));
    }
    app.get('/healthz', async () => ({ status: 'ok' }));
    // Not ready while a store it needs is unreachable: the Service then sends requests to a
    // replica that can serve them (liveness stays ok, so the pod is not restarted for it).
    app.get('/readyz', async (_req, reply) => {
      const failed = (await check()).filter((r) => r.error !== undefined);
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

/** Runs every check and shows the results on agentplane_ready; a run that ends after a newer one shows nothing. */
function readinessReporter(metrics: Metrics, readiness: readonly ReadinessCheck[]): () => Promise<{ name: string; error?: string }[]> {
  let started = 0;
  let shown = 0;
  return async () => {
    const run = ++started;
    const results = await Promise.all(readiness.map(async (c) => ({ name: c.name, error: await failure(c) })));
    if (run > shown) {
      shown = run;
      for (const r of results) metrics.ready.set({ check: r.name }, r.error === undefined ? 1 : 0);
    }
    return results;
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
