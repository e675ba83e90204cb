// A controller in controller-runtime's shape: informers' events map to object refs, refs go
// through a WorkQueue (bounded, coalescing, retried with backoff) to one reconcile function.

import { parseRefKey, refKey, type ObjectRef } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import type { Informer } from '../../registry/cache/informer.js';
import type { StoredObject } from '../../registry/store.js';
import { WorkQueue } from './workqueue.js';

export interface Result {
  /** Reconcile this ref again after that many milliseconds (e.g. to notice a deadline). */
  requeueAfter?: number;
}

export interface ControllerOptions {
  name: string;
  logger: Logger;
  /** Makes the world match the object; throwing retries it with backoff. */
  reconcile: (ref: ObjectRef) => Promise<Result | void>;
  /** Refs reconciled at once (WorkQueue default: 4). */
  maxConcurrent?: number;
}

export interface WatchOptions<T> {
  /**
   * Wait this long before reconciling, so that changes arriving together (several objects
   * deleted at once) are judged together; later changes within the wait join it.
   */
  settleMs?: number;
  /**
   * An update this returns true for enqueues nothing (controller-runtime's predicates): a change
   * no reconcile reads, such as a status field the controller only writes.
   */
  ignoreUpdate?: (old: T, obj: T) => boolean;
}

export class Controller {
  private readonly queue: WorkQueue;
  /** Per watch: wait for the informer's sync, then subscribe. Run by start(). */
  private readonly sources: (() => Promise<void>)[] = [];
  private readonly unsubscribe: (() => void)[] = [];
  /** Queue operations asked for before start: workers run only once the caches have synced. */
  private early: ((q: WorkQueue) => void)[] = [];
  private starting?: Promise<void>;
  private running = false;
  private stopped = false;

  constructor(private readonly opts: ControllerOptions) {
    const logger = opts.logger.child({ controller: opts.name });
    // Namespaces in turn: one namespace's burst does not hold another's objects back.
    this.queue = new WorkQueue((key) => this.run(key), logger, { maxConcurrent: opts.maxConcurrent, shardOf: (key) => parseRefKey(key).namespace });
  }

  /**
   * Enqueues the refs `map` returns (default: the object's own) on every add, update and delete.
   * The handler is added once the informer has synced, so its synthetic adds enqueue every object.
   */
  watch<T extends StoredObject>(informer: Informer<T>, map: (obj: T) => ObjectRef[] = (obj) => [obj.metadata], opts: WatchOptions<T> = {}): void {
    const attach = async (): Promise<void> => {
      await informer.start();
      if (this.stopped) return;
      const enqueue = (ref: ObjectRef): void => (opts.settleMs ? this.enqueueAfter(ref, opts.settleMs) : this.enqueue(ref));
      const enqueueAll = (obj: T): void => map(obj).forEach(enqueue);
      const update = (old: T, obj: T): void => {
        if (!opts.ignoreUpdate?.(old, obj)) enqueueAll(obj);
      };
      this.unsubscribe.push(informer.addHandler({ add: enqueueAll, update, delete: enqueueAll }));
    };
    if (this.starting) void attach();
    else this.sources.push(attach);
  }

  enqueue(ref: ObjectRef): void {
    this.withQueue((q) => q.add(refKey(ref)));
  }

  /** Enqueues after `ms`; of several pending delays for one ref the earliest wins. */
  enqueueAfter(ref: ObjectRef, ms: number): void {
    this.withQueue((q) => q.addAfter(refKey(ref), ms));
  }

  /**
   * Starts the watched informers (a no-op for those already started), waits for their sync as
   * controller-runtime waits for caches, then handles events. A second call returns the first's promise.
   */
  start(): Promise<void> {
    this.starting ??= this.begin();
    return this.starting;
  }

  /** Stops handling events and drops queued work; running reconciles finish (see idle()). The informers are shared: their owner stops them. */
  stop(): void {
    this.stopped = true;
    this.early = [];
    this.unsubscribe.splice(0).forEach((fn) => fn());
    this.queue.close();
  }

  /** Resolves when no reconcile is running or waiting. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async begin(): Promise<void> {
    await Promise.all(this.sources.map((attach) => attach()));
    if (this.stopped) return;
    this.running = true;
    this.early.splice(0).forEach((fn) => fn(this.queue));
  }

  private withQueue(fn: (q: WorkQueue) => void): void {
    if (this.running) fn(this.queue);
    else if (!this.stopped) this.early.push(fn);
  }

  private async run(key: string): Promise<void> {
    const res = await this.opts.reconcile(parseRefKey(key));
    if (res?.requeueAfter !== undefined) this.queue.addAfter(key, res.requeueAfter);
  }
}
