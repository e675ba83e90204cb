// Reusable conformance suite: every Store implementation must pass these cases.
//
//   storeConformance('SqliteState', async () => ({ store, cleanup }));

import { expect } from 'chai';

import { ApiError } from '../../pkg/api/errors.js';
import type { Store, StoredObject, WatchEvent } from '../../pkg/registry/store.js';
import { rejection } from '../support/assert.js';

export interface StoreFixture {
  store: Store<StoredObject>;
  cleanup: () => Promise<void>;
}

interface ThingSpec {
  size: number;
  note?: string;
}

/** A fresh, unsaved object: identity fields empty so the store must assign them. */
export function thing(name: string, namespace = 'default', opts: { labels?: Record<string, string>; size?: number } = {}): StoredObject {
  return {
    apiVersion: 'test.agentplane.io/v1',
    kind: 'Thing',
    metadata: {
      name,
      namespace,
      uid: '',
      resourceVersion: '',
      generation: 1,
      creationTimestamp: '',
      ...(opts.labels ? { labels: opts.labels } : {}),
    },
    spec: { size: opts.size ?? 1 } satisfies ThingSpec,
    status: { phase: 'New' },
  };
}

const rv = (o: StoredObject): number => {
  const n = Number(o.metadata.resourceVersion);
  expect(Number.isSafeInteger(n), `resourceVersion ${o.metadata.resourceVersion} is an integer`).to.equal(true);
  return n;
};

const names = (items: StoredObject[]): string[] => items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

