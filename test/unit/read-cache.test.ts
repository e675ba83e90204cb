import { expect } from 'chai';

import type { Agent } from '../../pkg/api/agent.js';
import { ApiError, toStatus } from '../../pkg/api/errors.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { decodeContinue, encodeContinue } from '../../pkg/registry/cache/continue-token.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { ReadCache, type ReadStorage } from '../../pkg/registry/cache/reads.js';
import { WatermarkedStore } from '../../pkg/registry/cache/watermark.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { ListFilter, ListResult, Store, StoredObject, WatchEvent, WatchOptions } from '../../pkg/registry/store.js';
import { idleAgentDraft } from '../support/objects.js';
import { FINALIZER_AGENT_CLEANUP } from '../../pkg/api/deletion.js';

const logger = createLogger({ level: 'silent' });
const names = (objs: StoredObject[]): string[] => objs.map((o) => o.metadata.name);

/** The error a promise rejects with (fails when it resolves). */
async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/**
 * A store whose watch delivers only when told to: a cache that lags storage, as the Kubernetes
 * store's informer can. Storage reads are counted.
 */
class LaggingStore implements Store<Agent> {
  held: WatchEvent<Agent>[] = [];
  storageReads = 0;
  private fn?: (ev: WatchEvent<Agent>) => void;
  constructor(private readonly inner: Store<Agent>) {}
  get(ns: string, name: string): Promise<Agent | undefined> {
    this.storageReads++;
    return this.inner.get(ns, name);
  }
  list(filter?: ListFilter): Promise<ListResult<Agent>> {
    this.storageReads++;
    return this.inner.list(filter);
  }
  create(obj: Agent): Promise<Agent> {
    return this.inner.create(obj);
  }
  update(obj: Agent): Promise<Agent> {
    return this.inner.update(obj);
  }
  delete(ns: string, name: string, pre?: { resourceVersion?: string }): Promise<Agent | undefined> {
    return this.inner.delete(ns, name, pre);
  }
  watch(fn: (ev: WatchEvent<Agent>) => void, opts?: WatchOptions): () => void {
    this.fn = fn;
    return this.inner.watch((ev) => this.held.push(ev), opts);
  }
  deliver(): void {
    for (const ev of this.held.splice(0)) this.fn!(ev);
  }
}

/** Deletes an agent for good: the delete marks it, removing agentplane's finalizer removes it. */
async function removeAgentFrom(
  agents: { delete(ns: string, n: string): Promise<unknown>; removeFinalizer(ns: string, n: string, f: string): Promise<void> },
  name: string,
): Promise<void> {
  await agents.delete('default', name);
  await agents.removeFinalizer('default', name, FINALIZER_AGENT_CLEANUP);
}

