// The generic storage interface: CRUD with optimistic concurrency (resourceVersion) and watch.
// As in Kubernetes' generic registry, one store serves every resource; resource rules live in
// strategies (strategy.ts), never here.

import type { ApiError } from '../api/errors.js';
import type { ObjectMeta } from '../api/meta.js';

export interface StoredObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: unknown;
  status: unknown;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface ListFilter {
  namespace?: string;
  labelSelector?: Record<string, string>;
}

export interface ListResult<T> {
  items: T[];
  /** The store's resourceVersion at the time of the list (for list-then-watch). */
  resourceVersion: string;
}

export interface Store<T extends StoredObject> {
  get(namespace: string, name: string): Promise<T | undefined>;
  list(filter?: ListFilter): Promise<ListResult<T>>;
  /** Fails with AlreadyExists when the name is taken. Assigns uid, resourceVersion, creationTimestamp. */
  create(obj: T): Promise<T>;
  /** Fails with Conflict when obj.metadata.resourceVersion is not the stored one. */
  update(obj: T): Promise<T>;
  /** Removes the object; `precondition` guards with a resourceVersion. Returns the removed object. */
  delete(namespace: string, name: string, precondition?: { resourceVersion?: string }): Promise<T | undefined>;
  /**
   * Calls `fn` for every change after now, or, with `resourceVersion`, every change after that
   * version (replayed first, then live). Returns an unsubscribe.
   * When the store no longer holds the changes since that version (ApiError Expired, 410: the
   * client must list again), the watch ends: the error goes to `opts.onError` when given, else
   * it is thrown from `watch` if the store can tell at once (SQLite).
   */
  watch(fn: (ev: WatchEvent<T>) => void, opts?: WatchOptions): () => void;
}

export interface WatchOptions {
  /** Replay changes with a greater resourceVersion before going live. */
  resourceVersion?: string;
  /**
   * Called at most once, asynchronously, with the error that ends a watch from `resourceVersion`
   * (Expired); no event follows it. The Kubernetes store learns this only from the API server (at
   * start, or on a reconnect), so pass it whenever you pass `resourceVersion`; without it that
   * store warns and continues from now (a gap). Watches from now never end in either store.
   */
  onError?: (err: ApiError) => void;
}
