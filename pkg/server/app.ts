// The HTTP server: fastify with agentplane's error contract. Every failure leaves as the REST
// error body; client mistakes (bad JSON, wrong content type, too large) never become a 500.
// Plain HTTP/1.1 for the embedded home; with `tls`, HTTPS serving HTTP/2 and HTTP/1.1 on one
// port for the cluster home (kube-apiserver's proxy speaks HTTP/2 and sends WebSocket upgrades
// as HTTP/1.1, which @fastify/websocket handles on the same server's 'upgrade' event).

import websocket from '@fastify/websocket';
import http from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { ApiError, internalError, isApiError, toRestBody } from '../api/errors.js';
import { asStorageError } from '../api/storage-errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { selectWebSocketProtocol } from './auth/token-file.js';
import { installBodyParsers } from './body.js';
import { errorBodyFor, sendError } from './error-reply.js';
import { RouteTable } from './route-table.js';

export const BODY_LIMIT = 1024 * 1024;
/**
 * The longest request URL (path and query) in bytes: longer ones are refused with 414
 * URITooLong in the path's error format. Node itself stops reading a request whose request line
 * and headers pass MAX_HEADER_SIZE; those are answered on the socket, also in our format (414 if
 * the request line alone is too long, else 431).
 */
export const MAX_URL_LENGTH = 8192;
export const MAX_HEADER_SIZE = 16 * 1024;

export interface TlsOptions {
  /** PEM private key of the serving certificate. */
  key: Buffer;
  /** PEM serving certificate (may already include its chain). */
  cert: Buffer;
  /**
   * PEM certificates sent after `cert` as its chain (intermediates). Not used to verify
   * clients: client certificates are requested but checked by pkg/server/auth against the
   * cluster's CAs. (Node's own `ca` option would also advertise these as the only acceptable
   * client CAs, and Go clients, kube-apiserver's proxy among them, would then withhold a
   * certificate from another CA.)
   */
  ca?: Buffer;
}

export interface AppOptions {
  logger: Logger;
  metrics: Metrics;
  /** Serve HTTPS (HTTP/2 + HTTP/1.1) instead of plain HTTP. */
  tls?: TlsOptions;
}

export interface App {
  app: FastifyInstance;
  /** What is served, for 405s and for checking the OpenAPI document. */
  routes: RouteTable;
}

export async function createApp(opts: AppOptions): Promise<FastifyInstance> {
  return (await createServedApp(opts)).app;
}