describe('ReadCache: reads from the informer with resourceVersion rules', function () {
  this.timeout(10_000);

  let state: SqliteState;
  let lagging: LaggingStore;
  let store: WatermarkedStore<Agent>;
  let agents: Registry<Agent>;
  let informer: Informer<Agent>;
  let reads: ReadCache<Agent>;

  const storage = (): ReadStorage<Agent> => ({ get: (ns, n) => agents.get(ns, n), list: (f) => agents.list(f) });

  beforeEach(async () => {
    state = new SqliteState(':memory:');
    lagging = new LaggingStore(state.store<Agent>('Agent'));
    store = new WatermarkedStore(lagging);
    agents = new Registry<Agent>(store, agentStrategy);
    for (const n of ['d', 'b', 'e', 'a', 'c']) await agents.create(idleAgentDraft(n));
    await agents.create(idleAgentDraft('z', {}, 'other'));
    informer = new Informer(agents, logger);
    await informer.start();
    lagging.storageReads = 0;
    reads = new ReadCache(informer, storage(), { written: () => store.written(), waitMs: 200 });
  });

  afterEach(() => {
    informer.stop();
    state.close();
  });

  it('serves a consistent get and list from the cache once it holds every acknowledged write', async () => {
    expect((await reads.get('default', 'a'))?.metadata.name).to.equal('a');
    const page = await reads.list({ namespace: 'default' });
    expect(names(page.items)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(lagging.storageReads).to.equal(0);
  });

  it('reads storage when the cache has not caught up with a write this process acknowledged (read-your-writes)', async () => {
    await agents.create(idleAgentDraft('f'));
    const got = await reads.get('default', 'f');
    expect(got?.metadata.name, 'the write is visible although the cache lags').to.equal('f');
    expect(lagging.storageReads).to.be.greaterThan(0);
    const list = await reads.list({ namespace: 'default' });
    expect(names(list.items)).to.include('f');
  });

  it('after one bounded wait that failed, reads storage at once until the cache reaches that write', async () => {
    await agents.create(idleAgentDraft('f'));
    const waits: number[] = [];
    const waitFor = informer.waitFor.bind(informer);
    informer.waitFor = (rv, ms) => (waits.push(ms), waitFor(rv, ms));
    expect((await reads.get('default', 'f'))?.metadata.name).to.equal('f');
    expect(waits, 'the first read waits the bound').to.deep.equal([200]);
    expect((await reads.get('default', 'f'))?.metadata.name).to.equal('f');
    expect(waits, 'the next one does not wait').to.have.length(1);
    lagging.deliver();
    const before = lagging.storageReads;
    await reads.get('default', 'f');
    expect(lagging.storageReads, 'the cache answers again once it caught up').to.equal(before);
  });

  it('waits for the cache when it catches up within the bound', async () => {
    await agents.create(idleAgentDraft('f'));
    setTimeout(() => lagging.deliver(), 30);
    const before = lagging.storageReads;
    expect((await reads.get('default', 'f'))?.metadata.name).to.equal('f');
    expect(lagging.storageReads, 'served by the cache after waiting').to.equal(before);
  });

  it('serves resourceVersion=0 from the cache at once, even when it lags', async () => {
    await agents.create(idleAgentDraft('f'));
    lagging.storageReads = 0;
    expect(await reads.get('default', 'f', { resourceVersion: '0' })).to.equal(undefined);
    expect(names((await reads.list({ namespace: 'default', resourceVersion: '0' })).items)).to.not.include('f');
    expect(lagging.storageReads).to.equal(0);
  });

  it('answers 504 Too large resource version (kube-apiserver) for a version the cache does not reach in time', async () => {
    // Exact needs the cache's history; with other writers the cache cannot call itself current.
    const shared = new ReadCache(informer, storage(), { written: () => store.written(), otherWriters: true, waitMs: 50 });
    const err = await failure(shared.list({ resourceVersion: '10000', resourceVersionMatch: 'Exact' }));
    expect(err.code).to.equal(504);
    const status = toStatus(err);
    expect(status.reason).to.equal('Timeout');
    expect(status.message).to.match(/^Too large resource version: 10000, current: \d+$/);
    expect(status.details?.causes?.[0]?.reason).to.equal('ResourceVersionTooLarge');
  });

  describe('with other writers (several replicas)', () => {
    let other: Registry<Agent>;
    let shared: ReadCache<Agent>;
    let sources: string[];
    beforeEach(() => {
      // Another replica: writes the same storage without this process's watermark.
      other = new Registry<Agent>(lagging, agentStrategy);
      sources = [];
      shared = new ReadCache(informer, storage(), { written: () => store.written(), otherWriters: true, waitMs: 200, onRead: (s) => void sources.push(s) });
    });

    it("a consistent get and list read storage, so they see another replica's write the cache has not had", async () => {
      await other.create(idleAgentDraft('f'));
      lagging.storageReads = 0;
      expect(await reads.get('default', 'f'), 'the single-writer rule cannot see it').to.equal(undefined);
      expect((await shared.get('default', 'f'))?.metadata.name).to.equal('f');
      expect(names((await shared.list({ namespace: 'default' })).items)).to.deep.equal(['a', 'b', 'c', 'd', 'e', 'f']);
      expect(lagging.storageReads).to.equal(2);
      expect(sources).to.deep.equal(['storage', 'storage']);
    });

    it('resourceVersion 0 and versions the cache holds stay in the cache; a newer version reads storage instead of waiting', async () => {
      const cached = String(informer.resourceVersion());
      await other.create(idleAgentDraft('f'));
      lagging.storageReads = 0;
      expect(await shared.get('default', 'f', { resourceVersion: '0' })).to.equal(undefined);
      expect(await shared.get('default', 'f', { resourceVersion: cached })).to.equal(undefined);
      expect(names((await shared.list({ namespace: 'default', resourceVersion: cached, resourceVersionMatch: 'NotOlderThan' })).items)).to.not.include('f');
      expect(lagging.storageReads).to.equal(0);
      const newer = String(informer.resourceVersion() + 1);
      const started = Date.now();
      expect((await shared.get('default', 'f', { resourceVersion: newer }))?.metadata.name).to.equal('f');
      expect(names((await shared.list({ namespace: 'default', resourceVersion: newer })).items)).to.include('f');
      expect(Date.now() - started, 'no wait for the cache').to.be.below(200);
      expect(lagging.storageReads).to.equal(2);
      expect(sources).to.deep.equal(['cache', 'cache', 'cache', 'storage', 'storage']);
    });

    it("pages a list read from storage over the cache's snapshot when the cache holds the same objects", async () => {
      // Another kind's write moves storage's (global) version past the agents' last change.
      await state.store<Agent>('Other').create(idleAgentDraft('elsewhere'));
      const first = await shared.list({ namespace: 'default', limit: 2 });
      expect(Number(first.resourceVersion)).to.be.greaterThan(informer.resourceVersion());
      expect(decodeContinue(first.continue!).rv, "the token names the cache's snapshot").to.equal(informer.resourceVersion());
      const reads0 = lagging.storageReads;
      const second = await shared.list({ namespace: 'default', limit: 2, continue: first.continue! });
      expect(names([...first.items, ...second.items])).to.deep.equal(['a', 'b', 'c', 'd']);
      expect(lagging.storageReads, 'the next page comes from the cache').to.equal(reads0);

      // A cache that lags storage cannot name that state: the token carries storage's version.
      await other.create(idleAgentDraft('f'));
      const lagged = await shared.list({ namespace: 'default', limit: 2 });
      expect(decodeContinue(lagged.continue!).rv).to.equal(Number(lagged.resourceVersion));
      lagging.deliver();
      const rest = await shared.list({ namespace: 'default', continue: lagged.continue! });
      expect(names(rest.items)).to.deep.equal(['c', 'd', 'e', 'f']);
    });
  });

  it('pages a list with limit/continue over one snapshot, as kube-apiserver does', async () => {
    const first = await reads.list({ namespace: 'default', limit: 2 });
    expect(names(first.items)).to.deep.equal(['a', 'b']);
    expect(first.remainingItemCount).to.equal(3);
    const token = decodeContinue(first.continue!);
    expect(token).to.deep.equal({ rv: Number(first.resourceVersion), start: 'default/b\u0000' });

    // Changes between pages are not seen by the pages of the snapshot.
    await removeAgentFrom(agents, 'c');
    await agents.create(idleAgentDraft('cc'));
    await agents.update('default', 'd', (a) => void (a.metadata.labels = { changed: 'yes' }));
    lagging.deliver();

    const second = await reads.list({ namespace: 'default', limit: 2, continue: first.continue! });
    expect(names(second.items)).to.deep.equal(['c', 'd']);
    expect(second.items[1].metadata.labels?.changed, 'd as it was at the snapshot').to.equal(undefined);
    expect(second.resourceVersion).to.equal(first.resourceVersion);
    const third = await reads.list({ namespace: 'default', limit: 2, continue: second.continue! });
    expect(names(third.items)).to.deep.equal(['e']);
    expect(third.continue).to.equal(undefined);
    expect(third.remainingItemCount).to.equal(undefined);

    // A new list sees the changes.
    expect(names((await reads.list({ namespace: 'default' })).items)).to.deep.equal(['a', 'b', 'cc', 'd', 'e']);
  });

  it('lists across namespaces in namespace/name order, and applies the selection before paging', async () => {
    const all = await reads.list({});
    expect(all.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).to.deep.equal([
      'default/a',
      'default/b',
      'default/c',
      'default/d',
      'default/e',
      'other/z',
    ]);
    const odd = await reads.list({ matches: (o) => ['a', 'c', 'e', 'z'].includes(o.metadata.name), limit: 3 });
    expect(names(odd.items)).to.deep.equal(['a', 'c', 'e']);
    expect(odd.remainingItemCount).to.equal(1);
  });

  it('answers 410 Expired with an inconsistent continue token when the snapshot is gone', async () => {
    const first = await reads.list({ namespace: 'default', limit: 2 });
    const rv = Number(first.resourceVersion);
    // A token from before the informer's history (as after a relist).
    const old = encodeContinue(rv - 3, 'default/b\u0000');
    await agents.update('default', 'a', (a) => void (a.metadata.labels = { x: 'y' }));
    lagging.deliver();
    const floorless = new Informer(agents, logger);
    await floorless.start();
    try {
      const fresh = new ReadCache(floorless, storage(), { written: () => store.written() });
      const err = await failure(fresh.list({ namespace: 'default', limit: 2, continue: old }));
      expect(err.code).to.equal(410);
      const status = toStatus(err);
      expect(status.reason).to.equal('Expired');
      expect(status.message).to.match(/^The provided continue parameter is too old to display a consistent list result/);
      const inconsistent = decodeContinue(status.metadata.continue!);
      expect(inconsistent).to.deep.equal({ rv: -1, start: 'default/b\u0000' });
      // The inconsistent token reads the remainder at the current state.
      const rest = await fresh.list({ namespace: 'default', continue: status.metadata.continue! });
      expect(names(rest.items)).to.deep.equal(['c', 'd', 'e']);
    } finally {
      floorless.stop();
    }
  });

  it('serves resourceVersionMatch=Exact from the recent history and NotOlderThan from the cache', async () => {
    const before = await reads.list({ namespace: 'default' });
    await removeAgentFrom(agents, 'a');
    lagging.deliver();
    const exact = await reads.list({ namespace: 'default', resourceVersion: before.resourceVersion, resourceVersionMatch: 'Exact' });
    expect(names(exact.items)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(exact.resourceVersion).to.equal(before.resourceVersion);
    const newer = await reads.list({ namespace: 'default', resourceVersion: before.resourceVersion, resourceVersionMatch: 'NotOlderThan' });
    expect(names(newer.items)).to.deep.equal(['b', 'c', 'd', 'e']);
    const tooOld = await failure(reads.list({ namespace: 'default', resourceVersion: '1', resourceVersionMatch: 'Exact' }));
    expect([tooOld.code, tooOld.message]).to.deep.equal([410, 'The resourceVersion for the provided list is too old.']);
  });

  it('refuses ListOptions as kube-apiserver does', async () => {
    const cases: [Parameters<ReadCache<Agent>['list']>[0], number, RegExp][] = [
      [{ resourceVersionMatch: 'Exact' }, 422, /resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided/],
      [{ resourceVersion: '0', resourceVersionMatch: 'Exact' }, 422, /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/],
      [{ resourceVersion: '5', resourceVersionMatch: 'Newest' }, 422, /resourceVersionMatch: must be one of "Exact", "NotOlderThan", ""/],
      [{ resourceVersion: '5', continue: encodeContinue(5, 'default/a\u0000') }, 400, /^specifying resource version is not allowed when using continue$/],
      [{ continue: 'not-a-token' }, 400, /^invalid continue token/],
      [{ continue: Buffer.from('{"v":"meta.k8s.io/v2","rv":3,"start":"a"}').toString('base64url') }, 400, /continue key is not supported by this version/],
      [{ resourceVersion: 'abc' }, 400, /^invalid resource version/],
    ];
    for (const [req, code, message] of cases) {
      const err = await failure(reads.list(req));
      expect(toStatus(err).code, JSON.stringify(req)).to.equal(code);
      expect(err.message, JSON.stringify(req)).to.match(message);
    }
  });
});
