// What a web page in the user's browser may make the server do: nothing, unless the page is the
// server's own (the dashboard at /ui). Three checks, before authentication and any route:
//
//  - Host (DNS rebinding): a page on a name that resolves to 127.0.0.1 is same-origin with
//    itself, so the browser lets it read the answers. Only the names this server is reached by
//    are answered: loopback (127.0.0.0/8, [::1], localhost, any port), the bound address, any IP
//    literal when bound to a wildcard address (an address cannot be rebound), and the names
//    given with --allowed-hosts. Anything else is 421 Misdirected Request.
//  - Origin and Sec-Fetch-Site (CSRF, cross-site WebSocket hijacking): a state-changing request
//    (any method but GET, HEAD, OPTIONS) or a WebSocket upgrade that a browser sent from another
//    origin is 403. As Go's net/http CrossOriginProtection: Sec-Fetch-Site, when sent, must be
//    same-origin or none; an Origin, when sent, must name the Host the request came to. Clients
//    that send neither (curl, the CLI, SDKs, kubectl, workers) are not browsers and pass.
//  - Content-Type: a POST, PUT or PATCH that names a type or carries a body must be JSON (or a
//    Kubernetes patch type): the types a page may send cross-site without asking first
//    (text/plain, forms) are 415. A body-less POST without a Content-Type stays accepted
//    (docs/decisions.md "Requests from browsers").
//
// The workers' own paths (the control channel, the model proxy) keep their protocol: the Host
// and Origin checks apply, the Content-Type check does not.

import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../api/errors.js';
import { CONTROL_PATH, MODEL_PROXY_PATH } from '../api/worker-protocol.js';
import { MCP_PATH } from './auth/attributes.js';
import { isLoopbackHost } from './auth/token-file.js';
import { pathOf, sendError } from './error-reply.js';
import { underAny } from './path-prefix.js';

export interface BrowserGuardOptions {
  /**
   * Answer only requests whose Host is allowed. Off in the cluster home unless --allowed-hosts is
   * given: requests arrive through kube-apiserver and Services, under names the server cannot know.
   */
  checkHost: boolean;
  /** Host names besides loopback (`a.example`; `.example.com` for it and every name under it). */
  allowedHosts?: readonly string[];
  /** The address the server binds: allowed as a Host; a wildcard (0.0.0.0, ::) allows every IP literal. */
  bindHost?: string;
}

/** The media types a POST, PUT or PATCH may carry. */
export const ACCEPTED_BODY_TYPES = [
  'application/json',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const WORKER_PATHS = [CONTROL_PATH, MODEL_PROXY_PATH];
const isWorkerPath = (path: string): boolean => underAny(path, WORKER_PATHS);

/** Adds the checks to `app` (the public listener), as its first hooks. */
export function installBrowserGuard(app: FastifyInstance, opts: BrowserGuardOptions): void {
  const allowed = hostAllowList(opts);
  app.addHook('onRequest', async (req, reply) => {
    const host = hostOf(req);
    if (opts.checkHost && host !== undefined && !allowed(host)) return refuse(req, reply, misdirected(host));
    const upgrade = req.headers.upgrade?.toLowerCase() === 'websocket';
    // The MCP endpoint checks the Origin of every request, as the MCP specification asks of a
    // Streamable HTTP server (DNS rebinding), whatever the method.
    if (upgrade || !SAFE_METHODS.has(req.method) || pathOf(req.url) === MCP_PATH) {
      const why = crossOrigin(req, host);
      if (why) {
        req.log.info(
          { method: req.method, path: pathOf(req.url), origin: req.headers.origin, secFetchSite: req.headers['sec-fetch-site'] },
          'refused a cross-origin request',
        );
        return refuse(req, reply, new ApiError('Forbidden', 403, why));
      }
    }
    if (BODY_METHODS.has(req.method) && !isWorkerPath(pathOf(req.url))) {
      const refusal = bodyTypeRefusal(req);
      if (refusal) return refuse(req, reply, refusal);
    }
    return undefined;
  });
}

/** The request's Host (HTTP/2: :authority), lowercased; undefined when it sent none. */
function hostOf(req: FastifyRequest): string | undefined {
  const h = req.headers.host ?? req.headers[':authority'];
  const v = Array.isArray(h) ? h[0] : h;
  return v ? v.trim().toLowerCase() : undefined;
}

/** The host name of a Host value (`name`, `name:port`, `[v6]:port`), without brackets or a final dot. */
export function hostName(host: string): string | undefined {
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return undefined;
  }
  // A Host with a path, credentials or a query is not a host.
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || host.includes('/')) return undefined;
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

