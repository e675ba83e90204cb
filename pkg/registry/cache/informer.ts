// A shared informer, client-go's SharedIndexInformer in small: one list-then-watch of a kind
// feeds a local cache, indexes over it, and any number of event handlers. Readers ask the cache
// instead of storage (an API call in the Kubernetes home). The cache may lag storage by a watch
// delivery; handlers hear of every change, so level-triggered readers reconcile again.

import { refKey } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import type { ListFilter, ListResult, StoredObject, WatchEvent, WatchOptions } from '../store.js';

/**
 * Read access to a cache. Returned objects are the cache's own, shared by every reader: callers
 * must not mutate them (structuredClone first).
 */
export interface Lister<T> {
  get(namespace: string, name: string): T | undefined;
  /** Every cached object, or those of one namespace. */
  list(namespace?: string): T[];
}

export interface EventHandler<T> {
  add?(obj: T): void;
  update?(old: T, obj: T): void;
  /** The object's last state: from the watch, or the cache's when a relist found it gone. */
  delete?(obj: T): void;
}

/** What an informer reads: a Registry, or anything else that lists and watches. */
export interface InformerSource<T> {
  list(filter?: ListFilter): Promise<ListResult<T>>;
  watch(fn: (ev: WatchEvent<T>) => void, opts?: WatchOptions): () => void;
}

/** How many recent changes an informer keeps to answer reads at an older resourceVersion. */
export const HISTORY_LIMIT = 10_000;

/** The values an object is filed under; must depend only on the object (it is re-run to unfile it). */
export type IndexFunc<T> = (obj: T) => string[];

