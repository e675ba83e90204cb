// One Kubernetes watch of a record kind across all namespaces that survives the API server
// ending it: it reconnects from the last resourceVersion it saw (bookmarks included), so
// events arrive once and in order.
//
// When the server no longer holds the history since that version (410, typically after an API
// server restart), a watch started "from now" re-lists and emits the difference to the last
// state it knows (as client-go informers do), so its subscribers lose no object's final state;
// a watch started from a given version has no such baseline and hands the 410 to its owner.

import type { Watch } from '@kubernetes/client-node';
import type { K8sStatus } from './errors.js';
import { objectUid, type StorageRecord } from './records.js';

export type RecordEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface UpstreamSource {
  watch: Watch;
  /** e.g. /apis/internal.agentplane.io/v1alpha1/agentrecords */
  path: string;
  /** Every record of the kind, with the list's resourceVersion. */
  list(): Promise<{ resourceVersion: string; items: StorageRecord[] }>;
  /** Server-side watch timeout; the API server ends each watch after it and we reconnect. */
  timeoutSeconds(): number;
  warn(msg: string, err?: unknown): void;
}

export interface UpstreamSink {
  event(type: RecordEventType, rec: StorageRecord): void;
  /** A watch from a given version lost history; return true to continue from now, false to stop. */
  expired(rv: string): boolean;
}

const MAX_BACKOFF_MS = 5_000;
/** A connection that ends sooner than this without any event counts as a failure (backoff). */
const HEALTHY_MS = 1_000;

const keyOf = (r: StorageRecord): string => `${r.metadata.namespace}/${r.metadata.name}`;
const rvOf = (r: StorageRecord): number => Number(r.metadata.resourceVersion);
const withRv = (r: StorageRecord, rv: string): StorageRecord => ({ ...r, metadata: { ...r.metadata, resourceVersion: rv } });

export class Upstream {
  /** Resolves once the starting resourceVersion is known (or could not be found). */
  readonly ready: Promise<void>;
  private markReady!: () => void;
  /** The version this watch started after; NaN until known. */
  startRv = NaN;
  private lastRv = NaN;
  private stopped = false;
  private conn = 0;
  private abort?: AbortController;
  private timer?: NodeJS.Timeout;
  private backoff = 0;
  private readonly waiters = new Set<{ rv: number; done: () => void }>();
  private readonly deletions = new Map<string, (rec: StorageRecord | undefined) => void>();
  /** "From now" watches only: the last known state of every record, the baseline of a re-list. */
  private readonly cache?: Map<string, StorageRecord>;

  constructor(
    private readonly src: UpstreamSource,
    private readonly sink: UpstreamSink,
    from?: string,
  ) {
    this.ready = new Promise((res) => (this.markReady = res));
    if (from !== undefined) {
      this.begin(Number(from));
    } else {
      this.cache = new Map();
      void this.relist();
    }
  }

  /** Resolves when this watch has delivered everything up to `rv` (or gave up after `ms`). */
  settled(rv: number, ms: number): Promise<void> {
    if (this.stopped || !(this.startRv < rv) || this.lastRv >= rv) return Promise.resolve();
    return new Promise((res) => {
      const w = { rv, done: () => (clearTimeout(t), this.waiters.delete(w), res()) };
      const t = setTimeout(w.done, ms);
      this.waiters.add(w);
    });
  }

  /** Registers interest in the DELETED event of `uid` before the delete is sent. */
  expectDeletion(uid: string, ms: number): { result: Promise<StorageRecord | undefined>; cancel: () => void } {
    let cancel = (): void => undefined;
    const result = new Promise<StorageRecord | undefined>((res) => {
      if (this.stopped) return res(undefined);
      const t = setTimeout(() => finish(undefined), ms);
      const finish = (rec: StorageRecord | undefined): void => {
        clearTimeout(t);
        this.deletions.delete(uid);
        res(rec);
      };
      this.deletions.set(uid, finish);
      cancel = () => finish(undefined);
    });
    return { result, cancel };
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.conn++;
    clearTimeout(this.timer);
    this.abort?.abort();
    this.markReady();
    for (const w of [...this.waiters]) w.done();
    for (const finish of [...this.deletions.values()]) finish(undefined);
  }

