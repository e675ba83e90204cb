// Reads for the APIs (get, list, Table) served from a shared informer with Kubernetes'
// resourceVersion rules, falling back to storage when the cache cannot show it is current.
//
// - `resourceVersion` unset or "": a consistent read. The cache must reflect every write this
//   process acknowledged (the store's write watermark; waited for, bounded) and, when a quorum
//   read is configured (several replicas), storage's current resourceVersion; otherwise the read
//   goes to storage.
// - "0": whatever the cache holds, at once.
// - "N": not older than N (waited for, bounded; 504 "Too large resource version" after).
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
/** How long a consistent read waits for the cache to catch up with a quorum read before using storage. */
const QUORUM_WAIT_MS = 100;

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

export interface ReadCacheOptions {
  /** The highest resourceVersion at which this process's writes of the kind were acknowledged. */
  written: () => number;
  /**
   * Storage's current resourceVersion by a quorum read, for servers that are not the only writer
   * (several replicas). Without it, a consistent read needs only this process's writes.
   */
  quorum?: () => Promise<number>;
  waitMs?: number;
}

export class ReadCache<T extends StoredObject> {
  private readonly waitMs: number;
  private unreached?: number;

  constructor(
    private readonly informer: Informer<T>,
    private readonly storage: ReadStorage<T>,
    private readonly opts: ReadCacheOptions,
  ) {
    this.waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
  }

  async get(namespace: string, name: string, o: ReadOptions = {}): Promise<T | undefined> {
    const rv = o.resourceVersion;
    if (rv === '0' && this.informer.hasSynced()) return this.informer.get(namespace, name);
    if (rv === undefined || rv === '' || rv === '0') {
      return (await this.fresh()) ? this.informer.get(namespace, name) : this.storage.get(namespace, name);
    }
    await this.notOlderThan(parseRv(rv));
    return this.informer.get(namespace, name);
  }

  async list(r: ListRequest): Promise<ListPage<T>> {
    validateList(r);
    const { items, rv, start } = await this.source(r);
    const selected = items.filter((o) => (r.namespace === undefined || o.metadata.namespace === r.namespace) && (!r.matches || r.matches(o)));
    const keyed = selected.map((o) => ({ key: listKey(o.metadata.namespace, o.metadata.name), o }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const from = start === undefined ? keyed : keyed.filter((k) => k.key >= start);
    if (r.limit === undefined || r.limit <= 0 || from.length <= r.limit) return { items: from.map((k) => k.o), resourceVersion: String(rv) };
    const page = from.slice(0, r.limit);
    return {
      items: page.map((k) => k.o),
      resourceVersion: String(rv),
      continue: encodeContinue(rv, `${page.at(-1)!.key}\u0000`),
      remainingItemCount: from.length - page.length,
    };
  }

  /** The objects a list reads, the resourceVersion they are at, and where a continuation starts. */
  private async source(r: ListRequest): Promise<{ items: T[]; rv: number; start?: string }> {
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
      await this.notOlderThan(n);
      const snap = this.informer.snapshot(Math.min(n, this.informer.resourceVersion()));
      if (!snap) throw new ApiError('Expired', 410, 'The resourceVersion for the provided list is too old.');
      return { items: snap, rv: n };
    }
    await this.notOlderThan(n);
    return { items: this.informer.list(), rv: Math.max(n, this.informer.resourceVersion()) };
  }

  /** A consistent read: the cache when it is shown current, else storage. */
  private async current(): Promise<{ items: T[]; rv: number }> {
    if (await this.fresh()) return { items: this.informer.list(), rv: this.informer.resourceVersion() };
    const res = await this.storage.list();
    return { items: res.items, rv: Number(res.resourceVersion) || 0 };
  }

  /**
   * Whether the cache reflects every write acknowledged before now: this process's (bounded wait)
   * and, with a quorum read, storage's current version (a short wait; storage is read otherwise).
   */
  private async fresh(): Promise<boolean> {
    if (!this.informer.hasSynced()) return false; // starting: storage answers meanwhile
    const written = this.opts.written();
    // A version the cache already failed to reach in time (e.g. a deletion whose version storage
    // only knew as a later list's): storage answers until the cache gets there, without waiting.
    if (this.unreached !== undefined && written <= this.unreached && this.informer.resourceVersion() < written) return false;
    if (!(await this.informer.waitFor(written, this.waitMs))) {
      this.unreached = written;
      return false;
    }
    if (!this.opts.quorum) return true;
    return this.informer.waitFor(await this.opts.quorum(), QUORUM_WAIT_MS);
  }

  /** Waits until the cache is at `rv` or shown current; 504 as kube-apiserver after the bound. */
  private async notOlderThan(rv: number): Promise<void> {
    if (this.informer.hasSynced() && this.informer.resourceVersion() >= rv) return;
    if (!this.opts.quorum && (await this.fresh())) return; // this process is the only writer: nothing newer exists
    if (!(await this.informer.waitFor(rv, this.waitMs))) throw resourceVersionTooLarge(String(rv), String(this.informer.resourceVersion()));
  }
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