export class Informer<T extends StoredObject> implements Lister<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name -> indexed value -> object keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly handlers = new Set<EventHandler<T>>();
  private started?: Promise<void>;
  private synced = false;
  private stopped = false;
  private unwatch?: () => void;
  private listFailures = 0;
  /** The newest resourceVersion the cache reflects: its list's, then each change's. */
  private rv = 0;
  /** Recent changes, oldest first: `old` is the object's state before the change at `rv`. */
  private history: { rv: number; key: string; old?: T }[] = [];
  /** Changes at or below this version are not all in `history`: older snapshots are gone. */
  private historyFloor = 0;
  private readonly rvWaiters = new Set<{ rv: number; done: (ok: boolean) => void }>();

  constructor(
    private readonly source: InformerSource<T>,
    private readonly logger: Logger,
  ) {}

  /** Lists and watches; resolves once the cache holds the first list (or on stop). Calling it again is a no-op. */
  start(): Promise<void> {
    this.started ??= this.listAndWatch();
    return this.started;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  stop(): void {
    this.stopped = true;
    this.unwatch?.();
    for (const w of [...this.rvWaiters]) w.done(false);
  }

  /** The newest resourceVersion the cache reflects (0 before the first list). */
  resourceVersion(): number {
    return this.rv;
  }

  /** Resolves true once the cache reflects `rv` (and has synced), false after `ms`. */
  waitFor(rv: number, ms: number): Promise<boolean> {
    if (this.synced && this.rv >= rv) return Promise.resolve(true);
    if (this.stopped || ms <= 0) return Promise.resolve(false);
    return new Promise((res) => {
      const w = {
        rv,
        done: (ok: boolean) => {
          clearTimeout(t);
          this.rvWaiters.delete(w);
          res(ok);
        },
      };
      const t = setTimeout(() => w.done(false), ms);
      this.rvWaiters.add(w);
    });
  }

  /**
   * Every object as it was at `rv` (sorted by nothing in particular), rebuilt from the cache and
   * its recent changes; undefined when those no longer reach back to `rv` (or it is not reached yet).
   */
  snapshot(rv: number): T[] | undefined {
    if (!this.synced || rv < this.historyFloor || rv > this.rv) return undefined;
    const items = new Map(this.items);
    for (let i = this.history.length - 1; i >= 0 && this.history[i].rv > rv; i--) {
      const { key, old } = this.history[i];
      if (old) items.set(key, old);
      else items.delete(key);
    }
    return [...items.values()];
  }

  get(namespace: string, name: string): T | undefined {
    return this.items.get(refKey({ namespace, name }));
  }

  list(namespace?: string): T[] {
    const all = [...this.items.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  /** Adds an index; objects already cached are indexed at once. Names are unique. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`informer: index ${name} already exists`);
    this.indexers.set(name, fn);
    this.indices.set(name, new Map());
    for (const [key, obj] of this.items) this.indexOne(name, fn, key, obj);
  }

  byIndex(name: string, value: string): T[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`informer: no index ${name}`);
    return [...(index.get(value) ?? [])].map((key) => this.items.get(key)!);
  }

  /**
   * Calls the handler for every change from now on. Objects already cached are delivered as
   * `add`s first (client-go's synthetic adds), so a late handler sees the same state as an early one.
   */
  addHandler(handler: EventHandler<T>): () => void {
    this.handlers.add(handler);
    for (const obj of this.items.values()) this.call('add', () => handler.add?.(obj));
    return () => void this.handlers.delete(handler);
  }

  /** Lists (retrying with backoff), then watches from the list's resourceVersion, so no change is missed or doubled. */
  private async listAndWatch(): Promise<void> {
    while (!this.stopped) {
      let res: ListResult<T>;
      try {
        res = await this.source.list();
      } catch (err) {
        const delay = Math.min(100 * 2 ** ++this.listFailures, 30_000);
        this.logger.warn({ err: errMessage(err), retryInMs: delay }, 'informer list failed');
        await new Promise((r) => setTimeout(r, delay).unref());
        continue;
      }
      if (this.stopped) return;
      this.listFailures = 0;
      this.replace(res.items);
      // A relist has no history between the old state and the new one: snapshots start here.
      this.history = [];
      this.historyFloor = Number(res.resourceVersion) || 0;
      this.synced = true;
      this.advance(this.historyFloor);
      this.unwatch = this.source.watch((ev) => this.apply(ev), {
        resourceVersion: res.resourceVersion,
        // The store no longer holds the changes since our list (410 Expired): list again.
        onError: (err) => {
          this.logger.info({ err: err.message }, 'informer watch ended; relisting');
          void this.listAndWatch();
        },
      });
      return;
    }
  }

  private apply(ev: WatchEvent<T>): void {
    const key = refKey(ev.object.metadata);
    const rv = Number(ev.object.metadata.resourceVersion) || 0;
    const old = this.items.get(key);
    if (ev.type === 'DELETED') this.remove(key, ev.object);
    else this.upsert(ev.object);
    this.history.push({ rv, key, ...(old ? { old } : {}) });
    if (this.history.length > HISTORY_LIMIT) this.historyFloor = this.history.splice(0, this.history.length - HISTORY_LIMIT).at(-1)!.rv;
    this.advance(rv);
  }

  private advance(rv: number): void {
    if (rv > this.rv) this.rv = rv;
    for (const w of [...this.rvWaiters]) if (this.rv >= w.rv) w.done(true);
  }

  /** Makes the cache equal to a fresh list, announcing only what differs from what it held. */
  private replace(items: T[]): void {
    const fresh = new Set<string>();
    for (const obj of items) {
      fresh.add(refKey(obj.metadata));
      const old = this.items.get(refKey(obj.metadata));
      if (old?.metadata.resourceVersion !== obj.metadata.resourceVersion) this.upsert(obj);
    }
    for (const [key, old] of this.items) if (!fresh.has(key)) this.remove(key, old);
  }

  private upsert(obj: T): void {
    const key = refKey(obj.metadata);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) this.indexOne(name, fn, key, obj);
    for (const h of [...this.handlers]) {
      if (old) this.call('update', () => h.update?.(old, obj));
      else this.call('add', () => h.add?.(obj));
    }
  }

  private remove(key: string, last: T): void {
    const old = this.items.get(key);
    if (!old) return;
    this.unindex(key, old);
    this.items.delete(key);
    for (const h of [...this.handlers]) this.call('delete', () => h.delete?.(last));
  }

  private indexOne(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const index = this.indices.get(name)!;
    for (const value of fn(obj)) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }

  /** A failing handler is logged and does not keep the others, or the cache, from the change. */
  private call(event: keyof EventHandler<T>, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ event, err: errMessage(err) }, 'informer handler failed');
    }
  }
}

const errMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
