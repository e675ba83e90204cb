// The Kubernetes store against a real etcd + kube-apiserver (hack/): the same conformance suite
// as SQLite, then what only a remote store has (expiry from the server, streams the server
// ends, writers elsewhere, missing namespaces).

import { setTimeout as sleep } from 'node:timers/promises';

import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';

import { ApiError } from '../../pkg/api/errors.js';
import { ensureCrds, RECORD_KINDS } from '../../pkg/registry/kubernetes/crds.js';
import { KubernetesState, type KubernetesStateOptions } from '../../pkg/registry/kubernetes/kubernetes-state.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { Store, StoredObject, WatchEvent } from '../../pkg/registry/store.js';
import { storeConformance, thing } from '../conformance/store.js';
import { controlPlaneUp, REPO, restartApiserver, type ControlPlane } from '../support/control-plane.js';

/** Namespaces the conformance suite writes to ('ns-none' must stay absent). */
const NAMESPACES = ['ns-a', 'ns-b', 'ns-c', 'other', 'e2e'];
/** Record kinds created before the cases run (more are made on demand). */
const POOL = 40;

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const summary = (evs: WatchEvent<StoredObject>[]): string[] =>
  evs.map((e) => `${e.type}:${e.object.metadata.name}:${(e.object.spec as { size: number }).size}`);

