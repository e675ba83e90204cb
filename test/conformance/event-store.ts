// Reusable conformance suite: every EventStore implementation must pass these cases.
//
//   eventStoreConformance('SqliteEventStore', async () => ({ store, cleanup }), {
//     capped: async (maxEventsPerStream) => ({ store, cleanup }),  // a store keeping at most N per stream
//   });

import { expect } from 'chai';

import type { AgentEvent, EventDraft } from '../../pkg/api/event.js';
import type { EventStore, StreamRef } from '../../pkg/registry/events.js';

export interface EventStoreFixture {
  store: EventStore;
  cleanup: () => Promise<void>;
}

const text = (content: string): EventDraft<'text'> => ({ type: 'text', payload: { content } });

const seqs = (events: AgentEvent[]): number[] => events.map((e) => e.seq);

const range = (from: number, to: number): number[] => {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
};

let streamCounter = 0;
/** A fresh stream ref; unique per call so cases never see each other's data. */
const freshStream = (over: Partial<StreamRef> = {}): StreamRef => {
  streamCounter++;
  return {
    namespace: 'default',
    name: `agent-${streamCounter}`,
    uid: `uid-${process.pid}-${Date.now()}-${streamCounter}`,
    ...over,
  };
};

async function appendN(store: EventStore, stream: StreamRef, n: number, prefix = 'm'): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for (let i = 1; i <= n; i++) out.push(await store.append(stream, text(`${prefix}${i}`)));
  return out;
}

export interface ConformanceOptions {
  /** A store that keeps at most `maxEventsPerStream` events per stream (the oldest trimmed). */
  capped?: (maxEventsPerStream: number) => Promise<EventStoreFixture>;
}

