import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { StoredObject, WatchEvent } from '../../pkg/registry/store.js';
import { storeConformance, thing } from '../conformance/store.js';

const tmpDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-state-'));

storeConformance('SqliteState (file)', async () => {
  const dir = tmpDir();
  const state = new SqliteState(path.join(dir, 'state.db'));
  return {
    store: state.store<StoredObject>('Thing'),
    cleanup: async () => {
      state.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

storeConformance('SqliteState (:memory:)', async () => {
  const state = new SqliteState(':memory:');
  return { store: state.store<StoredObject>('Thing'), cleanup: async () => state.close() };
});

describe('SqliteState', () => {
  let dir: string;
  beforeEach(() => {
    dir = tmpDir();
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps two kinds in one state separate (objects, lists and watches)', async () => {
    const state = new SqliteState(path.join(dir, 'state.db'));
    try {
      const things = state.store<StoredObject>('Thing');
      const gadgets = state.store<StoredObject>('Gadget');
      const thingEvents: WatchEvent<StoredObject>[] = [];
      const gadgetEvents: WatchEvent<StoredObject>[] = [];
      const stopT = things.watch((e) => thingEvents.push(e));
      const stopG = gadgets.watch((e) => gadgetEvents.push(e));

      const t = await things.create(thing('shared', 'default', { size: 1 }));
      // Same namespace/name under another kind is not a duplicate.
      const g = await gadgets.create(thing('shared', 'default', { size: 2 }));
      expect(g.metadata.uid).to.not.equal(t.metadata.uid);

      expect(((await things.get('default', 'shared'))!.spec as { size: number }).size).to.equal(1);
      expect(((await gadgets.get('default', 'shared'))!.spec as { size: number }).size).to.equal(2);
      await gadgets.create(thing('only-gadget'));
      expect((await things.list()).items.map((o) => o.metadata.name)).to.deep.equal(['shared']);
      expect((await gadgets.list()).items.map((o) => o.metadata.name)).to.deep.equal(['only-gadget', 'shared']);
      expect(await things.get('default', 'only-gadget')).to.equal(undefined);

      // Deleting one kind's object leaves the other's.
      await things.delete('default', 'shared');
      expect(await things.get('default', 'shared')).to.equal(undefined);
      expect(await gadgets.get('default', 'shared')).to.not.equal(undefined);

      expect(thingEvents.map((e) => e.type)).to.deep.equal(['ADDED', 'DELETED']);
      expect(gadgetEvents.map((e) => `${e.type}:${e.object.metadata.name}`)).to.deep.equal(['ADDED:shared', 'ADDED:only-gadget']);
      stopT();
      stopG();
    } finally {
      state.close();
    }
  });

  it('shares one resourceVersion counter across kinds', async () => {
    const state = new SqliteState(':memory:');
    try {
      const a = await state.store<StoredObject>('A').create(thing('x'));
      const b = await state.store<StoredObject>('B').create(thing('x'));
      expect(Number(b.metadata.resourceVersion)).to.be.greaterThan(Number(a.metadata.resourceVersion));
      expect(Number((await state.store('A').list()).resourceVersion)).to.be.at.least(Number(b.metadata.resourceVersion));
    } finally {
      state.close();
    }
  });

  it('two store handles of the same kind see each other’s objects and watch events', async () => {
    const state = new SqliteState(':memory:');
    try {
      const h1 = state.store<StoredObject>('Thing');
      const h2 = state.store<StoredObject>('Thing');
      const seen: string[] = [];
      const stop = h2.watch((e) => seen.push(`${e.type}:${e.object.metadata.name}`));
      await h1.create(thing('via-h1'));
      expect(await h2.get('default', 'via-h1')).to.not.equal(undefined);
      expect(seen).to.deep.equal(['ADDED:via-h1']);
      stop();
    } finally {
      state.close();
    }
  });

  it('keeps data across close and reopen, and resourceVersions continue upward', async () => {
    const file = path.join(dir, 'state.db');
    const first = new SqliteState(file);
    const s1 = first.store<StoredObject>('Thing');
    const created = await s1.create(thing('durable', 'team-a', { labels: { keep: 'yes' }, size: 9 }));
    const up = structuredClone(created);
    (up.spec as { size: number }).size = 10;
    const updated = await s1.update(up);
    await s1.create(thing('gone'));
    await s1.delete('default', 'gone');
    const lastRv = Number((await s1.list()).resourceVersion);
    first.close();

    const second = new SqliteState(file);
    try {
      const s2 = second.store<StoredObject>('Thing');
      const got = await s2.get('team-a', 'durable');
      expect(got).to.deep.equal(updated);
      expect(await s2.get('default', 'gone')).to.equal(undefined);
      const list = await s2.list();
      expect(list.items.map((o) => o.metadata.name)).to.deep.equal(['durable']);
      expect(Number(list.resourceVersion)).to.equal(lastRv);

      // The counter is persisted: new writes get a higher resourceVersion than anything before.
      const again = await s2.create(thing('new'));
      expect(Number(again.metadata.resourceVersion)).to.be.greaterThan(lastRv);
      // Optimistic concurrency still works against the persisted version.
      const stale = structuredClone(created);
      let reason: string | undefined;
      try {
        await s2.update(stale);
      } catch (e) {
        reason = (e as { reason?: string }).reason;
      }
      expect(reason).to.equal('Conflict');
    } finally {
      second.close();
    }
  });
});
