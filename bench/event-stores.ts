// Event store figures: `node dist/bench/event-stores.js`. The SQLite store (a file in a temp dir,
// live delivery in-process) is the baseline the Redis store (a redis-server on loopback started
// here, live delivery through another connection's XREAD, as between two replicas) is printed
// beside, measured in the same run. Prints figures; asserts nothing.

import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

import type { EventDraft } from '../pkg/api/event.js';
import { EventLog } from '../pkg/registry/event-log.js';
import type { EventStore, StreamRef } from '../pkg/registry/events.js';
import { RedisEventStore } from '../plugins/event-store-redis/redis-event-store.js';
import { SqliteEventStore } from '../plugins/event-store-sqlite/sqlite-event-store.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { fmt, summarize, table } from './stats.js';

const APPENDS = 2000;
const CONCURRENT = 2000;
const REPLAY_PAGE = 500;
const FOLLOW_ROUNDS = 300;
const CAP = 10_000;

interface Figures {
  append: number[];
  concurrentPerSecond: number;
  replayMs: number[];
  followMs: number[];
}

const draft = (i: number): EventDraft => ({ type: 'text', task: 1, payload: { content: `event ${i} ${'x'.repeat(200)}` } });
const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

/** Appends one by one, then at once; replays in pages; live delivery from `writer` to `reader`. */
async function measure(writer: EventLog, reader: EventLog): Promise<Figures> {
  const s: StreamRef = { namespace: 'bench', name: 'seq', uid: 'u-seq' };
  const append: number[] = [];
  for (let i = 0; i < APPENDS; i++) {
    const t = process.hrtime.bigint();
    await writer.append(s, draft(i));
    append.push(ms(t));
  }
  const c: StreamRef = { namespace: 'bench', name: 'concurrent', uid: 'u-concurrent' };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => writer.append(c, draft(i))));
  const concurrentPerSecond = CONCURRENT / (ms(t0) / 1000);

  const replayMs: number[] = [];
  for (let round = 0; round < 5; round++) {
    const t = process.hrtime.bigint();
    for (let after = 0; ;) {
      const page = await reader.since(s, after, REPLAY_PAGE);
      if (page.length === 0) break;
      after = page[page.length - 1].seq;
    }
    replayMs.push(ms(t));
  }

  const f: StreamRef = { namespace: 'bench', name: 'follow', uid: 'u-follow' };
  const followMs: number[] = [];
  let arrived: (() => void) | undefined;
  const stop = reader.subscribe(f, () => arrived?.());
  await reader.lastSeq(f); // answered after the subscription's start: it is live
  for (let i = 0; i < FOLLOW_ROUNDS; i++) {
    const got = new Promise<void>((resolve) => (arrived = resolve));
    const t = process.hrtime.bigint();
    await writer.append(f, draft(i));
    await got;
    followMs.push(ms(t));
  }
  stop();
  return { append, concurrentPerSecond, replayMs, followMs };
}

async function main(): Promise<void> {
  console.log('agentplane event store figures');
  console.log(`node ${process.version}, ${cpus().length} CPUs; loopback; ${APPENDS} appends of ~250 B, cap ${CAP}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-bench-es-'));
  const redis = await startRedisServer();
  const closers: EventStore[] = [];
  try {
    const sqlite = new SqliteEventStore(join(dir, 'events.db'), { maxEventsPerStream: CAP });
    closers.push(sqlite);
    const sqliteLog = new EventLog(sqlite);
    const base = await measure(sqliteLog, sqliteLog);

    const open = async (): Promise<RedisEventStore> => {
      const store = new RedisEventStore({ connection: { url: redis.url }, keyPrefix: 'bench', maxEventsPerStream: CAP });
      closers.push(store);
      await store.ready();
      return store;
    };
    const shared = await measure(new EventLog(await open()), new EventLog(await open()));

    const row = (name: string, get: (f: Figures) => number[]): string[][] =>
      (
        [
          ['sqlite (baseline)', base],
          ['redis', shared],
        ] as const
      ).map(([store, f]) => {
        const s = summarize(get(f));
        return [`${name}: ${store}`, fmt(s.median, 3), fmt(s.p90, 3), fmt(s.max, 3)];
      });
    console.log(
      table(
        ['ms', 'median', 'p90', 'max'],
        [
          ...row('append (one at a time)', (f) => f.append),
          ...row(`replay ${APPENDS} events (pages of ${REPLAY_PAGE})`, (f) => f.replayMs),
          ...row('append to live delivery (redis: another connection)', (f) => f.followMs),
        ],
      ),
    );
    console.log(`\nconcurrent appends (${CONCURRENT} at once): sqlite ${fmt(base.concurrentPerSecond, 0)}/s, redis ${fmt(shared.concurrentPerSecond, 0)}/s`);
  } finally {
    await Promise.all(closers.map((s) => s.close()));
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
