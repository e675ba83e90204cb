// Reads for the APIs (get, list, Table) served from a shared informer with Kubernetes'
// resourceVersion rules, falling back to storage when the cache cannot show it is current.
//
// - `resourceVersion` unset or "": a consistent read. With one writer (this process) the cache
//   answers once it reflects every write this process acknowledged (the store's write watermark;
//   waited for, bounded), else storage. With other writers (several replicas) the cache cannot
//   show that it holds their writes, so storage answers: one read, as a native consistent read
//   costs (waiting for the cache to reach storage's version would usually wait for the kind's
//   next event and then read storage anyway).
// - "0": whatever the cache holds, at once.
// - "N": not older than N: the cache once it is at N (waited for, bounded; 504 "Too large
//   resource version" after); with other writers storage at once instead of waiting.
// - lists with `resourceVersionMatch=Exact`: the state at N, rebuilt from the informer's recent
//   changes (410 Expired when they no longer reach back to N).
// - `limit`/`continue`: pages of one snapshot; the token carries its resourceVersion and the key
//   to start from, as kube-apiserver's do (continue-token.ts).
// See docs/aggregated-api.md ("Reads") for the limits.

import { ApiError, badRequest, continueExpired, invalid, resourceVersionTooLarge } from '../../api/errors.js';
import type { ListFilter, ListResult, StoredObject } from '../store.js';
import { decodeContinue, encodeContinue, listKey } from './continue-token.js';
import type { Informer } from './informer.js';

/** kube-apiserver's bound on waiting for its cache (waitUntilFreshAndBlock). */
export const DEFAULT_WAIT_MS = 3_000;

export interface ReadOptions {
  resourceVersion?: string;
}

export interface ListRequest extends ReadOptions {
  resourceVersionMatch?: string;
  namespace?: string;
  /** The selection (labels, fields); every object when absent. */
  matches?: (obj: StoredObject) => boolean;
  limit?: number;
  continue?: string;
}

export interface ListPage<T> {
  items: T[];
  resourceVersion: string;
  continue?: string;
  /** How many selected objects follow this page (set when there is a next page). */
  remainingItemCount?: number;
}

/** Where reads go when the cache cannot answer: the registry (storage). */
export interface ReadStorage<T> {
  get(namespace: string, name: string): Promise<T | undefined>;
  list(filter?: ListFilter): Promise<ListResult<T>>;
}

export interface ReadCacheOptions<T = unknown> {
  /** The highest resourceVersion at which this process's writes of the kind were acknowledged. */
  written: () => number;
  /**
   * Storage has writers besides this process (several replicas): consistent reads go to storage,
   * and so do reads of a version the cache has not reached. Default false: this process is the
   * only writer, so its own writes are all there are.
   */
  otherWriters?: boolean;
  /** Told where each get or list was answered from (agentplane_api_reads_total). */
  onRead?: (source: 'cache' | 'storage') => void;
  waitMs?: number;
  /**
   * What readers see of the objects read, beside what is stored: fields derived across objects
   * at read time (an agent's place in its namespace's line). Returns copies; never mutates.
   */
  present?: (items: T[]) => T[];
}

export class ReadCache<T extends StoredObject> {
  private readonly waitMs: number;
  private unreached?: number;

  constructor(
    private readonly informer: Informer<T>,
    private readonly storage: ReadStorage<T>,
    private readonly opts: ReadCacheOptions<T>,
  ) {
    this.waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
  }

  async get(namespace: string, name: string, o: ReadOptions = {}): Promise<T | undefined> {
    const rv = o.resourceVersion;
    let cached: boolean;
    if (rv === '0') cached = this.informer.hasSynced();
    else if (rv === undefined || rv === '') cached = await this.fresh();
    else cached = await this.notOlderThan(parseRv(rv), true);
    this.opts.onRead?.(cached ? 'cache' : 'storage');
    const obj = cached ? this.informer.get(namespace, name) : await this.storage.get(namespace, name);
    return obj && this.opts.present ? this.opts.present([obj])[0] : obj;
  }

  async list(r: ListRequest): Promise<ListPage<T>> {
    const page = await this.page(r);
    return this.opts.present ? { ...page, items: this.opts.present(page.items) } : page;
  }

