// A keyed work queue as in controller-runtime: a key is processed by one reconcile at a time;
// a key added while it is being processed runs once more afterwards. Failures retry with backoff.

import type { Logger } from '../observability/logger.js';

export class WorkQueue {
  private readonly dirty = new Set<string>();
  private readonly active = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly reconcile: (key: string) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  add(key: string): void {
    if (this.closed) return;
    this.dirty.add(key);
    if (!this.active.has(key)) void this.run(key);
  }

  private async run(key: string): Promise<void> {
    this.active.add(key);
    while (this.dirty.delete(key)) {
      try {
        await this.reconcile(key);
        this.failures.delete(key);
      } catch (err) {
        const n = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, n);
        const delay = Math.min(100 * 2 ** n, 30_000);
        this.logger.warn({ key, err: err instanceof Error ? err.message : String(err), retryInMs: delay }, 'reconcile failed');
        setTimeout(() => this.add(key), delay).unref();
      }
    }
    this.active.delete(key);
    if (this.active.size === 0) this.idleWaiters.splice(0).forEach((fn) => fn());
  }

  /** Resolves when no reconcile is running (tests and shutdown). */
  idle(): Promise<void> {
    return this.active.size === 0 ? Promise.resolve() : new Promise((r) => this.idleWaiters.push(r));
  }

  close(): void {
    this.closed = true;
  }
}