export function eventStoreConformance(name: string, make: () => Promise<EventStoreFixture>, opts: ConformanceOptions = {}): void {
  describe(`EventStore conformance: ${name}`, function () {
    this.timeout(20_000);

    let store: EventStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });

    afterEach(async () => {
      await cleanup();
    });

    describe('append', () => {
      it('assigns seq starting at 1 and incrementing per stream', async () => {
        const s = freshStream();
        const events = await appendN(store, s, 5);
        expect(seqs(events)).to.deep.equal([1, 2, 3, 4, 5]);
        expect(await store.lastSeq(s)).to.equal(5);
      });

      it('returns the stored event shape (agentName, namespace, task, type, payload)', async () => {
        const s = freshStream({ namespace: 'team-a', name: 'writer' });
        const ev = await store.append(s, { ...text('hello'), task: 7 });
        expect(ev).to.deep.include({ seq: 1, agentName: 'writer', namespace: 'team-a', task: 7, type: 'text' });
        expect(ev.payload).to.deep.equal({ content: 'hello' });
        expect(ev.timestamp).to.be.a('string');
        expect(Number.isNaN(Date.parse(ev.timestamp))).to.equal(false);
        const [stored] = await store.list(s, { limit: 10 });
        expect(stored).to.deep.equal(ev);
      });

      it('keeps an explicit draft timestamp', async () => {
        const s = freshStream();
        const ts = '2024-01-02T03:04:05.678Z';
        const ev = await store.append(s, { type: 'text', payload: { content: 'x' }, timestamp: ts });
        expect(ev.timestamp).to.equal(ts);
        const [stored] = await store.since(s, 0);
        expect(stored.timestamp).to.equal(ts);
      });

      it('keeps streams with the same name in different namespaces independent', async () => {
        const a = freshStream({ namespace: 'ns-a', name: 'same' });
        const b = freshStream({ namespace: 'ns-b', name: 'same' });
        await appendN(store, a, 3, 'a');
        const bEvents = await appendN(store, b, 2, 'b');
        expect(seqs(bEvents)).to.deep.equal([1, 2]);
        expect(await store.lastSeq(a)).to.equal(3);
        expect(await store.lastSeq(b)).to.equal(2);
        const aList = await store.list(a, { limit: 10 });
        expect(aList.map((e) => (e.payload as { content: string }).content)).to.deep.equal(['a1', 'a2', 'a3']);
        expect(aList.every((e) => e.namespace === 'ns-a')).to.equal(true);
        const bList = await store.list(b, { limit: 10 });
        expect(bList.map((e) => (e.payload as { content: string }).content)).to.deep.equal(['b1', 'b2']);
        expect(bList.every((e) => e.namespace === 'ns-b')).to.equal(true);
      });

      it('keeps a re-created agent (same namespace/name, different uid) apart, its seq continuing above the old one', async () => {
        const old = freshStream({ namespace: 'ns', name: 'reborn' });
        const fresh: StreamRef = { ...old, uid: `${old.uid}-v2` };
        await appendN(store, old, 4, 'old');
        const first = await store.append(fresh, text('new1'));
        expect(first.seq).to.equal(5);
        expect(await store.lastSeq(old)).to.equal(4);
        expect(await store.lastSeq(fresh)).to.equal(5);
        const freshList = await store.list(fresh, { limit: 10 });
        expect(freshList).to.have.length(1);
        expect(freshList[0].payload).to.deep.equal({ content: 'new1' });
        expect(seqs(await store.list(old, { limit: 10 }))).to.deep.equal([1, 2, 3, 4]);
      });

      it('concurrent appends yield distinct consecutive seqs', async () => {
        const s = freshStream();
        const results = await Promise.all(range(1, 100).map((i) => store.append(s, text(`c${i}`))));
        const got = seqs(results).sort((x, y) => x - y);
        expect(got).to.deep.equal(range(1, 100));
        expect(new Set(seqs(results)).size).to.equal(100);
        expect(await store.lastSeq(s)).to.equal(100);
        const all = await store.since(s, 0);
        expect(seqs(all)).to.deep.equal(range(1, 100));
        // Each stored event carries the payload of the append that got that seq.
        const bySeq = new Map(results.map((e) => [e.seq, e.payload]));
        for (const e of all) expect(e.payload).to.deep.equal(bySeq.get(e.seq));
      });
    });

    describe('list', () => {
      it('returns an empty array for an empty stream', async () => {
        expect(await store.list(freshStream(), { limit: 10 })).to.deep.equal([]);
      });

      it('returns everything oldest first when limit exceeds the stream', async () => {
        const s = freshStream();
        await appendN(store, s, 7);
        expect(seqs(await store.list(s, { limit: 50 }))).to.deep.equal(range(1, 7));
      });

      it('returns the most recent `limit` events, oldest first', async () => {
        const s = freshStream();
        await appendN(store, s, 10);
        const page = await store.list(s, { limit: 3 });
        expect(seqs(page)).to.deep.equal([8, 9, 10]);
        expect((page[0].payload as { content: string }).content).to.equal('m8');
      });

      it('honours `before` (only seq < before, still the most recent, oldest first)', async () => {
        const s = freshStream();
        await appendN(store, s, 10);
        expect(seqs(await store.list(s, { limit: 3, before: 6 }))).to.deep.equal([3, 4, 5]);
        expect(seqs(await store.list(s, { limit: 10, before: 3 }))).to.deep.equal([1, 2]);
        expect(await store.list(s, { limit: 10, before: 1 })).to.deep.equal([]);
      });

      it('pages backwards through 250 events with limit 100, seeing every seq exactly once', async () => {
        const s = freshStream();
        await appendN(store, s, 250);
        const seen: number[] = [];
        const pageSizes: number[] = [];
        let before: number | undefined;
        for (let guard = 0; guard < 10; guard++) {
          const page = await store.list(s, before === undefined ? { limit: 100 } : { limit: 100, before });
          if (page.length === 0) break;
          pageSizes.push(page.length);
          // Each page is ascending and contiguous.
          expect(seqs(page)).to.deep.equal(range(page[0].seq, page[page.length - 1].seq));
          seen.push(...seqs(page));
          before = page[0].seq;
        }
        expect(pageSizes).to.deep.equal([100, 100, 50]);
        expect(seen).to.have.length(250);
        expect(new Set(seen).size).to.equal(250);
        expect([...seen].sort((x, y) => x - y)).to.deep.equal(range(1, 250));
      });
    });

    describe('since', () => {
      it('returns every event after a seq, oldest first', async () => {
        const s = freshStream();
        await appendN(store, s, 10);
        expect(seqs(await store.since(s, 0))).to.deep.equal(range(1, 10));
        expect(seqs(await store.since(s, 7))).to.deep.equal([8, 9, 10]);
        expect(await store.since(s, 10)).to.deep.equal([]);
        expect(await store.since(s, 99)).to.deep.equal([]);
      });

      it('caps the result at `max`, taking the oldest first', async () => {
        const s = freshStream();
        await appendN(store, s, 10);
        expect(seqs(await store.since(s, 2, 3))).to.deep.equal([3, 4, 5]);
        expect(seqs(await store.since(s, 8, 5))).to.deep.equal([9, 10]);
      });

      it('returns nothing for an empty stream', async () => {
        expect(await store.since(freshStream(), 0)).to.deep.equal([]);
      });
    });

    describe('task numbers', () => {
      it('round-trip the task of each event and store an omitted task as 0', async () => {
        const s = freshStream();
        await store.append(s, text('none'));
        await store.append(s, { ...text('t1'), task: 1 });
        await store.append(s, { ...text('t2'), task: 2 });
        const expected = [0, 1, 2];
        expect((await store.list(s, { limit: 10 })).map((e) => e.task)).to.deep.equal(expected);
        expect((await store.since(s, 0)).map((e) => e.task)).to.deep.equal(expected);
      });

      it('taskStart returns the lowest seq of a task, undefined when it has none', async () => {
        const s = freshStream();
        expect(await store.taskStart(s, 1)).to.equal(undefined);
        await store.append(s, { ...text('a'), task: 1 }); // seq 1
        await store.append(s, { ...text('b'), task: 1 }); // seq 2
        await store.append(s, { ...text('c'), task: 2 }); // seq 3
        await store.append(s, { ...text('d'), task: 2 }); // seq 4
        await store.append(s, { ...text('e'), task: 3 }); // seq 5
        expect(await store.taskStart(s, 1)).to.equal(1);
        expect(await store.taskStart(s, 2)).to.equal(3);
        expect(await store.taskStart(s, 3)).to.equal(5);
        expect(await store.taskStart(s, 4)).to.equal(undefined);
      });

      it('taskStart is per stream and forgets a deleted stream', async () => {
        const a = freshStream({ namespace: 'ns', name: 'same' });
        const b: StreamRef = { ...a, uid: `${a.uid}-b` };
        await store.append(a, { ...text('a1'), task: 1 });
        await store.append(a, { ...text('a2'), task: 2 });
        await store.append(b, { ...text('b1'), task: 2 }); // seq 3: the name's seqs never repeat
        expect(await store.taskStart(a, 2)).to.equal(2);
        expect(await store.taskStart(b, 2)).to.equal(3);
        expect(await store.taskStart(b, 1)).to.equal(undefined);
        await store.deleteStream(a);
        expect(await store.taskStart(a, 1)).to.equal(undefined);
        expect(await store.taskStart(b, 2)).to.equal(3);
      });
    });

    describe('lastSeq', () => {
      it('is 0 for an empty stream and tracks appends', async () => {
        const s = freshStream();
        expect(await store.lastSeq(s)).to.equal(0);
        await store.append(s, text('one'));
        expect(await store.lastSeq(s)).to.equal(1);
        await store.append(s, text('two'));
        expect(await store.lastSeq(s)).to.equal(2);
      });
    });

    describe('deleteStream', () => {
      it('empties only that stream', async () => {
        const victim = freshStream({ namespace: 'ns', name: 'victim' });
        const sibling: StreamRef = { ...victim, uid: `${victim.uid}-sibling` };
        const other = freshStream({ namespace: 'ns-other', name: 'victim' });
        await appendN(store, victim, 5);
        await appendN(store, sibling, 2);
        await appendN(store, other, 3);

        await store.deleteStream(victim);

        expect(await store.lastSeq(victim)).to.equal(0);
        expect(await store.list(victim, { limit: 10 })).to.deep.equal([]);
        expect(await store.since(victim, 0)).to.deep.equal([]);
        expect(seqs(await store.list(sibling, { limit: 10 }))).to.deep.equal([6, 7]);
        expect(seqs(await store.since(other, 0))).to.deep.equal([1, 2, 3]);
      });

      it('never repeats a seq for a name: a stream appended to after deletion continues above it', async () => {
        const s = freshStream();
        await appendN(store, s, 3);
        await store.deleteStream(s);
        expect(await store.lastSeq(s)).to.equal(0);
        expect((await store.append(s, text('again'))).seq).to.equal(4);
      });

      it('a re-created agent after deletion continues above the old seqs; old cursors read its events', async () => {
        const old = freshStream({ namespace: 'ns-re', name: 'phoenix' });
        await appendN(store, old, 6, 'old');
        await store.deleteStream(old);
        const fresh: StreamRef = { ...old, uid: `${old.uid}-v2` };
        expect(await store.lastSeq(fresh)).to.equal(0);
        expect(await store.since(fresh, 0)).to.deep.equal([]);
        const created = await appendN(store, fresh, 4, 'new');
        expect(seqs(created)).to.deep.equal([7, 8, 9, 10]);
        expect(await store.lastSeq(fresh)).to.equal(10);
        // A client that had read the old agent up to 6 (or only up to 3) resumes on the new one.
        expect((await store.since(fresh, 6)).map((e) => (e.payload as { content: string }).content)).to.deep.equal(['new1', 'new2', 'new3', 'new4']);
        expect(seqs(await store.since(fresh, 3))).to.deep.equal([7, 8, 9, 10]);
        expect(seqs(await store.since(fresh, 8))).to.deep.equal([9, 10]);
        // History paging works on the new incarnation's seqs.
        expect(seqs(await store.list(fresh, { limit: 2 }))).to.deep.equal([9, 10]);
        expect(seqs(await store.list(fresh, { limit: 10, before: 9 }))).to.deep.equal([7, 8]);
        expect(await store.list(fresh, { limit: 10, before: 7 })).to.deep.equal([]);
        expect(await store.taskStart(fresh, 0)).to.equal(7);
        // Twice deleted and re-created: still above everything seen.
        await store.deleteStream(fresh);
        const third: StreamRef = { ...old, uid: `${old.uid}-v3` };
        expect((await store.append(third, text('third'))).seq).to.equal(11);
      });

      it('keeps the high-water mark per namespace and name', async () => {
        const a = freshStream({ namespace: 'ns-hw-a', name: 'same' });
        await appendN(store, a, 5);
        await store.deleteStream(a);
        // Another namespace, and another name in the same namespace, are not affected.
        const otherNs = freshStream({ namespace: 'ns-hw-b', name: 'same' });
        const otherName = freshStream({ namespace: 'ns-hw-a', name: 'different' });
        expect((await store.append(otherNs, text('x'))).seq).to.equal(1);
        expect((await store.append(otherName, text('y'))).seq).to.equal(1);
        expect((await store.append({ ...a, uid: `${a.uid}-v2` }, text('z'))).seq).to.equal(6);
      });

      it('concurrent appends to a re-created stream yield distinct consecutive seqs above the old ones', async () => {
        const old = freshStream({ namespace: 'ns-cc', name: 'busy' });
        await appendN(store, old, 10);
        await store.deleteStream(old);
        const fresh: StreamRef = { ...old, uid: `${old.uid}-v2` };
        const results = await Promise.all(range(1, 50).map((i) => store.append(fresh, text(`c${i}`))));
        expect(seqs(results).sort((x, y) => x - y)).to.deep.equal(range(11, 60));
        expect(seqs(await store.since(fresh, 0))).to.deep.equal(range(11, 60));
      });

      it('is a no-op on an unknown stream', async () => {
        const s = freshStream();
        await store.append(s, text('keep'));
        await store.deleteStream(freshStream());
        expect(await store.lastSeq(s)).to.equal(1);
      });
    });

    describe('payloads', () => {
      it('round-trip nested objects and unicode', async () => {
        const s = freshStream();
        const input = {
          path: '/tmp/ファイル.txt',
          options: { recursive: true, depth: 3, tags: ['α', 'β', { deep: [1, 2.5, null, 'ünïcødé'] }] },
          emoji: '🚀👩‍💻',
          empty: {},
          quote: 'he said "hi"\n\ttab \\ backslash',
        };
        const drafts: EventDraft[] = [
          { type: 'tool_call', payload: { id: 't1', tool: 'Write', input } },
          { type: 'text', payload: { content: 'Grüße, 世界! 🎉 — naïve café' } },
          {
            type: 'task_completed',
            payload: {
              result: 'done ✓',
              cost_usd: 0.0123,
              duration_ms: 4567,
              turns: 3,
              stop_reason: 'end_turn',
              session_id: 'sess-1',
            },
          },
        ];
        for (const d of drafts) await store.append(s, d);

        const listed = await store.list(s, { limit: 10 });
        const streamed = await store.since(s, 0);
        for (const got of [listed, streamed]) {
          expect(got.map((e) => e.type)).to.deep.equal(['tool_call', 'text', 'task_completed']);
          got.forEach((e, i) => expect(e.payload).to.deep.equal(drafts[i].payload));
        }
      });
    });
    describe('events kept per stream', () => {
      const cappedStore = (max: number): Promise<EventStoreFixture> => {
        if (!opts.capped) throw new Error('eventStoreConformance(..., { capped }) must be given: every store keeps a bounded number of events per stream');
        return opts.capped(max);
      };

      it('is a required capability: a store for production must offer a cap', () => {
        expect(opts.capped, 'eventStoreConformance(..., { capped }) must be given').to.be.a('function');
      });

      it('trims the oldest on append; list, since, taskStart and lastSeq see what is kept', async () => {
        const capped = await cappedStore(5);
        try {
          const st = capped.store;
          const s = freshStream();
          for (let i = 1; i <= 3; i++) await st.append(s, { ...text(`a${i}`), task: 1 });
          for (let i = 1; i <= 5; i++) await st.append(s, { ...text(`b${i}`), task: 2 });
          expect(seqs(await st.list(s, { limit: 100 }))).to.deep.equal([4, 5, 6, 7, 8]);
          expect(seqs(await st.list(s, { limit: 100, before: 6 }))).to.deep.equal([4, 5]);
          expect(seqs(await st.list(s, { limit: 2 }))).to.deep.equal([7, 8]);
          // A cursor older than the oldest kept event gets everything that is left.
          expect(seqs(await st.since(s, 0))).to.deep.equal([4, 5, 6, 7, 8]);
          expect(seqs(await st.since(s, 2))).to.deep.equal([4, 5, 6, 7, 8]);
          expect(seqs(await st.since(s, 2, 2))).to.deep.equal([4, 5]);
          expect(seqs(await st.since(s, 6))).to.deep.equal([7, 8]);
          expect(await st.lastSeq(s)).to.equal(8);
          expect(await st.taskStart(s, 1)).to.equal(undefined);
          expect(await st.taskStart(s, 2)).to.equal(4);
          // Numbering goes on; the window moves.
          expect((await st.append(s, text('c1'))).seq).to.equal(9);
          expect(seqs(await st.since(s, 0))).to.deep.equal([5, 6, 7, 8, 9]);
          expect((await st.list(s, { limit: 1 }))[0].payload).to.deep.equal({ content: 'c1' });
        } finally {
          await capped.cleanup();
        }
      });

      it('taskStart of a task whose first events were trimmed is its first kept event', async () => {
        const capped = await cappedStore(4);
        try {
          const st = capped.store;
          const s = freshStream();
          for (const task of [1, 1, 1, 0, 1, 1]) await st.append(s, { ...text('x'), task });
          expect(seqs(await st.since(s, 0))).to.deep.equal([3, 4, 5, 6]);
          expect(await st.taskStart(s, 1)).to.equal(3);
          expect(await st.taskStart(s, 0)).to.equal(4);
          for (let i = 0; i < 4; i++) await st.append(s, { ...text('y'), task: 2 });
          expect(await st.taskStart(s, 1)).to.equal(undefined);
          expect(await st.taskStart(s, 0)).to.equal(undefined);
          expect(await st.taskStart(s, 2)).to.equal(7);
        } finally {
          await capped.cleanup();
        }
      });

      it('counts each stream on its own, also a re-created one of the same name', async () => {
        const capped = await cappedStore(3);
        try {
          const st = capped.store;
          const a = freshStream();
          const b = freshStream();
          await appendN(st, a, 10, 'a');
          await appendN(st, b, 2, 'b');
          expect(seqs(await st.since(a, 0))).to.deep.equal([8, 9, 10]);
          expect(seqs(await st.since(b, 0))).to.deep.equal([1, 2]);
          await st.deleteStream(a);
          const reborn: StreamRef = { ...a, uid: `${a.uid}-v2` };
          await appendN(st, reborn, 4, 'r');
          expect(seqs(await st.since(reborn, 0))).to.deep.equal([12, 13, 14]);
          expect(await st.lastSeq(reborn)).to.equal(14);
        } finally {
          await capped.cleanup();
        }
      });

      it('keeps at most the cap under concurrent appends', async () => {
        const capped = await cappedStore(10);
        try {
          const st = capped.store;
          const s = freshStream();
          await Promise.all(range(1, 50).map((i) => st.append(s, text(`c${i}`))));
          expect(seqs(await st.since(s, 0))).to.deep.equal(range(41, 50));
        } finally {
          await capped.cleanup();
        }
      });
    });
  });
}
