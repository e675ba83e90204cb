// Watch fan-out for one record kind within one KubernetesState: all "from now" subscribers
// share one upstream watch; a subscriber that starts from a resourceVersion gets its own.
// Writers of this process wait (briefly) until every upstream has delivered their write, so,
// as with the SQLite store, local watchers have seen a write when the write resolves.

import { expired, type ApiError } from '../../api/errors.js';
import { fromJson } from '../copy.js';
import type { StoredObject, WatchEvent, WatchOptions } from '../store.js';
import { fromRecord, type StorageRecord } from './records.js';
import { Upstream, type RecordEventType, type UpstreamSource } from './upstream.js';

interface Subscriber {
  fn: (ev: WatchEvent<StoredObject>) => void;
  onError?: (err: ApiError) => void;
  active: boolean;
}

export class KindHub {
  private shared?: Upstream;
  private readonly sharedSubs = new Set<Subscriber>();
  private readonly own = new Map<Subscriber, Upstream>();
  private closed = false;

  constructor(
    private readonly src: UpstreamSource,
    private readonly settleMs: number,
  ) {}

  subscribe(fn: Subscriber['fn'], opts: WatchOptions): () => void {
    const sub: Subscriber = { fn, onError: opts.onError, active: true };
    if (this.closed) return () => undefined;
    const rv = opts.resourceVersion;
    if (rv === undefined || rv === '' || rv === '0') {
      this.sharedSubs.add(sub);
      this.shared ??= this.sharedUpstream();
      return () => {
        sub.active = false;
        this.sharedSubs.delete(sub);
        if (this.sharedSubs.size === 0) this.stopShared();
      };
    }
    if (!/^[0-9]+$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
      // Not a version this store ever handed out: as old as can be.
      this.fail(sub, expired(rv));
      return () => undefined;
    }
    const up = new Upstream(
      this.src,
      {
        event: (type, rec) => this.deliver([sub], type, rec),
        expired: (at) => {
          if (!sub.onError) return true;
          this.own.delete(sub);
          this.fail(sub, expired(at));
          return false;
        },
      },
      rv,
    );
    this.own.set(sub, up);
    return () => {
      sub.active = false;
      this.own.get(sub)?.stop();
      this.own.delete(sub);
    };
  }

  /** Before a write: every watch knows where it starts, so "from now" excludes nothing after. */
  async beforeWrite(): Promise<void> {
    await Promise.all(this.upstreams().map((u) => u.ready));
  }

  /** After a write at `rv`: every watch of this process has delivered it. */
  async afterWrite(rv: string): Promise<void> {
    const n = Number(rv);
    await Promise.all(this.upstreams().map((u) => u.ready.then(() => u.settled(n, this.settleMs))));
  }

  /**
   * The first DELETED event for `uid` from any watch of this process: the removed object with
   * its deletion's resourceVersion (undefined when nothing watches or none saw it in time).
   */
  expectDeletion(uid: string): { result: Promise<StorageRecord | undefined>; cancel: () => void } {
    const waits = this.upstreams().map((u) => u.expectDeletion(uid, this.settleMs));
    const result = new Promise<StorageRecord | undefined>((res) => {
      let left = waits.length;
      if (left === 0) return res(undefined);
      for (const w of waits) {
        void w.result.then((rec) => {
          left--;
          if (rec || left === 0) res(rec);
        });
      }
    });
    return { result, cancel: () => waits.forEach((w) => w.cancel()) };
  }

  close(): void {
    this.closed = true;
    this.stopShared();
    for (const up of this.own.values()) up.stop();
    this.own.clear();
    for (const sub of this.sharedSubs) sub.active = false;
    this.sharedSubs.clear();
  }

  private sharedUpstream(): Upstream {
    // A "from now" upstream never expires: after lost history it catches up by re-listing.
    return new Upstream(this.src, {
      event: (type, rec) => this.deliver([...this.sharedSubs], type, rec),
      expired: () => true,
    });
  }

  private stopShared(): void {
    this.shared?.stop();
    this.shared = undefined;
  }

  private upstreams(): Upstream[] {
    return [...(this.shared ? [this.shared] : []), ...this.own.values()];
  }

  private deliver(subs: Subscriber[], type: RecordEventType, rec: StorageRecord): void {
    // Serialized once; each subscriber parses its own copy (cheaper than structuredClone, pkg/registry/copy.ts).
    const json = JSON.stringify(fromRecord<StoredObject>(rec));
    for (const sub of subs) {
      if (!sub.active) continue;
      try {
        sub.fn({ type, object: fromJson<StoredObject>(json) });
      } catch (err) {
        this.src.warn('storage watch: a subscriber threw', err);
      }
    }
  }

  private fail(sub: Subscriber, err: ApiError): void {
    sub.active = false;
    if (!sub.onError) throw err;
    const onError = sub.onError;
    queueMicrotask(() => onError(err));
  }
}
