// A keyed work queue as in client-go / controller-runtime: at most `maxConcurrent` keys reconcile
// at once, a key is processed by one reconcile at a time, and a key added while it is being
// processed runs once more afterwards. Failures retry with exponential backoff.
//
// Unlike client-go's, waiting keys can be served round-robin between shards (`shardOf`; the
// controllers' shard is the namespace), in the order they were added within one: a namespace
// that adds 500 keys at once (500 tasks submitted) no longer holds another namespace's one key
// behind all of them. That wait was 3.5 s on the 2-core machine, before the other namespace's
// task could even line up for a worker (docs/admission.md).

import type { Logger } from '../../observability/logger.js';

export interface WorkQueueOptions {
  /** Keys reconciled at once (default 4), so a burst of events cannot start unbounded work. */
  maxConcurrent?: number;
  /** The shard a key waits in; shards are served in turn. Default: one shard, first come first served. */
  shardOf?: (key: string) => string;
}

export class WorkQueue {
  /**
   * Keys waiting for a slot by shard, oldest first within each (a Set keeps insertion order and
   * coalesces); the shards in the order they are served next.
   */
  private readonly pending = new Map<string, Set<string>>();
  private readonly active = new Set<string>();
  /** Active keys added again: they go back to `pending` when their run ends. */
  private readonly rerun = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly maxConcurrent: number;
  private readonly shardOf: (key: string) => string;
  private closed = false;

  constructor(
    private readonly reconcile: (key: string) => Promise<void>,
    private readonly logger: Logger,
    opts: WorkQueueOptions = {},
  ) {
    this.maxConcurrent = Math.max(1, opts.maxConcurrent ?? 4);
    this.shardOf = opts.shardOf ?? (() => '');
  }

  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) this.rerun.add(key);
    else this.wait(key);
    this.pump();
  }

  /** Adds the key after `ms`. Of several pending delays for one key only the earliest is kept. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const cur = this.delayed.get(key);
    if (cur && cur.at <= at) return;
    if (cur) clearTimeout(cur.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    // A pending retry or requeue must not keep the process alive on shutdown.
    timer.unref();
    this.delayed.set(key, { at, timer });
  }

  /** Resolves when no reconcile is running or waiting for a slot (tests and shutdown). */
  idle(): Promise<void> {
    return this.active.size === 0 ? Promise.resolve() : new Promise((r) => this.idleWaiters.push(r));
  }

  /** Stops taking work: later adds, pending keys and delayed adds are dropped; running reconciles finish. */
  close(): void {
    this.closed = true;
    this.pending.clear();
    this.rerun.clear();
    this.delayed.forEach((d) => clearTimeout(d.timer));
    this.delayed.clear();
  }

  private wait(key: string): void {
    const shard = this.shardOf(key);
    const keys = this.pending.get(shard);
    if (keys) keys.add(key);
    else this.pending.set(shard, new Set([key]));
  }

  /** The next key: the oldest of the shard whose turn it is, which then goes last. */
  private next(): string | undefined {
    for (const [shard, keys] of this.pending) {
      const key = keys.values().next().value as string;
      keys.delete(key);
      this.pending.delete(shard);
      if (keys.size) this.pending.set(shard, keys);
      return key;
    }
    return undefined;
  }

  private pump(): void {
    while (this.active.size < this.maxConcurrent) {
      const key = this.next();
      if (key === undefined) return;
      this.active.add(key);
      void this.process(key);
    }
  }

  private async process(key: string): Promise<void> {
    try {
      await this.reconcile(key);
      this.failures.delete(key);
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const delay = Math.min(100 * 2 ** n, 30_000);
      this.logger.warn({ key, err: err instanceof Error ? err.message : String(err), retryInMs: delay }, 'reconcile failed');
      this.addAfter(key, delay);
    }
    this.active.delete(key);
    // Behind the keys already waiting, so one hot key cannot starve the others.
    if (this.rerun.delete(key)) this.wait(key);
    this.pump();
    if (this.active.size === 0) this.idleWaiters.splice(0).forEach((fn) => fn());
  }
}
