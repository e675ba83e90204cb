// When and how long the proxy waits before retrying a model request: 429, 500, 502, 503, 504,
// 529 and timeouts or connection failures, with exponential backoff (or the model's
// retry-after), at most `maxRetries` times and never past the task's deadline.

export interface RetryPolicy {
  /** Retries at most, per request. Default 8. */
  maxRetries: number;
  /** First backoff; doubles each retry. Default 1000 ms. */
  baseDelayMs: number;
  /** Longest single wait. Default 60 s. */
  maxDelayMs: number;
  /** A task's model requests are not retried past this long after the task began. Default 10 min. */
  taskDeadlineMs: number;
  /** No response headers this long after sending: a timeout, retried. Default 10 min. */
  responseTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 8,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  taskDeadlineMs: 10 * 60_000,
  responseTimeoutMs: 10 * 60_000,
};

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504, 529]);

/** The wait before retry number `attempt` (1-based): retry-after when given, else backoff. */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfter: string | undefined): number {
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const after = parseRetryAfter(retryAfter);
  return after === undefined ? backoff : Math.min(policy.maxDelayMs, after);
}

/** retry-after as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(v: string | undefined, now = Date.now()): number | undefined {
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** What a retry event says, e.g. "model overloaded, retry 2 of 8 in 4 s". */
export function describeRetry(status: number, attempt: number, of: number, delayMs: number): string {
  const what =
    status === 529 || status === 503
      ? 'model overloaded'
      : status === 429
        ? 'model rate limit reached'
        : status === 0 || status === 408 || status === 504
          ? 'model request timed out or failed to connect'
          : `model error ${status}`;
  const secs = delayMs >= 1000 ? `${Math.round(delayMs / 100) / 10} s` : `${delayMs} ms`;
  return `${what}, retry ${attempt} of ${of} in ${secs}`;
}
