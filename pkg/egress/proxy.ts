// The tools' egress proxy: an HTTP forward proxy in the server, for agents whose tools have no
// other way out (a network namespace whose only route is this proxy). `CONNECT host:port`
// tunnels HTTPS (and anything else over TCP); an absolute-form request (`GET http://host/path`)
// is forwarded as plain HTTP. Each request is authenticated as an agent with its model
// credential as the Basic password (`http://<anything>:<credential>@host:port` in HTTP(S)_PROXY,
// as curl and Node's clients send it), checked against the agent's egress rule by name, then
// resolved, and every address the name resolves to is checked inside the connection's own lookup
// (public only, never the server itself). Refusals answer 403 with the reason and are logged
// with the agent's namespace and name; a missing or unknown credential answers 407.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Duplex } from 'node:stream';
import { ApiError, toRestBody } from '../api/errors.js';
import { HOP_BY_HOP_HEADERS } from '../api/hop-by-hop.js';
import type { ObjectRef } from '../api/meta.js';
import { agentLogger, componentLogger, type Logger } from '../observability/logger.js';
import { type AddressClass, classifyAddress } from './addresses.js';
import { EgressRefusedError, type Refusal, refusingLookup, type Resolve } from './lookup.js';
import { addressRefusal, type EgressRule, hostRefusal } from './rules.js';

/** An agent incarnation a credential stands for (the model proxy's grant). */
export interface EgressGrant {
  ref: ObjectRef;
  uid: string;
}

export interface EgressProxyOptions {
  /** Who is calling: the agent a model credential belongs to (the model proxy's credentials). */
  credentials: { authenticate(credential: string | undefined): EgressGrant | undefined };
  /** The agent's egress rule (from its template); an agent without one is `Open`. */
  ruleFor(grant: EgressGrant): EgressRule | Promise<EgressRule>;
  /** Where the server itself listens: never reachable through the proxy, whatever the address class. */
  self(): { address: string; port: number }[];
  logger: Logger;
  /** Name resolution; default the system's. */
  resolve?: Resolve;
  /**
   * Tests only: how an address is classified (a test lets its loopback target through as
   * `public` to run a real tunnel). Never set by the server's wiring, so no configuration reaches it.
   */
  classifyForTests?: (address: string) => AddressClass | undefined;
  /** How long a connection to the target may take; default 10 s. */
  connectTimeoutMs?: number;
}

const REALM = 'agentplane egress';
// Not forwarded on plain HTTP: hop-by-hop headers and the proxy's own credential.
const HOP = new Set([...HOP_BY_HOP_HEADERS]);

type Decision = { ok: true; grant: EgressGrant; log: Logger; refuse: Refusal } | { ok: false; error: ApiError; log?: Logger };

export class EgressProxy {
  private readonly classify: (address: string) => AddressClass | undefined;

  constructor(private readonly o: EgressProxyOptions) {
    this.classify = o.classifyForTests ?? classifyAddress;
  }

