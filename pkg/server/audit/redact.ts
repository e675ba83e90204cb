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
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).map(([k, val]) => [k, val === null ? null : REDACTED]))
        : REDACTED;
  }
  return out;
}
