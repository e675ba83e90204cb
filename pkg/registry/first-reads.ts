// Read-modify-writes read the kind's informer first, as controller-runtime's client reads its
// cache: in the cluster home every storage read is a round trip to kube-apiserver, and a status
// write was a GET and a PUT (a create a GET, for its duplicate check, and a POST). The cached
// copy is used only when it already holds this process's own last write of the object; a copy
// that is stale for another reason (a write by another replica, or by kube-controller-manager's
// garbage collector) is caught by the write's resourceVersion precondition (409, then read from
// storage). What the registry decides from a cached copy without writing (nothing to change, or
// an error) is decided again on storage's copy.

import { refKey } from '../api/meta.js';
import type { StoredObject } from './store.js';

/** What the registry reads first: the informer's cache of its kind. Its objects are shared: never mutated. */
export interface CachedObjects<T> {
  get(namespace: string, name: string): T | undefined;
}

export class FirstReads<T extends StoredObject> {
  private cache?: CachedObjects<T>;
  /** Per object, the resourceVersion of the newest write this process made; dropped once the cache holds it. */
  private readonly written = new Map<string, number>();

  use(cache: CachedObjects<T>): void {
    this.cache = cache;
  }

  get active(): boolean {
    return this.cache !== undefined;
  }

  /** The cached object when it holds this process's last write of it; else undefined (read storage). */
  current(namespace: string, name: string): T | undefined {
    const key = refKey({ namespace, name });
    const obj = this.cache?.get(namespace, name);
    if (!obj) {
      this.written.delete(key); // gone, or not cached yet: storage is read either way
      return undefined;
    }
    const mine = this.written.get(key);
    if (mine !== undefined && Number(obj.metadata.resourceVersion) < mine) return undefined;
    this.written.delete(key);
    return obj;
  }

  /** Notes a write this process made (an object created, updated, or removed). */
  wrote(obj: T): T {
    if (this.cache) this.written.set(refKey(obj.metadata), Number(obj.metadata.resourceVersion));
    return obj;
  }
}