describe('KubernetesState on a real control plane (e2e)', function () {
  // A cold machine builds kube-apiserver and etcd first; afterwards start-up takes seconds.
  this.timeout(30 * 60_000);

  let cp: ControlPlane;
  let kc: KubeConfig;
  let kinds = 0;
  const states: KubernetesState[] = [];

  /** A fresh record kind (its own CRD), so no case sees another's objects or events. */
  async function freshStore(opts: KubernetesStateOptions = {}): Promise<{ state: KubernetesState; store: Store<StoredObject>; kind: string }> {
    const kind = `Thing${++kinds}`;
    if (kinds > POOL) await ensureCrds(kc, [kind]);
    const state = new KubernetesState(kc, opts);
    states.push(state);
    return { state, store: state.store<StoredObject>(kind), kind };
  }

  before(async () => {
    cp = await controlPlaneUp();
    kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfig);
    for (const ns of NAMESPACES) await cp.kubectl(['create', 'namespace', ns]);
    // kube-apiserver holds the first write of a kind for about 2 s after its CRD appears:
    // creating every case's CRD up front pays that once instead of once per case.
    await ensureCrds(
      kc,
      Array.from({ length: POOL }, (_, i) => `Thing${i + 1}`),
    );
  });

  after(async () => {
    states.forEach((s) => s.close());
    await cp?.down();
  });

  storeConformance('KubernetesState', async () => {
    const { state, store } = await freshStore();
    return { store, cleanup: async () => state.close() };
  });

  describe('beyond the conformance suite', function () {
    this.timeout(30_000);

    it('watch from a resourceVersion replays what followed it, in order, then goes live', async () => {
      const { store } = await freshStore();
      const a = await store.create(thing('a', 'default', { size: 1 }));
      const up = structuredClone(a);
      (up.spec as { size: number }).size = 2;
      await store.update(up);
      await store.create(thing('b', 'ns-a', { size: 3 }));

      const events: WatchEvent<StoredObject>[] = [];
      const errors: ApiError[] = [];
      const stop = store.watch((e) => events.push(e), { resourceVersion: a.metadata.resourceVersion, onError: (e) => errors.push(e) });
      try {
        await until('replay', () => events.length >= 2);
        await store.delete('default', 'a');
        await until('live delete', () => events.length >= 3);
        expect(summary(events)).to.deep.equal(['MODIFIED:a:2', 'ADDED:b:3', 'DELETED:a:2']);
        expect(errors).to.deep.equal([]);
      } finally {
        stop();
      }
    });

    it('watch from a resourceVersion the server no longer holds ends with Expired (410)', async () => {
      const { store } = await freshStore();
      await store.create(thing('x'));
      const events: WatchEvent<StoredObject>[] = [];
      let err: ApiError | undefined;
      // kube-apiserver answers "too old resource version: 1 (N)" with an ERROR event, code 410.
      const stop = store.watch((e) => events.push(e), { resourceVersion: '1', onError: (e) => (err = e) });
      try {
        const got = await until('onError', () => err);
        expect(got).to.be.instanceOf(ApiError);
        expect(got.reason).to.equal('Expired');
        expect(got.code).to.equal(410);
        await store.create(thing('y'));
        await sleep(200);
        expect(events).to.deep.equal([]);
      } finally {
        stop();
      }
    });

    it('a resourceVersion that is not a number is Expired at once (thrown without onError), as in SQLite', async () => {
      const { store } = await freshStore();
      const sqlite = new SqliteState(':memory:');
      try {
        for (const s of [store, sqlite.store<StoredObject>('Thing')]) {
          expect(() => s.watch(() => undefined, { resourceVersion: 'abc' })).to.throw(ApiError, /too old resource version/);
          let err: ApiError | undefined;
          s.watch(() => undefined, { resourceVersion: 'abc', onError: (e) => (err = e) });
          expect((await until('onError', () => err)).reason).to.equal('Expired');
        }
      } finally {
        sqlite.close();
      }
    });

    it('keeps watching, without loss or repeats, when the API server ends each watch', async () => {
      // The server closes every upstream watch after one second; writes come from another
      // client (no local barrier), some while the watch is reconnecting.
      const { store, kind } = await freshStore({ watchTimeoutSeconds: 1 });
      const writer = new KubernetesState(kc);
      states.push(writer);
      const other = writer.store<StoredObject>(kind);

      const shared: WatchEvent<StoredObject>[] = [];
      const fromRv: WatchEvent<StoredObject>[] = [];
      const stopShared = store.watch((e) => shared.push(e));
      const start = (await store.list()).resourceVersion;
      const errors: ApiError[] = [];
      const stopRv = store.watch((e) => fromRv.push(e), { resourceVersion: start, onError: (e) => errors.push(e) });
      try {
        await sleep(300);
        const expected: string[] = [];
        for (let i = 1; i <= 8; i++) {
          await other.create(thing(`n${i}`, 'default', { size: i }));
          expected.push(`ADDED:n${i}:${i}`);
          await sleep(350);
        }
        await until('all events', () => shared.length >= expected.length && fromRv.length >= expected.length);
        await sleep(1_200); // one more server-side close and reconnect: nothing is replayed
        expect(summary(shared)).to.deep.equal(expected);
        expect(summary(fromRv)).to.deep.equal(expected);
        expect(errors).to.deep.equal([]);
      } finally {
        stopShared();
        stopRv();
      }
    });

    it('delivers changes made by other clients (kubectl) to the shared watch', async () => {
      const { store, kind } = await freshStore();
      const created = await store.create(thing('edited', 'e2e', { size: 1 }));
      const events: WatchEvent<StoredObject>[] = [];
      const stop = store.watch((e) => events.push(e));
      try {
        await sleep(200);
        await cp.kubectl(['-n', 'e2e', 'label', `${kind.toLowerCase()}records.internal.agentplane.io/edited`, 'by=kubectl']);
        const ev = await until('MODIFIED', () => events.find((e) => e.type === 'MODIFIED'));
        expect(ev.object.metadata.labels).to.deep.equal({ by: 'kubectl' });
        expect(ev.object.metadata.uid).to.equal(created.metadata.uid);
        expect(Number(ev.object.metadata.resourceVersion)).to.be.greaterThan(Number(created.metadata.resourceVersion));
        // A label change is no spec change: agentplane's generation stays.
        expect(ev.object.metadata.generation).to.equal(1);
        expect((await store.list({ labelSelector: { by: 'kubectl' } })).items.map((o) => o.metadata.name)).to.deep.equal(['edited']);
      } finally {
        stop();
      }
    });

    it('lists by label selector within and across namespaces', async () => {
      const { store } = await freshStore();
      await store.create(thing('p', 'ns-a', { labels: { app: 'x', 'agentplane.io/squad': 's1' } }));
      await store.create(thing('q', 'ns-b', { labels: { app: 'x' } }));
      await store.create(thing('r', 'ns-b', { labels: { app: 'y', 'agentplane.io/squad': 's1' } }));
      const names = async (f: Parameters<typeof store.list>[0]): Promise<string[]> =>
        (await store.list(f)).items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
      expect(await names({ labelSelector: { app: 'x' } })).to.deep.equal(['ns-a/p', 'ns-b/q']);
      expect(await names({ labelSelector: { 'agentplane.io/squad': 's1' } })).to.deep.equal(['ns-a/p', 'ns-b/r']);
      expect(await names({ namespace: 'ns-b', labelSelector: { app: 'x' } })).to.deep.equal(['ns-b/q']);
      expect(await names({ namespace: 'ns-b', labelSelector: { app: 'x', 'agentplane.io/squad': 's1' } })).to.deep.equal([]);
    });

    it('a write into a namespace that does not exist fails with NotFound naming the namespace', async () => {
      const { store } = await freshStore();
      let err: unknown;
      try {
        await store.create(thing('lost', 'no-such-ns'));
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(ApiError);
      expect((err as ApiError).reason).to.equal('NotFound');
      expect((err as ApiError).code).to.equal(404);
      expect((err as ApiError).message).to.equal('namespace "no-such-ns" does not exist');
      expect(await store.get('no-such-ns', 'lost')).to.equal(undefined);
      expect((await store.list({ namespace: 'no-such-ns' })).items).to.deep.equal([]);
    });

    it('refuses what Kubernetes metadata rules refuse as Invalid, and never writes unconditionally', async () => {
      const { store } = await freshStore();
      const bad = await store
        .create(thing('labelled'))
        .then(() => store.create(thing('bad-label', 'default', { labels: { 'not a key': 'v' } })))
        .catch((e: unknown) => e as ApiError);
      expect(bad).to.be.instanceOf(ApiError);
      expect((bad as ApiError).reason).to.equal('Invalid');
      expect((bad as ApiError).details.causes?.[0]?.field).to.equal('metadata.labels');
      // Without a resourceVersion Kubernetes would overwrite whatever is stored; this store refuses.
      const cur = (await store.get('default', 'labelled'))!;
      for (const rv of ['', '0']) {
        const err = await store.update({ ...cur, metadata: { ...cur.metadata, resourceVersion: rv } }).catch((e: unknown) => e as ApiError);
        expect((err as ApiError).reason, `rv "${rv}"`).to.equal('Conflict');
      }
      expect((await store.get('default', 'labelled'))!.metadata.resourceVersion).to.equal(cur.metadata.resourceVersion);
    });

    it('says which CRD is missing instead of reporting objects as absent', async () => {
      const state = new KubernetesState(kc);
      states.push(state);
      const store = state.store<StoredObject>('Uninstalled');
      for (const call of [() => store.get('default', 'x'), () => store.list(), () => store.create(thing('x')), () => store.delete('default', 'x')]) {
        const err = await call().then(
          () => undefined,
          (e: unknown) => e as ApiError,
        );
        expect(err).to.be.instanceOf(ApiError);
        expect(err!.code).to.equal(503);
        expect(err!.message).to.contain('uninstalledrecords.internal.agentplane.io is missing');
      }
    });

    it('keeps agentplane generation and finalization marker apart from the record’s own', async () => {
      const { store } = await freshStore();
      const created = await store.create(thing('fin'));
      const marked = structuredClone(created);
      marked.metadata.generation = 7;
      marked.metadata.deletionTimestamp = '2026-01-01T00:00:00.123Z';
      marked.metadata.annotations = { a: 'b' };
      const saved = await store.update(marked);
      expect(await store.get('default', 'fin')).to.deep.equal(saved);
      expect(saved.metadata).to.deep.include({ generation: 7, deletionTimestamp: '2026-01-01T00:00:00.123Z' });
      // Kubernetes itself does not consider the record deleting: it can still be removed at once.
      expect((await store.delete('default', 'fin'))!.metadata.uid).to.equal(created.metadata.uid);
    });

    it('survives a restart of kube-apiserver: the shared watch resumes; a watch from a version resumes or reports Expired', async () => {
      const warnings: string[] = [];
      const { store } = await freshStore({ logger: { warn: (_o, msg) => warnings.push(msg) } });
      const before = await store.create(thing('before', 'default', { size: 1 }));
      const shared: WatchEvent<StoredObject>[] = [];
      const fromRv: WatchEvent<StoredObject>[] = [];
      const errors: ApiError[] = [];
      const stopShared = store.watch((e) => shared.push(e));
      const stopRv = store.watch((e) => fromRv.push(e), { resourceVersion: before.metadata.resourceVersion, onError: (e) => errors.push(e) });
      try {
        await store.create(thing('one', 'default', { size: 1 }));
        await restartApiserver(cp, kc.getCurrentCluster()!.server);
        await until('a write after the restart', async () =>
          store.create(thing('two', 'default', { size: 2 })).then(
            () => true,
            () => false,
          ),
        );
        await until('the shared watch', () => shared.some((e) => e.object.metadata.name === 'two'), 20_000);
        expect(summary(shared)).to.deep.equal(['ADDED:one:1', 'ADDED:two:2']);
        await until('the versioned watch', () => fromRv.length === 2 || errors.length === 1, 20_000);
        if (errors.length) expect(errors[0].reason).to.equal('Expired');
        else expect(summary(fromRv)).to.deep.equal(['ADDED:one:1', 'ADDED:two:2']);
        expect(warnings.some((w) => w.includes('reconnecting'))).to.equal(true);
      } finally {
        stopShared();
        stopRv();
      }
    });

    it('ensureCrds updates CRDs installed from manifests/crds and the stores work on them', async () => {
      await cp.kubectl(['apply', '-k', `${REPO}/manifests/crds`]);
      await ensureCrds(kc);
      await ensureCrds(kc); // idempotent
      const state = new KubernetesState(kc);
      states.push(state);
      for (const kind of RECORD_KINDS) {
        const s = state.store<StoredObject>(kind);
        const o = await s.create(thing(kind.toLowerCase(), 'e2e'));
        expect(await s.get('e2e', kind.toLowerCase())).to.deep.equal(o);
      }
      const { stdout } = await cp.kubectl(['get', 'agentrecords', '-n', 'e2e', '-o', 'name']);
      expect(stdout.trim()).to.equal('agentrecord.internal.agentplane.io/agent');
    });
  });
});
