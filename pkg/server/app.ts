// The HTTP server: fastify with agentplane's error contract. Every failure leaves as the REST
// error body; client mistakes (bad JSON, wrong content type, too large) never become a 500.
// Plain HTTP/1.1 for the embedded home; with `tls`, HTTPS serving HTTP/2 and HTTP/1.1 on one
// port for the cluster home (kube-apiserver's proxy speaks HTTP/2 and sends WebSocket upgrades
// as HTTP/1.1, which @fastify/websocket handles on the same server's 'upgrade' event).

import websocket from '@fastify/websocket';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { ApiError, internalError, isApiError, toRestBody } from '../api/errors.js';
import { asStorageError } from '../api/storage-errors.js';
import { componentLogger, type Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { selectWebSocketProtocol } from './auth/token-file.js';
import { installBodyParsers } from './body.js';
import { type BrowserGuardOptions, installBrowserGuard } from './browser-guard.js';
import { clientErrorHandler, requestFinished, trackRequestStart, uriTooLong as uriTooLongFor } from './client-errors.js';
import { sendError } from './error-reply.js';
import { RouteTable } from './route-table.js';
import { unsupportedMessage } from './unsupported.js';
import { installRequestSpans } from './request-spans.js';

export const BODY_LIMIT = 1024 * 1024;
/**
 * The longest request URL (path and query) in bytes: longer ones are refused with 414
 * URITooLong in the path's error format. Node itself stops reading a request whose request line
 * and headers pass MAX_HEADER_SIZE; those are answered on the socket, also in our format (414 if
 * the request line alone is too long, else 431).
 */
export const MAX_URL_LENGTH = 8192;
export const MAX_HEADER_SIZE = 16 * 1024;

/**
 * How long a client may take (docs/reliability.md "Slow and idle clients"). Node checks the
 * first two every `checkIntervalMs`; an answer is 408 RequestTimeout in the path's format.
 */
export interface HttpTimeouts {
  /** From the connection (or the previous response) to the end of the request's headers. */
  headersMs: number;
  /** To the end of the whole request, body included (not the response: event streams last). */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
  checkIntervalMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 30_000, requestMs: 60_000, keepAliveMs: 72_000, checkIntervalMs: 1_000 };

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
  /** Overrides of DEFAULT_HTTP_TIMEOUTS (tests use short ones). */
  timeouts?: Partial<HttpTimeouts>;
  /** The public listener's checks of what browsers send (browser-guard.ts); none when absent. */
  browserGuard?: BrowserGuardOptions;
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
  const app = newFastify(opts);
  const routes = new RouteTable();
  routes.track(app);
  installBodyParsers(app);
  await app.register(websocket, { options: { maxPayload: BODY_LIMIT, handleProtocols: selectWebSocketProtocol } });

  app.addHook('onRequest', async (req, reply) => {
    if (Buffer.byteLength(req.url) > MAX_URL_LENGTH) return sendError(req, reply, uriTooLong());
    // HTTP/1's parser enforces the header limit itself; HTTP/2's (nghttp2) refuses only past 64 KiB.
    if (req.raw.httpVersionMajor === 2 && headerBytes(req.raw.rawHeaders) > MAX_HEADER_SIZE) {
      return sendError(req, reply, new ApiError('RequestHeaderFieldsTooLarge', 431, `request headers are larger than the limit of ${MAX_HEADER_SIZE} bytes`));
    }
    return undefined;
  });
  // Before authentication and routes: a rebound Host or a cross-site request gets nothing else.
  if (opts.browserGuard) installBrowserGuard(app, opts.browserGuard);

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.code >= 500) req.log.error({ err }, apiErr.code === 503 ? apiErr.message : 'request failed');
    const retry = apiErr.details.retryAfterSeconds;
    if (typeof retry === 'number') void reply.header('retry-after', String(retry));
    void reply.status(apiErr.code).send(toRestBody(apiErr));
  });
  installNotFound(app, routes);
  installRequestSpans(app);

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    opts.metrics.httpRequests.inc({ route, method: req.method, status: String(reply.statusCode) });
    // A watch or a WebSocket lasts as long as its client wants: its duration is no latency.
    if (!isLongLived(req)) opts.metrics.httpDuration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });

  return { app, routes };
}

