// URL prefixes that bind a secret to the servers it may be sent to (as Argo CD matches repository
// credential templates by URL prefix). Both sides are normalized before matching: scheme and host
// lowercased, the default port made explicit, and the path matched on segment boundaries, so
// `https://a.example/api` allows `https://a.example/api/v1` but not `https://a.example/apiary`.

export interface UrlPrefix {
  /** `scheme://host:port` */
  origin: string;
  /** "" (any path) or "/seg[/seg...]" without a trailing slash. */
  path: string;
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** Parses an http(s) URL; undefined when it is not one. */
function parseHttpUrl(raw: string): URL | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  return u.protocol in DEFAULT_PORTS && u.hostname ? u : undefined;
}

/** `scheme://host:port` with the default port made explicit (the URL parser lowercases host and scheme). */
const originOf = (u: URL): string => `${u.protocol}//${u.hostname}:${u.port || DEFAULT_PORTS[u.protocol]}`;

/** The path without its trailing slash; "" for the root. */
const trimPath = (p: string): string => (p === '/' ? '' : p.replace(/\/+$/, ''));

export const formatPrefix = (p: UrlPrefix): string => p.origin + p.path;

/**
 * Normalizes an allowed-URL prefix as a client wrote it; an error message when it is not one
 * (not http(s), credentials, a query or a fragment).
 */
export function parseUrlPrefix(raw: string): UrlPrefix | string {
  const u = parseHttpUrl(raw);
  if (!u) return 'must be an http(s) URL prefix: scheme://host[:port][/path]';
  if (u.username || u.password) return 'must not carry credentials';
  if (u.search || raw.includes('?')) return 'must not have a query';
  if (u.hash || raw.includes('#')) return 'must not have a fragment';
  return { origin: originOf(u), path: trimPath(u.pathname) };
}

/** The normalized form of a prefix (throws on one parseUrlPrefix refuses). */
export function normalizeUrlPrefix(raw: string): string {
  const p = parseUrlPrefix(raw);
  if (typeof p === 'string') throw new Error(`invalid URL prefix: ${p}`);
  return formatPrefix(p);
}

/** The binding a URL gets on first use: its origin and path (query left out). */
export function bindingPrefixOf(url: string): string | undefined {
  const u = parseHttpUrl(url);
  return u ? formatPrefix({ origin: originOf(u), path: trimPath(u.pathname) }) : undefined;
}

/** Does `url` fall under `prefix`? Same origin, and the path equal to or below the prefix's. */
export function urlMatchesPrefix(url: string, prefix: string): boolean {
  const u = parseHttpUrl(url);
  const p = parseUrlPrefix(prefix);
  if (!u || typeof p === 'string') return false;
  if (originOf(u) !== p.origin) return false;
  const path = u.pathname;
  return p.path === '' || path === p.path || path.startsWith(p.path + '/');
}

/** Does `url` fall under any of the prefixes? */
export const urlAllowedBy = (url: string, prefixes: readonly string[]): boolean => prefixes.some((p) => urlMatchesPrefix(url, p));