export async function createServedApp(opts: AppOptions): Promise<App> {
  const common = {
    loggerInstance: opts.logger.child({ component: 'http' }),
    // Requests are counted in metrics; per-request log lines would drown the agents' own.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // A path parameter (a name) may be as long as the URL: an over-long name then reaches its
    // route and gets the same 400/404 as any other bad name, not fastify's own 414.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    // Typed for the HTTP/1 server; the same function serves the HTTP/2 one.
    frameworkErrors: ((err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
      const apiErr =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? uriTooLong() : err.code === 'FST_ERR_BAD_URL' ? new ApiError('BadRequest', 400, `malformed URL: ${err.message}`) : toApiError(err);
      void sendError(req, reply, apiErr);
    }) as never,
    clientErrorHandler,
    return503OnClosing: true,
    forceCloseConnections: true,
  };
  const app = (
    opts.tls
      ? Fastify({
          ...common,
          http2: true,
          https: {
            allowHTTP1: true,
            key: opts.tls.key,
            cert: opts.tls.ca ? Buffer.concat([opts.tls.cert, Buffer.from('\n'), opts.tls.ca]) : opts.tls.cert,
            // Ask for a client certificate, but let every connection through: which CA applies
            // (front proxy or client CA) is decided per request by the auth filter.
            requestCert: true,
            rejectUnauthorized: false,
            minVersion: 'TLSv1.2',
          },
        })
      : Fastify({ ...common, http: { maxHeaderSize: MAX_HEADER_SIZE } })
  ) as unknown as FastifyInstance;

  const routes = new RouteTable();
  routes.track(app);
  installBodyParsers(app);
  await app.register(websocket, { options: { maxPayload: BODY_LIMIT, handleProtocols: selectWebSocketProtocol } });

  app.addHook('onRequest', async (req, reply) => {
    if (Buffer.byteLength(req.url) > MAX_URL_LENGTH) return sendError(req, reply, uriTooLong());
    return undefined;
  });

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.code >= 500) req.log.error({ err }, apiErr.code === 503 ? apiErr.message : 'request failed');
    const retry = apiErr.details.retryAfterSeconds;
    if (typeof retry === 'number') void reply.header('retry-after', String(retry));
    void reply.status(apiErr.code).send(toRestBody(apiErr));
  });

  /** No route: 405 with `Allow` when the path exists under other methods, else 404. */
  const unmatched = (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = req.url.split('?')[0]!;
    const allowed = routes.methodsFor(path);
    if (allowed.length) {
      const e = new ApiError('MethodNotAllowed', 405, `${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`);
      return reply.status(405).header('Allow', allowed.join(', ')).send(toRestBody(e));
    }
    const e = new ApiError('NotFound', 404, `no route for ${req.method} ${path}`);
    return reply.status(404).send(toRestBody(e));
  };
  // Before body parsing: a method no route serves but that may carry a body (QUERY, say) would
  // otherwise be refused for its Content-Type (400) before the not-found handler runs.
  app.addHook('onRequest', async (req, reply) => {
    if (req.is404 && !reply.sent) return unmatched(req, reply);
    return undefined;
  });
  app.setNotFoundHandler((req, reply) => {
    void unmatched(req, reply);
  });

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    opts.metrics.httpRequests.inc({ route, method: req.method, status: String(reply.statusCode) });
    opts.metrics.httpDuration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });

  return { app, routes };
}

/** Maps fastify's own errors (parsing, limits) to the API's reasons. */
export function toApiError(err: FastifyError | ApiError): ApiError {
  if (isApiError(err)) return err;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('RequestEntityTooLarge', 413, `request body is larger than the limit of ${BODY_LIMIT} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UnsupportedMediaType', 415, 'Content-Type must be application/json');
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
  return asStorageError(err) ?? internalError();
}

const uriTooLong = (): ApiError => new ApiError('URITooLong', 414, `request URL is longer than the limit of ${MAX_URL_LENGTH} bytes`);

/**
 * Errors Node's HTTP parser meets before there is a request (fastify's default answers them in
 * its own format): a request line or headers past MAX_HEADER_SIZE, a timeout, a malformed
 * request. The path, when the request line can be read, picks the error format.
 */
function clientErrorHandler(error: Error, socket: Socket): void {
  const err = error as Error & { code?: string; rawPacket?: Buffer };
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const head = err.rawPacket ? err.rawPacket.subarray(0, MAX_HEADER_SIZE + 1024).toString('latin1') : '';
  const lineEnd = head.indexOf('\r\n');
  const requestLine = lineEnd >= 0 ? head.slice(0, lineEnd) : head;
  const target = /^[A-Z]+ (\S+)/.exec(requestLine)?.[1] ?? '';
  let apiErr: ApiError;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') apiErr = new ApiError('RequestTimeout', 408, 'the request was not received in time');
  else if (err.code === 'HPE_HEADER_OVERFLOW') {
    apiErr =
      lineEnd < 0 || requestLine.length > MAX_URL_LENGTH
        ? uriTooLong()
        : new ApiError('RequestHeaderFieldsTooLarge', 431, `request headers are larger than the limit of ${MAX_HEADER_SIZE} bytes`);
  } else apiErr = new ApiError('BadRequest', 400, 'malformed HTTP request');
  if (socket.writable) {
    const body = JSON.stringify(errorBodyFor(target.split('?')[0]!, apiErr));
    socket.write(
      `HTTP/1.1 ${apiErr.code} ${http.STATUS_CODES[apiErr.code] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