  /** A `CONNECT host:port` request: the tunnel, or a refusal on the socket. */
  async connect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = parseAuthority(req.url ?? '');
    if (!target) return rawReply(client, new ApiError('BadRequest', 400, `CONNECT needs host:port, got ${JSON.stringify((req.url ?? '').slice(0, 200))}`));
    const d = await this.decide(req, target.host, target.port);
    if (!d.ok) return rawReply(client, d.error);
    const lookup = refusingLookup(d.refuse, this.o.resolve, this.classify);
    const upstream: Socket = connect({ host: target.host, port: target.port, lookup, timeout: this.o.connectTimeoutMs ?? 10_000 });
    upstream.once('timeout', () => upstream.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })));
    let open = false;
    upstream.once('connect', () => {
      open = true;
      upstream.setTimeout(0);
      d.log.info({ host: target.host, port: target.port, address: upstream.remoteAddress }, 'egress: tunnel opened');
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err) => {
      if (open) return void client.destroy();
      rawReply(client, this.failure(err, d.log, target.host, target.port));
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }

  /** An absolute-form request (`GET http://host/path`): forwarded as plain HTTP, redirects included as they are. */
  async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return reply(req, res, new ApiError('BadRequest', 400, 'the proxy takes absolute http:// URLs and CONNECT'));
    }
    if (url.protocol !== 'http:') return reply(req, res, new ApiError('BadRequest', 400, `the proxy forwards http:// only; use CONNECT for ${url.protocol}`));
    const port = url.port ? Number(url.port) : 80;
    const d = await this.decide(req, url.hostname, port);
    if (!d.ok) return reply(req, res, d.error);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    const up = httpRequest({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port,
      path: `${url.pathname}${url.search}`,
      method: req.method ?? 'GET',
      headers,
      lookup: refusingLookup(d.refuse, this.o.resolve, this.classify),
      agent: false,
      timeout: this.o.connectTimeoutMs ?? 10_000,
    });
    up.once('socket', (s) => s.once('connect', () => up.setTimeout(0)));
    up.once('timeout', () => up.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })));
    up.on('response', (r) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(r.statusCode ?? 502, out);
      r.pipe(res);
    });
    up.on('error', (err) => {
      if (res.headersSent) return void res.destroy();
      reply(req, res, this.failure(err, d.log, url.hostname, port));
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }

  /** Authenticates the caller and applies its rule to the host by name; the address rule goes into the lookup. */
  private async decide(req: IncomingMessage, host: string, port: number): Promise<Decision> {
    const grant = this.o.credentials.authenticate(basicPassword(req.headers['proxy-authorization']));
    if (!grant)
      return {
        ok: false,
        error: new ApiError('Unauthorized', 407, "proxy authentication required: the agent's model credential as the Basic password", {
          proxyAuthenticate: `Basic realm="${REALM}"`,
        }),
      };
    const log = agentLogger(componentLogger(this.o.logger, 'egress-proxy'), grant.ref.namespace, grant.ref.name);
    const rule = await this.o.ruleFor(grant);
    const byName = hostRefusal(rule, host);
    if (byName) {
      log.warn({ host, port, mode: rule.mode, reason: byName }, 'egress: refused');
      return { ok: false, error: forbidden(byName, host, port), log };
    }
    const refuse: Refusal = (cls, what, address) => {
      if (address && this.isSelf(address, port)) return `${what} is the agentplane server itself`;
      return addressRefusal(cls, what);
    };
    // An IP literal is connected to without a lookup: check it here.
    const literal = host.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      const why = refuse(this.classify(literal) ?? 'public', `host "${host}"`, literal);
      if (why) {
        log.warn({ host, port, mode: rule.mode, reason: why }, 'egress: refused');
        return { ok: false, error: forbidden(why, host, port), log };
      }
    }
    return { ok: true, grant, log, refuse };
  }

  private failure(err: Error, log: Logger, host: string, port: number): ApiError {
    if (err instanceof EgressRefusedError) {
      log.warn({ host, port, reason: err.message }, 'egress: refused');
      return forbidden(err.message, host, port);
    }
    const code = (err as NodeJS.ErrnoException).code ?? err.name;
    log.warn({ host, port, code }, 'egress: the target could not be reached');
    return new ApiError('BadGateway', 502, `${host}:${port} could not be reached (${code})`, { host, port });
  }

  /** Whether `address:port` is one of the server's own listeners (a wildcard listener: any local address). */
  private isSelf(address: string, port: number): boolean {
    const a = canonical(address);
    let local: Set<string> | undefined;
    for (const l of this.o.self()) {
      if (l.port !== port) continue;
      const la = canonical(l.address);
      if (la === a) return true;
      if (la === '0.0.0.0' || la === '::') {
        local ??= localAddresses();
        if (local.has(a) || classifyAddress(a) === 'loopback') return true;
      }
    }
    return false;
  }
}

/**
 * Serves the proxy on an HTTP server beside its routes: `CONNECT` requests and absolute-form
 * `http://` requests go to the proxy, everything else to the server's own handlers. Returns a
 * function that detaches it.
 */
export function attachEgressProxy(server: Server, proxy: EgressProxy): () => void {
  const onConnect = (req: IncomingMessage, socket: Duplex, head: Buffer): void => void proxy.connect(req, socket, head).catch(() => socket.destroy());
  const routes = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(req.url ?? '')) return void proxy.forward(req, res).catch(() => res.destroy());
    for (const r of routes) r.call(server, req, res);
  };
  server.on('connect', onConnect);
  server.removeAllListeners('request');
  server.on('request', onRequest);
  return () => {
    server.off('connect', onConnect);
    server.off('request', onRequest);
    for (const r of routes) server.on('request', r);
  };
}

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6). */
export function parseAuthority(s: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]@]+):(\d{1,5})$/.exec(s);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

/** The password of a `Basic` Proxy-Authorization header. */
function basicPassword(h: string | string[] | undefined): string | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(v?.trim() ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? undefined : decoded.slice(i + 1);
}

const forbidden = (why: string, host: string, port: number): ApiError =>
  new ApiError('Forbidden', 403, `egress to ${host}:${port} refused: ${why}`, { host, port });

function canonical(address: string): string {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped ? mapped[1] : a;
}

function localAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.add(canonical(i.address));
  return out;
}

function errorBody(err: ApiError): string {
  return JSON.stringify(toRestBody(err));
}

function reply(req: IncomingMessage, res: ServerResponse, err: ApiError): void {
  req.resume();
  if (res.headersSent) return void res.destroy();
  const body = errorBody(err);
  const challenge = typeof err.details.proxyAuthenticate === 'string' ? { 'proxy-authenticate': err.details.proxyAuthenticate } : {};
  res.writeHead(err.code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...challenge });
  res.end(body);
}

/** A refusal written on a CONNECT's raw socket, which then closes. */
function rawReply(client: Duplex, err: ApiError): void {
  if (client.destroyed) return;
  const body = errorBody(err);
  const challenge = typeof err.details.proxyAuthenticate === 'string' ? `proxy-authenticate: ${err.details.proxyAuthenticate}\r\n` : '';
  const status = { 400: 'Bad Request', 403: 'Forbidden', 407: 'Proxy Authentication Required', 502: 'Bad Gateway' }[err.code] ?? 'Error';
  client.end(
    `HTTP/1.1 ${err.code} ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${challenge}connection: close\r\n\r\n${body}`,
  );
}
