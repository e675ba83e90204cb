// The connector gateway: the engine's only way to a connector. The engine sends its MCP requests
// (Streamable HTTP: POST with JSON or SSE answers, GET for the server's SSE stream, DELETE to end
// a session) to <server>/internal/v1/connectors/<namespace>/<name>/mcp with its agent's model
// credential, in the header it sends the model proxy. The gateway checks the credential and asks
// the wiring whether that agent may use the connector now (attached, secret bound to the URL);
// then it forwards the request to the connector's URL with the connector's secret added, and
// streams the answer back chunk by chunk.
//
// The secret goes to the bound URL only: redirects are never followed, and a 3xx reaches the
// engine without its Location, so the engine does not go there itself (with its credential)
// either. The address connected to is checked after DNS, inside the connection's lookup.

import { Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ApiError, toRestBody } from '../api/errors.js';
import { HOP_BY_HOP_HEADERS } from '../api/hop-by-hop.js';
import type { Logger } from '../observability/logger.js';
import { credentialOf } from '../modelproxy/proxy.js';
import type { GrantAuthenticator, ModelGrant } from '../modelproxy/index.js';
import { type EgressPolicy, EgressRefusedError, guardedLookup, type Resolve, urlEgressRefusal } from './egress.js';

/** Where a request for a connector goes, and what is added to it. */
export interface GatewayTarget {
  url: string;
  headers: Record<string, string>;
  /** The secret's value: never written into a log or error. */
  token?: string;
}

export type GatewayDecision = { ok: true; target: GatewayTarget } | { ok: false; error: ApiError };

export interface ConnectorGatewayOptions {
  /** Who is calling: the model proxy's credentials (the same per-agent credential). */
  credentials: GrantAuthenticator;
  /** Whether the grant's agent may use `namespace/name` now, and how to reach it (ConnectorService.gatewayTarget). */
  target(grant: ModelGrant, namespace: string, name: string): Promise<GatewayDecision>;
  /** Where the server may connect (the connectors' policy). */
  egress: EgressPolicy;
  logger: Logger;
  /** Name resolution (tests). */
  resolve?: Resolve;
}

const METHODS = new Set(['GET', 'POST', 'DELETE']);
// Never forwarded: hop-by-hop headers, the caller's credential, cookies, what the proxy sets.
const DROP_REQUEST = new Set([...HOP_BY_HOP_HEADERS, 'host', 'authorization', 'x-api-key', 'cookie', 'forwarded']);
// Never passed back: hop-by-hop headers, a redirect's target, cookies, and an auth challenge
// (it would send the engine's MCP client looking for an OAuth server on its own).
const DROP_RESPONSE = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'location',
  'content-location',
  'refresh',
  'set-cookie',
  'www-authenticate',
]);

export class ConnectorGateway {
  private readonly agents: { http: HttpAgent; https: HttpsAgent };
  private readonly lookup: ReturnType<typeof guardedLookup>;

  constructor(private readonly o: ConnectorGatewayOptions) {
    this.lookup = guardedLookup(o.egress, o.resolve);
    // Keep-alive: an MCP session is many requests. Every new socket is checked by the lookup.
    this.agents = { http: new HttpAgent({ keepAlive: true, noDelay: true }), https: new HttpsAgent({ keepAlive: true, noDelay: true }) };
  }

  /** Serves one engine request for connector `namespace/name`. */
  async handle(req: IncomingMessage, res: ServerResponse, namespace: string, name: string): Promise<void> {
    const grant = this.o.credentials.authenticate(credentialOf(req.headers));
    if (!grant) return reject(req, res, new ApiError('Unauthorized', 401, 'a valid agentplane model credential is required'));
    const log = this.o.logger.child({ namespace: grant.ref.namespace, name: grant.ref.name, connector: name });
    const method = (req.method ?? 'GET').toUpperCase();
    if (!METHODS.has(method)) return reject(req, res, new ApiError('MethodNotAllowed', 405, `the connector gateway takes GET, POST and DELETE, not ${method}`));
    const decision = await this.o.target(grant, namespace, name);
    if (!decision.ok) {
      log.warn({ reason: decision.error.message }, 'connector gateway: refused');
      return reject(req, res, decision.error);
    }
    const { target } = decision;
    // An IP literal is connected to without a lookup: check it here.
    const literal = urlEgressRefusal(target.url, this.o.egress);
    if (literal) return this.refused(req, res, log, name, literal);
    const url = new URL(target.url);
    const tls = url.protocol === 'https:';
    const up = (tls ? httpsRequest : httpRequest)(url, {
      method,
      headers: forwardHeaders(req.headers, target.headers),
      lookup: this.lookup,
      agent: tls ? this.agents.https : this.agents.http,
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.on('response', (r) => this.answer(r, res, log, name));
    up.on('error', (err) => {
      const refused = err instanceof EgressRefusedError ? err : undefined;
      if (refused) return this.refused(req, res, log, name, refused.message);
      const code = (err as NodeJS.ErrnoException).code ?? err.name;
      log.warn({ code }, 'connector gateway: the connector could not be reached');
      if (res.headersSent) return void res.destroy();
      send(res, new ApiError('BadGateway', 502, `connector "${name}" could not be reached (${code})`, { kind: 'Connector', name }));
    });
    // The body streams as it comes (a POST's JSON-RPC message).
    req.pipe(up);
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private answer(up: IncomingMessage, res: ServerResponse, log: Logger, name: string): void {
    const status = up.statusCode ?? 502;
    if (status >= 300 && status < 400) {
      // Not followed, and not handed on: the engine would follow it itself.
      up.resume();
      log.warn({ status }, 'connector gateway: the connector answered a redirect; not followed');
      const body = JSON.stringify(
        toRestBody(
          new ApiError(
            'BadGateway',
            status,
            `connector "${name}" answered a redirect (HTTP ${status}); agentplane does not follow redirects: set the connector's URL to the final address`,
            { kind: 'Connector', name },
          ),
        ),
      );
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !DROP_RESPONSE.has(k)) headers[k] = v;
    res.writeHead(status, headers);
    // Server-sent events: the headers now, each chunk as it arrives.
    res.flushHeaders();
    up.pipe(res);
    up.on('error', () => res.destroy());
    up.on('aborted', () => res.destroy());
  }

  private refused(req: IncomingMessage, res: ServerResponse, log: Logger, name: string, why: string): void {
    log.warn({ reason: why }, 'connector gateway: address refused');
    if (res.headersSent) return void res.destroy();
    reject(req, res, new ApiError('Forbidden', 403, `connector "${name}": the server does not connect there: ${why}`, { kind: 'Connector', name }));
  }
}

/** The caller's headers without its credential and hop-by-hop ones, plus the connector's secret. */
function forwardHeaders(h: IncomingMessage['headers'], auth: Record<string, string>): OutgoingHttpHeaders {
  const set = new Set(Object.keys(auth).map((k) => k.toLowerCase()));
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || DROP_REQUEST.has(k) || set.has(k) || k.startsWith('x-forwarded-') || k.startsWith(':')) continue;
    out[k] = v;
  }
  return { ...out, ...auth };
}

/** Answers with an error, draining the request body. */
function reject(req: IncomingMessage, res: ServerResponse, err: ApiError): void {
  req.resume();
  send(res, err);
}

function send(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify(toRestBody(err));
  res.writeHead(err.code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
