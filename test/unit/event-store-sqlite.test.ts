import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { expect } from 'chai';
import { eventually } from '../support/harness.js';
import { testPluginContext } from '../support/plugin-context.js';

import type { PluginContext } from '../../pkg/plugin/types.js';
import type { EventStore, StreamRef } from '../../pkg/registry/events.js';
import plugin from '../../plugins/event-store-sqlite/index.js';
import type { CheckpointerMessage } from '../../plugins/event-store-sqlite/checkpointer.js';
import { MAX_BATCH, SqliteEventStore } from '../../plugins/event-store-sqlite/sqlite-event-store.js';
import { eventStoreConformance } from '../conformance/event-store.js';

const tmpDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-es-'));

const fileStore = async (opts: { maxEventsPerStream?: number } = {}) => {
  const dir = tmpDir();
  const store = new SqliteEventStore(path.join(dir, 'events.db'), opts);
  return {
    store,
    cleanup: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
};

const memoryStore = async (opts: { maxEventsPerStream?: number } = {}) => {
  const store = new SqliteEventStore(':memory:', opts);
  return { store, cleanup: () => store.close() };
};

eventStoreConformance('SqliteEventStore (file)', () => fileStore(), { capped: (max) => fileStore({ maxEventsPerStream: max }) });

eventStoreConformance('SqliteEventStore (:memory:)', () => memoryStore(), { capped: (max) => memoryStore({ maxEventsPerStream: max }) });

describe('SqliteEventStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = tmpDir();
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('survives close and reopen of the same file', async () => {
    const file = path.join(dir, 'events.db');
    const s: StreamRef = { namespace: 'default', name: 'durable', uid: 'u-durable' };
    const first = new SqliteEventStore(file);
    await first.append(s, { type: 'task_started', payload: { instructions: 'go' } });
    await first.append(s, { type: 'text', payload: { content: 'persisted ✓' } });
    await first.close();

    const second = new SqliteEventStore(file);
    try {
      expect(await second.lastSeq(s)).to.equal(2);
      const events = await second.since(s, 0);
      expect(events.map((e) => e.type)).to.deep.equal(['task_started', 'text']);
      expect(events[1].payload).to.deep.equal({ content: 'persisted ✓' });
      expect(events[1].agentName).to.equal('durable');
      // Seq assignment continues from the persisted tail.
      expect((await second.append(s, { type: 'text', payload: { content: 'more' } })).seq).to.equal(3);
    } finally {
      await second.close();
    }
  });

  it('keeps the highest seq of a deleted stream across close and reopen', async () => {
    const file = path.join(dir, 'marks.db');
    const s: StreamRef = { namespace: 'default', name: 'again', uid: 'u-1' };
    const first = new SqliteEventStore(file);
    for (let i = 0; i < 3; i++) await first.append(s, { type: 'text', payload: { content: `m${i}` } });
    await first.deleteStream(s);
    await first.close();

    const second = new SqliteEventStore(file);
    try {
      const ev = await second.append({ ...s, uid: 'u-2' }, { type: 'text', payload: { content: 'new' } });
      expect(ev.seq).to.equal(4);
    } finally {
      await second.close();
    }
  });

  it('seeds the high-water marks of a database written before them from its events', async () => {
    const file = path.join(dir, 'premarks.db');
    const old = new Database(file);
    old.exec(`CREATE TABLE events (uid TEXT, seq INTEGER, namespace TEXT, name TEXT, task INTEGER NOT NULL DEFAULT 0,
      type TEXT, ts TEXT, payload TEXT, PRIMARY KEY (uid, seq)) WITHOUT ROWID`);
    const ins = old.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    for (let seq = 1; seq <= 5; seq++) ins.run('u-pre', seq, 'default', 'pre', 1, 'text', '2024-01-01T00:00:00.000Z', '{"content":"x"}');
    old.close();

    const store = new SqliteEventStore(file);
    try {
      const s: StreamRef = { namespace: 'default', name: 'pre', uid: 'u-pre' };
      await store.deleteStream(s);
      expect((await store.append({ ...s, uid: 'u-post' }, { type: 'text', payload: { content: 'y' } })).seq).to.equal(6);
    } finally {
      await store.close();
    }
  });

  it('upgrades an events table written without a task column', async () => {
    const file = path.join(dir, 'old.db');
    const old = new Database(file);
    old.exec(`CREATE TABLE events (uid TEXT, seq INTEGER, namespace TEXT, name TEXT, type TEXT, ts TEXT,
      payload TEXT, PRIMARY KEY (uid, seq)) WITHOUT ROWID`);
    old
      .prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run('u-old', 1, 'default', 'legacy', 'text', '2024-01-01T00:00:00.000Z', '{"content":"before"}');
    old.close();

    const s: StreamRef = { namespace: 'default', name: 'legacy', uid: 'u-old' };
    const store = new SqliteEventStore(file);
    try {
      const [before] = await store.since(s, 0);
      expect(before).to.deep.include({ seq: 1, task: 0, type: 'text' });
      expect(before.payload).to.deep.equal({ content: 'before' });
      const next = await store.append(s, { type: 'text', task: 1, payload: { content: 'after' } });
      expect(next).to.deep.include({ seq: 2, task: 1 });
      expect(await store.taskStart(s, 1)).to.equal(2);
    } finally {
      await store.close();
    }
  });

  it('uses WAL journal mode for file databases', async () => {
    const file = path.join(dir, 'wal.db');
    const store = new SqliteEventStore(file);
    await store.append({ namespace: 'n', name: 'a', uid: 'u' }, { type: 'text', payload: { content: 'x' } });
    try {
      expect(fs.existsSync(`${file}-wal`)).to.equal(true);
    } finally {
      await store.close();
    }
  });

  it('checkpoints the log in a worker thread, never in a commit: the log is reused and stays about one interval of writes', async () => {
    const file = path.join(dir, 'ckpt.db');
    const checkpoints: CheckpointerMessage[] = [];
    const store = new SqliteEventStore(file, { onCheckpoint: (m) => checkpoints.push(m) });
    const walSize = (): number => fs.statSync(`${file}-wal`).size;
    try {
      const s: StreamRef = { namespace: 'n', name: 'big', uid: 'u-big' };
      const content = 'x'.repeat(1000);
      // Three rounds of about 2 MB (SQLite's own checkpoint would run every 4 MB of log), each
      // followed by a pause longer than the checkpoint interval.
      const sizes: number[] = [];
      for (let round = 0; round < 3; round++) {
        await Promise.all(Array.from({ length: 2000 }, () => store.append(s, { type: 'text', payload: { content } })));
        sizes.push(walSize());
        await eventually(async () => checkpoints.length > round, 5_000, `checkpoint after round ${round + 1}`);
      }
      expect(
        checkpoints.every((m) => m.type === 'checkpointed'),
        JSON.stringify(checkpoints),
      ).to.equal(true);
      // Rounds 2 and 3 wrote from the start of the checkpointed log: it did not grow to 6 MB.
      expect(sizes[2]).to.be.at.most(sizes[0] * 1.5);
      expect(await store.lastSeq(s)).to.equal(6000);
    } finally {
      await store.close();
    }
    // Closed: the last connection folded the log into the file and removed it.
    expect(fs.existsSync(`${file}-wal`)).to.equal(false);
    const reopened = new SqliteEventStore(file);
    try {
      expect(await reopened.lastSeq({ namespace: 'n', name: 'big', uid: 'u-big' })).to.equal(6000);
    } finally {
      await reopened.close();
    }
  });

  describe('group commit', () => {
    it('keeps every event of 40 agents appending at once, each stream in call order', async () => {
      const store = new SqliteEventStore(path.join(dir, 'many.db'));
      try {
        const streams: StreamRef[] = Array.from({ length: 40 }, (_, i) => ({ namespace: 'default', name: `a${i}`, uid: `u${i}` }));
        // Interleaved across streams, in bursts that each go out in one turn of the event loop.
        const appended: Promise<{ stream: number; i: number; seq: number }>[] = [];
        for (let burst = 0; burst < 10; burst++) {
          for (let i = burst * 25; i < (burst + 1) * 25; i++) {
            streams.forEach((s, n) =>
              appended.push(store.append(s, { type: 'text', task: 1, payload: { content: `${i}` } }).then((ev) => ({ stream: n, i, seq: ev.seq }))),
            );
          }
          await new Promise((r) => setImmediate(r));
        }
        const acks = await Promise.all(appended);
        for (const a of acks) expect(a.seq, `stream ${a.stream} event ${a.i}`).to.equal(a.i + 1);
        for (const s of streams) {
          const stored = await store.since(s, 0);
          expect(stored.map((e) => e.seq)).to.deep.equal(Array.from({ length: 250 }, (_, i) => i + 1));
          expect(stored.map((e) => (e.payload as { content: string }).content)).to.deep.equal(Array.from({ length: 250 }, (_, i) => `${i}`));
        }
      } finally {
        await store.close();
      }
    });

    it('resolves an append only once its batch is committed: another connection sees it then', async () => {
      const file = path.join(dir, 'commit.db');
      const store = new SqliteEventStore(file);
      const reader = new Database(file, { readonly: true });
      try {
        const s: StreamRef = { namespace: 'default', name: 'c', uid: 'u-c' };
        const count = reader.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM events WHERE uid = ?');
        const seen: number[] = [];
        const all = Array.from({ length: 200 }, (_, i) =>
          store.append(s, { type: 'text', payload: { content: `${i}` } }).then((ev) => {
            seen.push(count.get(s.uid)!.n);
            return ev;
          }),
        );
        // Queued, not yet written: nothing is visible before the commit.
        expect(count.get(s.uid)!.n).to.equal(0);
        await Promise.all(all);
        // One transaction: every promise resolved after all 200 were committed.
        expect(seen).to.deep.equal(Array.from({ length: 200 }, () => 200));
      } finally {
        reader.close();
        await store.close();
      }
    });

    it('commits a burst larger than a batch in batches of MAX_BATCH, as it comes: stored before the turn ends, acked in order', async () => {
      const file = path.join(dir, 'burst.db');
      const store = new SqliteEventStore(file);
      const reader = new Database(file, { readonly: true });
      try {
        const s: StreamRef = { namespace: 'default', name: 'burst', uid: 'u-burst' };
        const count = reader.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM events WHERE uid = ?');
        const total = 2 * MAX_BATCH + 10;
        const acked: number[] = [];
        const all = Array.from({ length: total }, (_, i) => store.append(s, { type: 'text', payload: { content: `${i}` } }).then((ev) => acked.push(ev.seq)));
        // Two full batches were committed during the calls; the rest waits for the turn's end.
        expect(count.get(s.uid)!.n).to.equal(2 * MAX_BATCH);
        await Promise.all(all);
        expect(count.get(s.uid)!.n).to.equal(total);
        expect(acked).to.deep.equal(Array.from({ length: total }, (_, i) => i + 1));
      } finally {
        reader.close();
        await store.close();
      }
    });

    it('fails only the append whose payload cannot be stored; the rest of its batch commits in order', async () => {
      const store = new SqliteEventStore(path.join(dir, 'bad.db'));
      try {
        const s: StreamRef = { namespace: 'default', name: 'b', uid: 'u-b' };
        const circular: Record<string, unknown> = {};
        circular.self = circular;
        const results = await Promise.allSettled([
          store.append(s, { type: 'text', payload: { content: 'one' } }),
          store.append(s, { type: 'text', payload: circular as never }),
          store.append(s, { type: 'text', payload: { content: 'three' } }),
        ]);
        expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
        const stored = await store.since(s, 0);
        expect(stored.map((e) => [e.seq, (e.payload as { content: string }).content])).to.deep.equal([
          [1, 'one'],
          [2, 'three'],
        ]);
      } finally {
        await store.close();
      }
    });

    it('reads and deletes see the appends called before them', async () => {
      const store = new SqliteEventStore(path.join(dir, 'order.db'));
      try {
        const s: StreamRef = { namespace: 'default', name: 'o', uid: 'u-o' };
        const a = store.append(s, { type: 'text', payload: { content: 'x' } });
        expect(await store.lastSeq(s)).to.equal(1);
        const b = store.append(s, { type: 'text', payload: { content: 'y' } });
        await store.deleteStream(s);
        expect((await a).seq).to.equal(1);
        expect((await b).seq).to.equal(2);
        expect(await store.since(s, 0)).to.deep.equal([]);
      } finally {
        await store.close();
      }
    });
  });

  it('close is idempotent and rejects further use', async () => {
    const store = new SqliteEventStore(path.join(dir, 'c.db'));
    await store.close();
    await store.close();
    expect(store.isOpen).to.equal(false);
    let err: unknown;
    try {
      await store.lastSeq({ namespace: 'n', name: 'a', uid: 'u' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Error);
  });
});

describe('event-store-sqlite plugin', () => {
  let dir: string;
  beforeEach(() => {
    dir = tmpDir();
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const makeCtx = (dataDir: string, options: Record<string, unknown> = {}) => {
    const provided: EventStore[] = [];
    const ctx: PluginContext = testPluginContext({
      config: { dataDir, options },
      provideEventStore: (store) => {
        provided.push(store);
      },
    });
    return { ctx, provided };
  };

  it('is named event-store-sqlite', () => {
    expect(plugin.name).to.equal('event-store-sqlite');
  });

  it('provides a store backed by <dataDir>/events.db and tears it down', async () => {
    const dataDir = path.join(dir, 'nested', 'home'); // does not exist yet
    const { ctx, provided } = makeCtx(dataDir);
    const teardown = await plugin.setup(ctx);

    expect(provided).to.have.length(1);
    const store = provided[0];
    expect(store).to.be.instanceOf(SqliteEventStore);
    expect(fs.existsSync(path.join(dataDir, 'events.db'))).to.equal(true);

    const s: StreamRef = { namespace: 'default', name: 'p', uid: 'u-p' };
    expect((await store.append(s, { type: 'text', payload: { content: 'hi' } })).seq).to.equal(1);

    expect(teardown).to.be.a('function');
    await teardown!();
    expect((store as SqliteEventStore).isOpen).to.equal(false);
    let err: unknown;
    try {
      await store.lastSeq(s);
    } catch (e) {
      err = e;
    }
    expect(err, 'store should be closed after teardown').to.be.instanceOf(Error);

    // The data was written to the file the plugin chose.
    const reopened = new SqliteEventStore(path.join(dataDir, 'events.db'));
    try {
      expect(await reopened.lastSeq(s)).to.equal(1);
    } finally {
      await reopened.close();
    }
  });

  it('honours options["event-store-sqlite"].path', async () => {
    const custom = path.join(dir, 'custom', 'my-events.sqlite');
    const { ctx, provided } = makeCtx(path.join(dir, 'data'), { 'event-store-sqlite': { path: custom } });
    const teardown = await plugin.setup(ctx);
    try {
      expect(provided).to.have.length(1);
      expect(fs.existsSync(custom)).to.equal(true);
      expect(fs.existsSync(path.join(dir, 'data', 'events.db'))).to.equal(false);
    } finally {
      await teardown!();
    }
  });

  it('ignores a non-string path option and falls back to dataDir', async () => {
    const dataDir = path.join(dir, 'data');
    const { ctx } = makeCtx(dataDir, { 'event-store-sqlite': { path: 42 } });
    const teardown = await plugin.setup(ctx);
    try {
      expect(fs.existsSync(path.join(dataDir, 'events.db'))).to.equal(true);
    } finally {
      await teardown!();
    }
  });
});
