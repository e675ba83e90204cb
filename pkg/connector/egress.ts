// Where the server itself may connect for a connector (status checks, tools listing). A connector
// URL is a request to make the server fetch an address, so addresses inside the server's own
// network are refused: link-local and cloud metadata always (credentials of the host live there),
// loopback and private ranges unless the operator allows them (--allow-private-connector-urls).
// The URL is checked when written and again at the moment of connecting, where every address the
// name resolves to is checked inside the connection's own lookup: the address checked is the
// address connected to, so a name that re-resolves (DNS rebinding) cannot slip through.

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'metadata';

export interface EgressPolicy {
  /** Allow loopback and private addresses (not link-local or metadata). */
  allowPrivate: boolean;
}

export const ALLOW_PRIVATE_HINT = 'start the server with --allow-private-connector-urls (config "allowPrivateConnectorUrls") to allow loopback and private addresses';

const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200']);
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog']);

const list = (entries: [string, number, 'ipv4' | 'ipv6'][]): BlockList => {
  const b = new BlockList();
  for (const [net, prefix, type] of entries) b.addSubnet(net, prefix, type);
  return b;
};
const LINK_LOCAL = list([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
// 0.0.0.0/8 and :: reach the host itself when connected to.
const LOOPBACK = list([
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['::', 128, 'ipv6'],
]);
const PRIVATE = list([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT (shared address space)
  ['fc00::', 7, 'ipv6'],
]);

/** The class of an IP address (v4 or v6, brackets allowed); undefined when it is not one. */
export function classifyAddress(address: string): AddressClass | undefined {
  let a = address.replace(/^\[|\]$/g, '').toLowerCase();
  let family = isIP(a);
  if (!family) return undefined;
  // An IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:7f00:1) is the IPv4 address.
  const mapped = family === 6 ? ipv4Mapped(a) : undefined;
  if (mapped) {
    a = mapped;
    family = 4;
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (METADATA_ADDRESSES.has(type === 'ipv6' ? canonicalV6(a) : a)) return 'metadata';
  if (LINK_LOCAL.check(a, type)) return 'link-local';
  if (LOOPBACK.check(a, type)) return 'loopback';
  if (PRIVATE.check(a, type)) return 'private';
  return 'public';
}

/** The class of a URL host as written: an IP literal, a metadata or localhost name, else public (names are checked again when resolved). */
export function classifyHost(hostname: string): AddressClass {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  const ip = classifyAddress(h);
  if (ip) return ip;
  if (METADATA_HOSTS.has(h)) return 'metadata';
  if (h === 'localhost' || h.endsWith('.localhost')) return 'loopback';
  return 'public';
}

/** Why the server may not connect to an address of this class; undefined when it may. */
export function refusalFor(cls: AddressClass, what: string, policy: EgressPolicy): string | undefined {
  switch (cls) {
    case 'metadata':
      return `${what} is a cloud metadata service address; the server never connects there`;
    case 'link-local':
      return `${what} is a link-local address (169.254.0.0/16, fe80::/10); the server never connects there`;
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

/** The error a refused connection fails with: its code tells the caller what happened. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'EgressRefusedError';
  }
}

/** How names are resolved: dns.lookup's shape with `all: true` (tests pass their own). */
export type Resolve = (hostname: string, options: { all: true; family?: number }, cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const systemResolve: Resolve = (hostname, options, cb) => dnsLookup(hostname, options, cb);

/** A `lookup` for net/http that resolves the name and refuses it when any address is not allowed. */
export function guardedLookup(policy: EgressPolicy, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const byName = refusalFor(classifyHost(name), `host "${hostname}"`, policy);
    if (byName) return void callback(new EgressRefusedError(byName), '', 4);
    const family = typeof options.family === 'number' ? options.family : undefined;
    resolve(hostname, { all: true, ...(family ? { family } : {}) }, (err, addresses) => {
      if (err) return void callback(err, '', 4);
      for (const a of addresses) {
        const why = refusalFor(classifyAddress(a.address) ?? 'public', `host "${hostname}" resolves to ${a.address}, which`, policy);
        if (why) return void callback(new EgressRefusedError(why), '', 4);
      }
      if (!addresses.length) return void callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
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

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address. */
function ipv4Mapped(a: string): string | undefined {
  const m = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonicalV6(a));
  if (!m) return undefined;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** A canonical text form of an IPv6 address (via the URL parser), to compare with the metadata set. */
function canonicalV6(a: string): string {
  try {
    return new URL(`http://[${a}]/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return a;
  }
}
