// Per-caller request rate: a token bucket per authenticated user (per client IP for a request
// without a user), refilled at `requestsPerSecond` up to `burst`. A request finding its bucket
// empty is refused with 429 TooManyRequests and Retry-After (seconds until a token is back), in
// the path's error format (the REST body, or metav1.Status with details.retryAfterSeconds).
// Probes and the workers' own paths (control channel, model proxy) are not counted.
// docs/decisions.md "Limits".

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../api/errors.js';
import { pathOf, sendError } from './error-reply.js';
import { underAny } from './path-prefix.js';

/** The default when a server authenticates its callers (token file, Kubernetes): generous. */
export const DEFAULT_RATE_LIMIT = 100;
/** The default burst: two seconds' worth. */
export const burstFor = (requestsPerSecond: number): number => Math.max(1, Math.ceil(requestsPerSecond * 2));

export interface RateLimitOptions {
  requestsPerSecond: number;
  /** The bucket's size (requests at once after a quiet spell); default burstFor(rate). */
  burst?: number;
  /** Paths (and what is under them) never counted. */
  exemptPaths?: string[];
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const SWEEP_MS = 60_000;

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly burst: number;
  private lastSweep: number;

  constructor(
    private readonly rate: number,
    burst: number | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.burst = burst ?? burstFor(rate);
    this.lastSweep = now();
  }

  /** Takes a token for `key`: 0 when granted, else the seconds until one is back (at least 1). */
  take(key: string): number {
    const now = this.now();
    if (now - this.lastSweep > SWEEP_MS) this.sweep(now);
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.rate);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.rate));
  }

  /** Forgets buckets that have filled up again (they are the same as new ones). */
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.rate >= this.burst) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** Who a request counts against: its authenticated user, else its client address. */
export const rateKey = (req: FastifyRequest): string => (req.user ? `user:${req.user.username}` : `ip:${req.ip}`);

/**
 * Adds the onRequest hook to `app` (the root instance, after the auth filter, so that the user
 * is known; before any route).
 */
export function installRateLimit(app: FastifyInstance, opts: RateLimitOptions): void {
  if (!(opts.requestsPerSecond > 0)) return;
  const buckets = new TokenBuckets(opts.requestsPerSecond, opts.burst, opts.now);
  const exempt = opts.exemptPaths ?? [];
  app.addHook('onRequest', async (req, reply) => {
    const path = pathOf(req.url);
    if (underAny(path, exempt)) return undefined;
    const wait = buckets.take(rateKey(req));
    if (wait === 0) return undefined;
    const who = req.user ? `user "${req.user.username}"` : `client ${req.ip}`;
    return sendError(
      req,
      reply,
      tooManyRequests(`too many requests from ${who}: the limit is ${opts.requestsPerSecond} per second; retry after ${wait} s`, wait),
    );
  });
}
