// The HTTP server: fastify with agentplane's error contract. Every failure leaves as the REST
// error body; client mistakes (bad JSON, wrong content type, too large) never become a 500.

import websocket from '@fastify/websocket';
import Fastify, { type FastifyError, type FastifyInstance, LogController } from 'fastify';
import { ApiError, internalError, isApiError, toRestBody } from '../api/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';

export const BODY_LIMIT = 1024 * 1024;

export interface AppOptions {
  logger: Logger;
  metrics: Metrics;
}

export async function createApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger.child({ component: 'http' }),
    // Requests are counted in metrics; per-request log lines would drown the agents' own.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: true,
  }) as unknown as FastifyInstance;

  await app.register(websocket, { options: { maxPayload: BODY_LIMIT } });

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.code >= 500) req.log.error({ err }, 'request failed');
    void reply.status(apiErr.code).send(toRestBody(apiErr));
  });

  app.setNotFoundHandler((req, reply) => {
    const e = new ApiError('NotFound', 404, `no route for ${req.method} ${req.url.split('?')[0]}`);
    void reply.status(404).send(toRestBody(e));
  });

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    opts.metrics.httpRequests.inc({ route, method: req.method, status: String(reply.statusCode) });
    opts.metrics.httpDuration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });

  return app;
}

/** Maps fastify's own errors (parsing, limits) to the API's reasons. */
function toApiError(err: FastifyError | ApiError): ApiError {
  if (isApiError(err)) return err;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('RequestEntityTooLarge', 413, `request body is larger than the limit of ${BODY_LIMIT} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UnsupportedMediaType', 415, 'Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('BadRequest', 400, 'request body is empty; a JSON object is required');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('BadRequest', 400, 'Content-Length does not match the body');
  }
  if (err instanceof SyntaxError || (err as { statusCode?: number }).statusCode === 400) {
    return new ApiError('BadRequest', 400, `malformed request: ${err.message}`);
  }
  const status = (err as { statusCode?: number }).statusCode;
  if (status && status >= 400 && status < 500) {
    return new ApiError('BadRequest', status, err.message);
  }
  return internalError();
}