  /** Starts (or, after a 410, restarts) from a fresh list; with a cache, emits what changed. */
  private async relist(): Promise<void> {
    for (let i = 0; !this.stopped; i++) {
      try {
        const list = await this.src.list();
        if (this.stopped) return;
        const rv = Number(list.resourceVersion);
        if (Number.isNaN(this.startRv)) {
          this.startRv = rv;
          for (const r of this.cache ? list.items : []) this.cache!.set(keyOf(r), r);
        } else if (this.cache) {
          this.catchUp(list.items, list.resourceVersion);
        }
        this.advance(rv);
        this.markReady();
        this.connect();
        return;
      } catch (err) {
        this.src.warn('storage watch: cannot list; retrying', err);
        // Writers must not wait for a watch that cannot start; it starts later, from then.
        this.markReady();
        await new Promise((r) => (this.timer = setTimeout(r, Math.min(100 * 2 ** i, MAX_BACKOFF_MS))));
      }
    }
  }

  /** The changes between the cache and a fresh list, in resourceVersion order, deletions last. */
  private catchUp(items: StorageRecord[], listRv: string): void {
    const seen = new Set<string>();
    for (const r of [...items].sort((a, b) => rvOf(a) - rvOf(b))) {
      const k = keyOf(r);
      seen.add(k);
      const old = this.cache!.get(k);
      if (!old) this.emit('ADDED', r);
      else if (old.metadata.uid !== r.metadata.uid) {
        // Deleted and re-created meanwhile: the deletion came no later than the creation.
        this.emit('DELETED', withRv(old, r.metadata.resourceVersion!));
        this.emit('ADDED', r);
      } else if (old.metadata.resourceVersion !== r.metadata.resourceVersion) this.emit('MODIFIED', r);
    }
    // The deletion's own version is unknown; the list's is no earlier.
    for (const [k, old] of [...this.cache!]) if (!seen.has(k)) this.emit('DELETED', withRv(old, listRv));
  }

  private begin(rv: number): void {
    if (this.stopped) return;
    this.startRv = this.lastRv = rv;
    this.markReady();
    this.connect();
  }

  private connect(): void {
    if (this.stopped) return;
    const conn = ++this.conn;
    const started = Date.now();
    let sawEvent = false;
    let gone = false;
    let failure: unknown;
    const params = {
      resourceVersion: String(this.lastRv),
      allowWatchBookmarks: true,
      timeoutSeconds: this.src.timeoutSeconds(),
    };
    const onEvent = (type: string, obj: unknown): void => {
      if (conn !== this.conn) return;
      if (type === 'ERROR') {
        const s = obj as K8sStatus;
        if (s?.code === 410) gone = true;
        else failure = new Error(`watch error ${s?.code}: ${s?.message ?? s?.reason}`);
        return;
      }
      sawEvent = true;
      this.backoff = 0;
      const rec = obj as StorageRecord;
      const rv = Number(rec?.metadata?.resourceVersion);
      if (!Number.isFinite(rv)) return;
      if (type === 'BOOKMARK') return this.advance(rv);
      if (rv <= this.lastRv) return; // already delivered before a reconnect
      if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.emit(type, rec);
    };
    const onDone = (err: unknown): void => {
      if (conn !== this.conn || this.stopped) return;
      this.conn++; // this connection is over: late callbacks from it are ignored
      this.abort = undefined;
      if (gone || (err as { statusCode?: number } | null)?.statusCode === 410) return this.expired();
      failure ??= err;
      const healthy = !failure && (sawEvent || Date.now() - started >= HEALTHY_MS);
      if (healthy) return this.connect();
      if (failure) this.src.warn('storage watch ended with an error; reconnecting', failure);
      this.backoff = Math.min(Math.max(100, this.backoff * 2), MAX_BACKOFF_MS);
      this.timer = setTimeout(() => this.connect(), this.backoff);
    };
    this.src.watch.watch(this.src.path, params, onEvent, onDone).then((ctl) => {
      if (conn === this.conn) this.abort = ctl;
      else ctl.abort();
    }, onDone);
  }

  private emit(type: RecordEventType, rec: StorageRecord): void {
    if (this.cache) {
      if (type === 'DELETED') this.cache.delete(keyOf(rec));
      else this.cache.set(keyOf(rec), rec);
    }
    this.sink.event(type, rec);
    const uid = objectUid(rec);
    if (type === 'DELETED' && uid) this.deletions.get(uid)?.(rec);
    this.advance(rvOf(rec));
  }

  private advance(rv: number): void {
    if (!(rv > this.lastRv) && !Number.isNaN(this.lastRv)) return;
    this.lastRv = rv;
    for (const w of [...this.waiters]) if (w.rv <= rv) w.done();
  }

  private expired(): void {
    const rv = String(this.lastRv);
    if (this.cache) {
      this.src.warn(`storage watch: history after resourceVersion ${rv} is gone; re-listing`);
      void this.relist();
      return;
    }
    if (!this.sink.expired(rv)) return this.stop();
    this.src.warn(`storage watch: history after resourceVersion ${rv} is gone; continuing from now`);
    void this.relist();
  }
}
