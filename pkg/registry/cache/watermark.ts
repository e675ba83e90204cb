// A Store that remembers the highest resourceVersion at which it acknowledged a write: what a
// consistent read from the cache must wait for to see every write this process answered for
// (read-your-writes across requests, as a client that got a 201 expects of its next GET).

import type { ListFilter, ListResult, Store, StoredObject, WatchEvent, WatchOptions } from '../store.js';

export class WatermarkedStore<T extends StoredObject> implements Store<T> {
  private mark = 0;

  constructor(private readonly inner: Store<T>) {}

  /** The resourceVersion of the newest write acknowledged (0 before any). */
  written(): number {
    return this.mark;
  }

  get(namespace: string, name: string): Promise<T | undefined> {
    return this.inner.get(namespace, name);
  }

  list(filter?: ListFilter): Promise<ListResult<T>> {
    return this.inner.list(filter);
  }

  async create(obj: T): Promise<T> {
    return this.note(await this.inner.create(obj));
  }

  async update(obj: T): Promise<T> {
    return this.note(await this.inner.update(obj));
  }

  async delete(namespace: string, name: string, precondition?: { resourceVersion?: string }): Promise<T | undefined> {
    const removed = await this.inner.delete(namespace, name, precondition);
    return removed && this.note(removed);
  }

  watch(fn: (ev: WatchEvent<T>) => void, opts?: WatchOptions): () => void {
    return this.inner.watch(fn, opts);
  }

  private note(obj: T): T {
    const rv = Number(obj.metadata.resourceVersion);
    if (rv > this.mark) this.mark = rv;
    return obj;
  }
}