export function storeConformance(name: string, make: () => Promise<StoreFixture>): void {
  describe(`Store conformance: ${name}`, function () {
    this.timeout(10_000);

    let store: Store<StoredObject>;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });

    afterEach(async () => {
      await cleanup();
    });

    describe('create', () => {
      it('assigns uid, resourceVersion and creationTimestamp and keeps the rest', async () => {
        const before = Date.now();
        const created = await store.create(thing('alpha', 'default', { labels: { team: 'a' }, size: 3 }));
        expect(created.metadata.uid).to.be.a('string').and.not.equal('');
        expect(rv(created)).to.be.greaterThan(0);
        const ts = Date.parse(created.metadata.creationTimestamp);
        expect(Number.isNaN(ts)).to.equal(false);
        expect(ts).to.be.within(before - 1000, Date.now() + 1000);
        expect(created.metadata).to.deep.include({ name: 'alpha', namespace: 'default', generation: 1 });
        expect(created.metadata.labels).to.deep.equal({ team: 'a' });
        expect(created.spec).to.deep.equal({ size: 3 });
        expect(created.status).to.deep.equal({ phase: 'New' });
        expect(await store.get('default', 'alpha')).to.deep.equal(created);
      });

      it('assigns distinct uids and increasing resourceVersions', async () => {
        const a = await store.create(thing('a'));
        const b = await store.create(thing('b'));
        expect(a.metadata.uid).to.not.equal(b.metadata.uid);
        expect(rv(b)).to.be.greaterThan(rv(a));
      });

      it('does not modify the object passed in', async () => {
        const input = thing('untouched');
        const snapshot = structuredClone(input);
        await store.create(input);
        expect(input).to.deep.equal(snapshot);
      });

      it('fails with AlreadyExists (409) when the name is taken in the namespace', async () => {
        await store.create(thing('dup', 'ns-a', { size: 1 }));
        const err = await rejection(store.create(thing('dup', 'ns-a', { size: 2 })), ApiError);
        expect(err.reason).to.equal('AlreadyExists');
        expect(err.code).to.equal(409);
        expect(err.message).to.contain('dup');
        // The original is untouched.
        expect(((await store.get('ns-a', 'dup'))!.spec as ThingSpec).size).to.equal(1);
      });

      it('allows the same name in different namespaces', async () => {
        const a = await store.create(thing('same', 'ns-a'));
        const b = await store.create(thing('same', 'ns-b'));
        expect(a.metadata.uid).to.not.equal(b.metadata.uid);
        expect((await store.get('ns-a', 'same'))!.metadata.uid).to.equal(a.metadata.uid);
        expect((await store.get('ns-b', 'same'))!.metadata.uid).to.equal(b.metadata.uid);
      });
    });

    describe('get', () => {
      it('returns undefined for a missing object', async () => {
        expect(await store.get('default', 'nope')).to.equal(undefined);
      });

      it('returns undefined for a name that exists only in another namespace', async () => {
        await store.create(thing('elsewhere', 'ns-a'));
        expect(await store.get('ns-b', 'elsewhere')).to.equal(undefined);
      });
    });

    describe('update', () => {
      it('stores the change and bumps resourceVersion monotonically', async () => {
        const created = await store.create(thing('upd'));
        let cur = created;
        const seen = [rv(created)];
        for (let i = 2; i <= 5; i++) {
          const next = structuredClone(cur);
          (next.spec as ThingSpec).size = i;
          cur = await store.update(next);
          seen.push(rv(cur));
        }
        for (let i = 1; i < seen.length; i++) expect(seen[i]).to.be.greaterThan(seen[i - 1]);
        const stored = await store.get('default', 'upd');
        expect((stored!.spec as ThingSpec).size).to.equal(5);
        expect(stored!.metadata.resourceVersion).to.equal(cur.metadata.resourceVersion);
        expect(stored!.metadata.uid).to.equal(created.metadata.uid);
        expect(stored!.metadata.creationTimestamp).to.equal(created.metadata.creationTimestamp);
      });

      it('fails with Conflict (409) on a stale resourceVersion and keeps the newer data', async () => {
        const created = await store.create(thing('stale'));
        const first = structuredClone(created);
        (first.spec as ThingSpec).size = 10;
        await store.update(first);

        const late = structuredClone(created); // still carries the old resourceVersion
        (late.spec as ThingSpec).size = 99;
        const err = await rejection(store.update(late), ApiError);
        expect(err.reason).to.equal('Conflict');
        expect(err.code).to.equal(409);
        expect(((await store.get('default', 'stale'))!.spec as ThingSpec).size).to.equal(10);
      });

      it('fails with Conflict when the uid differs (object was re-created)', async () => {
        const old = await store.create(thing('reborn'));
        await store.delete('default', 'reborn');
        const fresh = await store.create(thing('reborn'));
        const stale = structuredClone(old);
        stale.metadata.resourceVersion = fresh.metadata.resourceVersion;
        const err = await rejection(store.update(stale), ApiError);
        expect(err.reason).to.equal('Conflict');
      });

      it('fails with NotFound for a missing object', async () => {
        const ghost = thing('ghost');
        ghost.metadata.uid = 'u';
        ghost.metadata.resourceVersion = '1';
        const err = await rejection(store.update(ghost), ApiError);
        expect(err.reason).to.equal('NotFound');
        expect(err.code).to.equal(404);
      });
    });

    describe('list', () => {
      it('lists all namespaces ordered by namespace then name, or one namespace ordered by name', async () => {
        for (const [ns, n] of [
          ['ns-b', 'zed'],
          ['ns-a', 'mid'],
          ['ns-b', 'alpha'],
          ['ns-a', 'alpha'],
          ['ns-c', 'only'],
        ] as const) {
          await store.create(thing(n, ns));
        }
        const all = await store.list();
        expect(names(all.items)).to.deep.equal(['ns-a/alpha', 'ns-a/mid', 'ns-b/alpha', 'ns-b/zed', 'ns-c/only']);
        const nsB = await store.list({ namespace: 'ns-b' });
        expect(names(nsB.items)).to.deep.equal(['ns-b/alpha', 'ns-b/zed']);
        expect((await store.list({ namespace: 'ns-none' })).items).to.deep.equal([]);
      });

      it('returns an empty list with a resourceVersion on an empty store', async () => {
        const res = await store.list();
        expect(res.items).to.deep.equal([]);
        expect(res.resourceVersion).to.be.a('string');
        expect(Number.isSafeInteger(Number(res.resourceVersion))).to.equal(true);
      });

      it('filters by labelSelector (every label must match)', async () => {
        await store.create(thing('a', 'default', { labels: { team: 'x', tier: 'web' } }));
        await store.create(thing('b', 'default', { labels: { team: 'x', tier: 'db' } }));
        await store.create(thing('c', 'default', { labels: { team: 'y', tier: 'web' } }));
        await store.create(thing('d', 'default'));
        await store.create(thing('e', 'other', { labels: { team: 'x', tier: 'web' } }));

        const teamX = await store.list({ labelSelector: { team: 'x' } });
        expect(names(teamX.items)).to.deep.equal(['default/a', 'default/b', 'other/e']);
        const both = await store.list({ labelSelector: { team: 'x', tier: 'web' } });
        expect(names(both.items)).to.deep.equal(['default/a', 'other/e']);
        const scoped = await store.list({ namespace: 'default', labelSelector: { team: 'x', tier: 'web' } });
        expect(names(scoped.items)).to.deep.equal(['default/a']);
        expect((await store.list({ labelSelector: { team: 'none' } })).items).to.deep.equal([]);
        // An empty selector selects everything.
        expect((await store.list({ labelSelector: {} })).items).to.have.length(5);
      });

      it('reports a resourceVersion at least every listed item’s, and at least the last write', async () => {
        const a = await store.create(thing('a'));
        await store.create(thing('b'));
        const up = structuredClone(a);
        (up.spec as ThingSpec).size = 7;
        const updated = await store.update(up);
        const res = await store.list();
        const listRv = Number(res.resourceVersion);
        for (const item of res.items) expect(listRv).to.be.at.least(rv(item));
        expect(listRv).to.be.at.least(rv(updated));

        // A delete also advances it (the list must not go backwards past a deletion).
        const removed = await store.delete('default', 'b');
        const after = Number((await store.list()).resourceVersion);
        expect(after).to.be.at.least(rv(removed!));
        expect(after).to.be.greaterThan(listRv);
      });
    });

    describe('delete', () => {
      it('returns the removed object and get no longer finds it', async () => {
        const created = await store.create(thing('bye', 'default', { size: 4 }));
        const removed = await store.delete('default', 'bye');
        expect(removed).to.not.equal(undefined);
        expect(removed!.metadata.uid).to.equal(created.metadata.uid);
        expect((removed!.spec as ThingSpec).size).to.equal(4);
        expect(rv(removed!)).to.be.greaterThan(rv(created));
        expect(await store.get('default', 'bye')).to.equal(undefined);
        expect((await store.list()).items).to.deep.equal([]);
      });

      it('returns undefined for a missing object', async () => {
        expect(await store.delete('default', 'never')).to.equal(undefined);
      });

      it('honours a matching resourceVersion precondition', async () => {
        const created = await store.create(thing('guarded'));
        const removed = await store.delete('default', 'guarded', { resourceVersion: created.metadata.resourceVersion });
        expect(removed!.metadata.uid).to.equal(created.metadata.uid);
        expect(await store.get('default', 'guarded')).to.equal(undefined);
      });

      it('fails with Conflict on a precondition mismatch and keeps the object', async () => {
        const created = await store.create(thing('guarded'));
        const up = structuredClone(created);
        (up.spec as ThingSpec).size = 2;
        await store.update(up);
        const err = await rejection(store.delete('default', 'guarded', { resourceVersion: created.metadata.resourceVersion }), ApiError);
        expect(err.reason).to.equal('Conflict');
        expect(err.code).to.equal(409);
        expect(await store.get('default', 'guarded')).to.not.equal(undefined);
      });

      it('lets the name be created again afterwards', async () => {
        const first = await store.create(thing('again'));
        await store.delete('default', 'again');
        const second = await store.create(thing('again'));
        expect(second.metadata.uid).to.not.equal(first.metadata.uid);
        expect(rv(second)).to.be.greaterThan(rv(first));
      });
    });

    describe('watch', () => {
      it('sees ADDED, MODIFIED and DELETED in order with the written objects', async () => {
        const events: WatchEvent<StoredObject>[] = [];
        const stop = store.watch((ev) => events.push(ev));
        try {
          const created = await store.create(thing('w'));
          const next = structuredClone(created);
          (next.spec as ThingSpec).size = 2;
          const updated = await store.update(next);
          const removed = await store.delete('default', 'w');

          expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
          expect(events[0].object).to.deep.equal(created);
          expect(events[1].object).to.deep.equal(updated);
          expect(events[2].object).to.deep.equal(removed);
          const rvs = events.map((e) => rv(e.object));
          expect(rvs[1]).to.be.greaterThan(rvs[0]);
          expect(rvs[2]).to.be.greaterThan(rvs[1]);
        } finally {
          stop();
        }
      });

      it('does not emit for failed writes', async () => {
        const created = await store.create(thing('quiet'));
        const events: WatchEvent<StoredObject>[] = [];
        const stop = store.watch((ev) => events.push(ev));
        try {
          await rejection(store.create(thing('quiet')), ApiError);
          await rejection(store.update({ ...structuredClone(created), metadata: { ...created.metadata, resourceVersion: '0' } }), ApiError);
          await rejection(store.delete('default', 'quiet', { resourceVersion: '0' }), ApiError);
          expect(await store.delete('default', 'missing')).to.equal(undefined);
          expect(events).to.deep.equal([]);
        } finally {
          stop();
        }
      });

      it('only reports changes after it started', async () => {
        await store.create(thing('before'));
        const events: WatchEvent<StoredObject>[] = [];
        const stop = store.watch((ev) => events.push(ev));
        try {
          await store.create(thing('after'));
          expect(events.map((e) => e.object.metadata.name)).to.deep.equal(['after']);
        } finally {
          stop();
        }
      });

      it('stops after unsubscribe, while other watchers keep receiving', async () => {
        const a: string[] = [];
        const b: string[] = [];
        const stopA = store.watch((ev) => a.push(`${ev.type}:${ev.object.metadata.name}`));
        const stopB = store.watch((ev) => b.push(`${ev.type}:${ev.object.metadata.name}`));
        try {
          await store.create(thing('one'));
          stopA();
          await store.create(thing('two'));
          await store.delete('default', 'one');
          expect(a).to.deep.equal(['ADDED:one']);
          expect(b).to.deep.equal(['ADDED:one', 'ADDED:two', 'DELETED:one']);
        } finally {
          stopB();
        }
      });
    });

    describe('copies', () => {
      it('objects returned by create, get, list, update and delete are copies', async () => {
        const created = await store.create(thing('copy', 'default', { labels: { k: 'v' } }));
        const original = structuredClone(created);

        (created.spec as ThingSpec).size = 1000;
        created.metadata.labels!.k = 'mutated';
        expect(await store.get('default', 'copy')).to.deep.equal(original);

        const got = (await store.get('default', 'copy'))!;
        (got.status as { phase: string }).phase = 'Hacked';
        expect(await store.get('default', 'copy')).to.deep.equal(original);

        const listed = (await store.list()).items[0];
        listed.metadata.name = 'renamed';
        (listed.spec as ThingSpec).size = -1;
        expect(await store.get('default', 'copy')).to.deep.equal(original);

        const input = structuredClone(original);
        (input.spec as ThingSpec).size = 2;
        const updated = await store.update(input);
        const afterUpdate = structuredClone(updated);
        (input.spec as ThingSpec).size = 3;
        (updated.spec as ThingSpec).size = 4;
        expect(await store.get('default', 'copy')).to.deep.equal(afterUpdate);
      });

      it('objects handed to watchers are copies, independent per watcher', async () => {
        const seenByB: StoredObject[] = [];
        const stopA = store.watch((ev) => {
          (ev.object.spec as ThingSpec).size = -42;
          ev.object.metadata.name = 'hijacked';
        });
        const stopB = store.watch((ev) => seenByB.push(ev.object));
        try {
          const created = await store.create(thing('watched', 'default', { size: 5 }));
          expect((created.spec as ThingSpec).size).to.equal(5);
          expect(created.metadata.name).to.equal('watched');
          expect(seenByB).to.have.length(1);
          expect((seenByB[0].spec as ThingSpec).size).to.equal(5);
          expect(seenByB[0].metadata.name).to.equal('watched');
          const stored = await store.get('default', 'watched');
          expect((stored!.spec as ThingSpec).size).to.equal(5);
        } finally {
          stopA();
          stopB();
        }
      });
    });
  });
}