  private async page(r: ListRequest): Promise<ListPage<T>> {
    validateList(r);
    const { items, rv, start, stored } = await this.source(r);
    this.opts.onRead?.(stored ? 'storage' : 'cache');
    const selected = items.filter((o) => (r.namespace === undefined || o.metadata.namespace === r.namespace) && (!r.matches || r.matches(o)));
    const keyed = selected.map((o) => ({ key: listKey(o.metadata.namespace, o.metadata.name), o }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const from = start === undefined ? keyed : keyed.filter((k) => k.key >= start);
    if (r.limit === undefined || r.limit <= 0 || from.length <= r.limit) return { items: from.map((k) => k.o), resourceVersion: String(rv) };
    const page = from.slice(0, r.limit);
    return {
      items: page.map((k) => k.o),
      resourceVersion: String(rv),
      continue: encodeContinue(stored ? this.tokenVersion(items, rv) : rv, `${page.at(-1)!.key}\u0000`),
      remainingItemCount: from.length - page.length,
    };
  }

  /** The objects a list reads, the resourceVersion they are at, where a continuation starts, and whether storage answered. */
  private async source(r: ListRequest): Promise<{ items: T[]; rv: number; start?: string; stored?: true }> {
    if (r.continue) {
      const c = decodeContinue(r.continue);
      if (c.rv !== -1) {
        const snap = this.informer.snapshot(c.rv);
        if (snap) return { items: snap, rv: c.rv, start: c.start };
        // Newer than the cache (another replica's token, or one from a storage read): the
        // cache's state is that snapshot's when it is current and nothing changed in between.
        if (c.rv > this.informer.resourceVersion()) {
          if ((await this.fresh()) && this.informer.resourceVersion() <= c.rv) return { items: this.informer.list(), rv: c.rv, start: c.start };
          if (await this.informer.waitFor(c.rv, this.waitMs)) {
            const later = this.informer.snapshot(c.rv);
            if (later) return { items: later, rv: c.rv, start: c.start };
          }
        }
        throw continueExpired(encodeContinue(-1, c.start));
      }
      return { ...(await this.current()), start: c.start };
    }
    const rv = r.resourceVersion;
    if (rv === undefined || rv === '') return this.current();
    if (rv === '0') return this.informer.hasSynced() ? { items: this.informer.list(), rv: this.informer.resourceVersion() } : this.current();
    const n = parseRv(rv);
    if (r.resourceVersionMatch === 'Exact') {
      await this.notOlderThan(n, false);
      const snap = this.informer.snapshot(Math.min(n, this.informer.resourceVersion()));
      if (!snap) throw new ApiError('Expired', 410, 'The resourceVersion for the provided list is too old.');
      return { items: snap, rv: n };
    }
    if (await this.notOlderThan(n, true)) return { items: this.informer.list(), rv: Math.max(n, this.informer.resourceVersion()) };
    return this.fromStorage();
  }

  /** A consistent read: the cache when it is shown current, else storage. */
  private async current(): Promise<{ items: T[]; rv: number; stored?: true }> {
    if (await this.fresh()) return { items: this.informer.list(), rv: this.informer.resourceVersion() };
    return this.fromStorage();
  }

  private async fromStorage(): Promise<{ items: T[]; rv: number; stored: true }> {
    const res = await this.storage.list();
    return { items: res.items, rv: Number(res.resourceVersion) || 0, stored: true };
  }

  /**
   * The version a continue token names for a list read from storage at `rv`. Later pages read a
   * cache snapshot, which reaches `rv` only if the kind changes again (`rv` is storage's global
   * version in the Kubernetes home), so when the cache holds exactly storage's objects its own
   * version names that state. Compared only when a page follows (a whole list needs no token).
   */
  private tokenVersion(items: T[], rv: number): number {
    const cached = this.informer.resourceVersion();
    return cached < rv && this.informer.hasSynced() && sameObjects(items, this.informer.list()) ? cached : rv;
  }

  /**
   * Whether the cache reflects every write acknowledged before now: this process's (bounded wait)
   * when it is the only writer; never shown with other writers.
   */
  private async fresh(): Promise<boolean> {
    if (!this.informer.hasSynced() || this.opts.otherWriters) return false; // storage answers
    const written = this.opts.written();
    // A version the cache already failed to reach in time (e.g. a deletion whose version storage
    // only knew as a later list's): storage answers until the cache gets there, without waiting.
    if (this.unreached !== undefined && written <= this.unreached && this.informer.resourceVersion() < written) return false;
    if (!(await this.informer.waitFor(written, this.waitMs))) {
      this.unreached = written;
      return false;
    }
    return true;
  }

  /**
   * Whether the cache serves a read not older than `rv`: at once when it is there; with other
   * writers false when `storageMay` (storage is never older); else after waiting for it, or 504
   * as kube-apiserver after the bound.
   */
  private async notOlderThan(rv: number, storageMay: boolean): Promise<boolean> {
    if (this.informer.hasSynced() && this.informer.resourceVersion() >= rv) return true;
    if (this.opts.otherWriters) {
      if (storageMay) return false;
    } else if (await this.fresh()) return true; // this process is the only writer: nothing newer exists
    if (!(await this.informer.waitFor(rv, this.waitMs))) throw resourceVersionTooLarge(String(rv), String(this.informer.resourceVersion()));
    return true;
  }
}

/** The same objects at the same versions (a list read from storage and the cache's). */
function sameObjects<T extends StoredObject>(a: T[], b: T[]): boolean {
  if (a.length !== b.length) return false;
  const versions = new Map(b.map((o) => [listKey(o.metadata.namespace, o.metadata.name), o.metadata.resourceVersion]));
  return a.every((o) => versions.get(listKey(o.metadata.namespace, o.metadata.name)) === o.metadata.resourceVersion);
}

function parseRv(rv: string): number {
  const n = /^[0-9]+$/.test(rv) ? Number(rv) : NaN;
  if (!Number.isSafeInteger(n)) throw badRequest(`invalid resource version: "${rv}"`);
  return n;
}

/** kube-apiserver's ListOptions rules (ValidateListOptions and the storage's own checks). */
function validateList(r: ListRequest): void {
  const match = r.resourceVersionMatch;
  const forbidden = (message: string) => invalid('ListOptions', undefined, [{ field: 'resourceVersionMatch', message: `Forbidden: ${message}` }]);
  if (match) {
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      throw invalid('ListOptions', undefined, [{ field: 'resourceVersionMatch', message: `must be one of "Exact", "NotOlderThan", ""` }]);
    }
    if (!r.resourceVersion) throw forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (r.continue) throw forbidden('resourceVersionMatch is forbidden when continue is provided');
    if (match === 'Exact' && r.resourceVersion === '0') throw forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  }
  if (r.continue && r.resourceVersion && r.resourceVersion !== '0') throw badRequest('specifying resource version is not allowed when using continue');
}
