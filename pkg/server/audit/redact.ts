// What a Request-level event may say about the request body. A secret's values never reach the
// log, whatever the level: `data` (and `stringData`) keep their keys, every value is replaced.

export const REDACTED = '<redacted>';

/** The body as it may be logged, or undefined when there is none to log. */
export function loggableRequestObject(resource: string | undefined, body: unknown): unknown {
  if (body === undefined || body === null || Buffer.isBuffer(body)) return undefined;
  if (resource !== 'secrets') return body;
  // A secret's body that is not an object cannot be redacted field by field: leave it out.
  if (typeof body !== 'object' || Array.isArray(body)) return undefined;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of ['data', 'stringData']) {
    if (!(field in out)) continue;
    const v = out[field];
    out[field] =
      v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, val]) => [k, val === null ? null : REDACTED])) : REDACTED;
  }
  return out;
}

/**
 * Query parameters that carry credentials. The API takes none of them (tokens travel in
 * `Authorization` or the WebSocket bearer subprotocol), but a client may still send one, e.g. a
 * browser library's `?access_token=`: its value must not reach the log.
 */
export const CREDENTIAL_QUERY_PARAMS = [
  'access_token',
  'id_token',
  'refresh_token',
  'token',
  'bearer',
  'authorization',
  'api_key',
  'apikey',
  'key',
  'password',
  'passwd',
  'secret',
  'client_secret',
  'sig',
  'signature',
  'x-amz-signature',
  'x-goog-signature',
];
const CREDENTIAL_PARAM = new Set(CREDENTIAL_QUERY_PARAMS);

/**
 * A request URI as it may be logged: the value of every credential-bearing query parameter
 * (matched without case) replaced by REDACTED; everything else byte for byte as sent.
 */
export function redactRequestUri(uri: string): string {
  const q = uri.indexOf('?');
  if (q < 0) return uri;
  const hash = uri.indexOf('#', q);
  const query = uri.slice(q + 1, hash < 0 ? undefined : hash);
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    return CREDENTIAL_PARAM.has(name.trim().toLowerCase()) && eq >= 0 ? `${rawName}=${REDACTED}` : part;
  });
  return `${uri.slice(0, q + 1)}${parts.join('&')}${hash < 0 ? '' : uri.slice(hash)}`;
}