/** The fastify instance with the listener's limits and timeouts: plain HTTP, or TLS with HTTP/2 and HTTP/1.1. */
function newFastify(opts: AppOptions): FastifyInstance {
  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...opts.timeouts };
  const common = {
    loggerInstance: componentLogger(opts.logger, 'http'),
    // Requests are counted in metrics; per-request log lines would drown the agents' own.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // A path parameter (a name) may be as long as the URL: an over-long name then reaches its
    // route and gets the same 400/404 as any other bad name, not fastify's own 414.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    // Typed for the HTTP/1 server; the same function serves the HTTP/2 one.
    frameworkErrors: ((err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
      const apiErr =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? uriTooLong()
          : err.code === 'FST_ERR_BAD_URL'
            ? new ApiError('BadRequest', 400, `malformed URL: ${err.message}`)
            : toApiError(err);
      void sendError(req, reply, apiErr);
    }) as never,
    clientErrorHandler: clientErrorHandler({ maxUrlLength: MAX_URL_LENGTH, maxHeaderSize: MAX_HEADER_SIZE }),
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http2SessionTimeout: timeouts.keepAliveMs,
    return503OnClosing: true,
    forceCloseConnections: true,
  };
  const app = (opts.tls
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
    : Fastify({
        ...common,
        http: {
          maxHeaderSize: MAX_HEADER_SIZE,
          headersTimeout: timeouts.headersMs,
          requestTimeout: timeouts.requestMs,
          connectionsCheckingInterval: timeouts.checkIntervalMs,
        },
      })) as unknown as FastifyInstance;
  if (opts.tls) {
    // The HTTPS server's HTTP/1.1 connections: Node's HTTP/2 server takes none of these as
    // options (it hard-codes 60 s / 300 s / 30 s and the default header size), but reads them
    // from itself, the check interval when it starts listening.
    Object.assign(app.server, {
      maxHeaderSize: MAX_HEADER_SIZE,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
    });
    app.server.on('secureConnection', (socket: TLSSocket) => {
      if (socket.alpnProtocol !== 'h2') trackRequestStart(socket, MAX_URL_LENGTH + 1);
    });
  } else {
    app.server.on('connection', (socket: Socket) => trackRequestStart(socket, MAX_URL_LENGTH + 1));
  }
  app.server.on('request', (req: { socket?: Socket; httpVersionMajor?: number }, res: { on(e: 'finish', f: () => void): void }) => {
    if (req.httpVersionMajor === 1) res.on('finish', () => requestFinished(req.socket));
  });
  return app;
}

/** No route: 405 with `Allow` when the path exists under other methods, else 404. */
function installNotFound(app: FastifyInstance, routes: RouteTable): void {
  const unmatched = (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = req.url.split('?')[0];
    const allowed = routes.methodsFor(path);
    // What clients of the peer project call and agentplane does not serve says so, and what instead.
    const unsupported = unsupportedMessage(req.method, path);
    if (allowed.length) {
      const e = new ApiError(
        'MethodNotAllowed',
        405,
        `${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}${unsupported ? `. ${unsupported}` : ''}`,
      );
      return reply.status(405).header('Allow', allowed.join(', ')).send(toRestBody(e));
    }
    const e = new ApiError('NotFound', 404, unsupported ? `no route for ${req.method} ${path}: ${unsupported}` : `no route for ${req.method} ${path}`);
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

const uriTooLong = (): ApiError => uriTooLongFor(MAX_URL_LENGTH);

/** The size of a request's headers as HTTP/1 would count it: `name: value\r\n` each. */
function headerBytes(raw: string[]): number {
  let n = 0;
  for (let i = 0; i + 1 < raw.length; i += 2) n += Buffer.byteLength(raw[i]) + Buffer.byteLength(raw[i + 1]) + 4;
  return n;
}

/** A WebSocket upgrade, a watch or a followed log (`?watch=true`, `?follow=true`): left out of agentplane_http_request_duration_seconds. */
function isLongLived(req: FastifyRequest): boolean {
  if (req.headers.upgrade !== undefined) return true;
  const q = req.query as Record<string, unknown> | undefined;
  return [q?.watch, q?.follow].some((v) => v === 'true' || v === '1' || v === true);
}
