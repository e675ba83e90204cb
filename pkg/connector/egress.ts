// Where the server itself may connect for a connector (status checks, tools listing, the
// connector gateway; engines never connect to connectors). A connector URL is a request to make
// the server fetch an address, so addresses inside the server's own network are refused:
// link-local, cloud metadata and reserved always (credentials of the host live there), loopback
// and private ranges unless the operator allows them (--allow-private-connector-urls). The
// classes are pkg/egress/addresses.ts', shared with the tools' egress proxy.
// The URL is checked when written and again at the moment of connecting, where every address the
// name resolves to is checked inside the connection's own lookup: the address checked is the
// address connected to, so a name that re-resolves (DNS rebinding) cannot slip through.

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { type AddressClass, classifyAddress, classifyHost } from '../egress/addresses.js';
import { EgressRefusedError, refusingLookup, type Resolve } from '../egress/lookup.js';

export { type AddressClass, classifyAddress, classifyHost, EgressRefusedError, type Resolve };

export interface EgressPolicy {
  /** Allow loopback and private addresses (not link-local, metadata or reserved). */
  allowPrivate: boolean;
}

export const ALLOW_PRIVATE_HINT =
  'start the server with --allow-private-connector-urls (config "allowPrivateConnectorUrls") to allow loopback and private addresses';

/** Why the server may not connect to an address of this class; undefined when it may. */
export function refusalFor(cls: AddressClass, what: string, policy: EgressPolicy): string | undefined {
  switch (cls) {
    case 'metadata':
      return `${what} is a cloud metadata service address; the server never connects there`;
    case 'link-local':
      return `${what} is a link-local address (169.254.0.0/16, fe80::/10); the server never connects there`;
    case 'reserved':
      return `${what} is a reserved address (documentation, benchmarking, multicast, broadcast or not globally routed); the server never connects there`;
    case 'loopback':
    case 'private':
      return policy.allowPrivate ? undefined : `${what} is a ${cls} address; ${ALLOW_PRIVATE_HINT}`;
    default:
      return undefined;
  }
}

/** Why the server may not connect to this URL's host as written; undefined when it may (or the URL does not parse: other rules say so). */
export function urlEgressRefusal(url: string, policy: EgressPolicy): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  return refusalFor(classifyHost(u.hostname), `host "${u.hostname}"`, policy);
}

/** A `lookup` for net/http that resolves the name and refuses it when any address is not allowed. */
export function guardedLookup(policy: EgressPolicy, resolve?: Resolve): LookupFunction {
  return refusingLookup((cls, what) => refusalFor(cls, what, policy), resolve);
}

/**
 * A fetch (as the MCP SDK's transport takes it) that connects only where the policy allows:
 * IP literals are checked here, names in the connection's lookup, on every connection.
 * Redirects are returned, not followed (the SDK follows same-origin ones itself, through this
 * fetch again).
 */
export function guardedFetch(policy: EgressPolicy, resolve?: Resolve): (input: string | URL, init?: RequestInit) => Promise<Response> {
  const lookup = guardedLookup(policy, resolve);
  // Own agents without keep-alive: every request opens (and so checks) its connection, and no
  // socket is shared with code under another policy through the global agent's pool.
  const agents = { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) };
  return async (input, init = {}) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`unsupported protocol ${url.protocol}`);
    const literal = classifyAddress(url.hostname);
    if (literal) {
      const why = refusalFor(literal, `host "${url.hostname}"`, policy);
      if (why) throw new TypeError('fetch failed', { cause: new EgressRefusedError(why) });
    }
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body = await bodyBytes(init.body);
    if (body) headers['content-length'] = String(body.length);
    const opts: RequestOptions = {
      method: init.method ?? 'GET',
      headers,
      lookup,
      agent: url.protocol === 'https:' ? agents.https : agents.http,
      ...(init.signal ? { signal: init.signal } : {}),
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, opts, resolve);
      req.on('error', (err) => reject(err.name === 'AbortError' ? err : new TypeError('fetch failed', { cause: err })));
      req.end(body);
    });
    const status = res.statusCode ?? 502;
    const resHeaders = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (Array.isArray(v)) for (const x of v) resHeaders.append(k, x);
      else if (v !== undefined) resHeaders.set(k, v);
    }
    const nullBody = status === 204 || status === 205 || status === 304 || opts.method === 'HEAD';
    if (nullBody) res.resume();
    return new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
      status: status < 200 || status > 599 ? 502 : status,
      statusText: res.statusMessage ?? '',
      headers: resHeaders,
    });
  };
}

async function bodyBytes(body: RequestInit['body']): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(await new Response(body).arrayBuffer());
}

/**
 * A fetch that sends only to `url` itself: the MCP SDK follows a same-origin redirect on its own
 * (through the fetch it is given) with the same headers, so without this a connector answering
 * 307 to another path of its origin would receive the credential there, outside the secret's
 * binding. A request for any other URL fails before a connection is made.
 */
export function fetchOnlyTo(
  url: string,
  fetch: (input: string | URL, init?: RequestInit) => Promise<Response>,
): (input: string | URL, init?: RequestInit) => Promise<Response> {
  const bound = new URL(url).href;
  return (input, init) => {
    const target = new URL(String(input instanceof Request ? input.url : input)).href;
    if (target !== bound) {
      return Promise.reject(
        new TypeError('fetch failed', {
          cause: new EgressRefusedError(`redirected to ${redacted(target)}; credentials are sent to the connector's URL only, so redirects are not followed`),
        }),
      );
    }
    return fetch(input, init);
  };
}

/** A URL for a message: without user-info, query or fragment. */
function redacted(u: string): string {
  const x = new URL(u);
  x.username = x.password = x.search = x.hash = '';
  return x.href;
}
