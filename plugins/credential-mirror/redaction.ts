// What the credential mirror may say of a failure: no value reaches a log line, an error message
// or a metric label, so Kubernetes' answers are reduced to their status line and the current
// values of the source (as text and as base64) are blanked.

/** What may be said of a failure: Kubernetes' status line, never a body; the values blanked. */
export function describeFailure(err: unknown, values: Record<string, string | undefined>): string {
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
  let text: string;
  if (code !== undefined) {
    let status: { reason?: string; message?: string } = {};
    try {
      status = ((typeof e!.body === 'string' ? JSON.parse(e!.body) : e!.body) as typeof status | null) ?? {};
    } catch {
      // not a Status
    }
    text = `Kubernetes API answered ${code}${status.reason ? ` ${status.reason}` : ''}${status.message ? `: ${status.message}` : ''}`;
  } else {
    text = typeof e?.message === 'string' ? e.message : String(err);
  }
  return redact(text, values);
}

/** Blanks every value of `values` (a Secret's base64 data, and each decoded) in `text`. */
export function redact(text: string, values: Record<string, string | undefined>): string {
  let out = text;
  for (const b64 of Object.values(values)) {
    if (!b64) continue;
    const clear = Buffer.from(b64, 'base64').toString('utf8');
    for (const v of [b64, clear]) if (v.length >= 4) out = out.split(v).join('[redacted]');
  }
  return out;
}