const WILDCARDS = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0', '']);

/** Whether a Host value is one this server answers to. */
export function hostAllowList(opts: Pick<BrowserGuardOptions, 'allowedHosts' | 'bindHost'>): (host: string) => boolean {
  const names = new Set<string>();
  const suffixes: string[] = [];
  for (const raw of opts.allowedHosts ?? []) {
    const n = raw.trim().toLowerCase().replace(/\.$/, '');
    if (n.startsWith('.')) suffixes.push(n);
    else if (n) names.add(n.replace(/^\[(.*)\]$/, '$1'));
  }
  const bind = opts.bindHost
    ?.trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  const wildcard = bind !== undefined && WILDCARDS.has(bind);
  if (bind && !wildcard) names.add(bind);
  return (host) => {
    const name = hostName(host);
    if (name === undefined) return false;
    if (isLoopbackHost(name) || names.has(name)) return true;
    if (wildcard && isIP(name)) return true;
    return suffixes.some((s) => name === s.slice(1) || name.endsWith(s));
  };
}

/** Why a browser's request from another site or origin is refused; undefined when it is not one. */
function crossOrigin(req: FastifyRequest, host: string | undefined): string | undefined {
  const site = header(req, 'sec-fetch-site')?.toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `refused a request a browser sent from another ${site === 'same-site' ? 'origin' : 'site'} (Sec-Fetch-Site: ${site}): only the server's own pages may change state or open a WebSocket`;
  }
  const origin = header(req, 'origin');
  if (origin === undefined) return undefined;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    originHost = undefined;
  }
  if (originHost && host !== undefined && originHost === normalizedHost(host)) return undefined;
  return `refused a request from the origin ${JSON.stringify(origin.slice(0, 200))}, which is not this server's (${host ?? 'no Host'}): only the server's own pages may change state or open a WebSocket`;
}

/** A Host value as URL.host renders it (default ports dropped), for comparing with an Origin's. */
function normalizedHost(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** 415 for a POST/PUT/PATCH whose Content-Type is not one the API reads, or that has a body but no type. */
function bodyTypeRefusal(req: FastifyRequest): ApiError | undefined {
  const type = header(req, 'content-type')?.split(';')[0]!.trim().toLowerCase();
  if (type !== undefined && type !== '') {
    if (ACCEPTED_BODY_TYPES.includes(type)) return undefined;
    return new ApiError(
      'UnsupportedMediaType',
      415,
      `the body's Content-Type "${type.slice(0, 100)}" is not supported: ${req.method} takes ${accepted(req.method)}`,
    );
  }
  const length = header(req, 'content-length');
  const hasBody = (length !== undefined && length !== '0') || header(req, 'transfer-encoding') !== undefined;
  if (!hasBody) return undefined;
  return new ApiError('UnsupportedMediaType', 415, `the request has a body but no Content-Type: ${req.method} takes ${accepted(req.method)}`);
}

const accepted = (method: string): string =>
  method === 'PATCH' ? `application/json or a patch type (${ACCEPTED_BODY_TYPES.slice(1).join(', ')})` : 'application/json';

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim();
}

const misdirected = (host: string): ApiError =>
  new ApiError(
    'MisdirectedRequest',
    421,
    `this server does not answer to the Host ${JSON.stringify(host.slice(0, 200))}: only loopback names, the address it listens on and the names given with --allowed-hosts (AGENTPLANE_ALLOWED_HOSTS, config "allowedHosts")`,
  );

function refuse(req: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  return sendError(req, reply, err);
}
