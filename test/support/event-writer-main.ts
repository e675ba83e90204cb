// A process that appends events from many agents at once to a SQLite event store as fast as it
// can and prints "<uid> <seq>" for every event its EventLog delivers to a subscriber (what a
// WebSocket client would be sent). test/integration/event-durability.test.ts kills it with
// SIGKILL and checks that every printed event is in the database.

import { EventLog } from '../../pkg/registry/event-log.js';
import type { StreamRef } from '../../pkg/registry/events.js';
import { SqliteEventStore } from '../../plugins/event-store-sqlite/sqlite-event-store.js';

const [file, agentsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: event-writer-main <db file> [agents]');
const agents = Number(agentsArg ?? 20);

const log = new EventLog(new SqliteEventStore(file));
const streams: StreamRef[] = Array.from({ length: agents }, (_, i) => ({ namespace: 'default', name: `a${i}`, uid: `u${i}` }));
for (const s of streams) log.subscribe(s, (ev) => process.stdout.write(`${s.uid} ${ev.seq}\n`));

const burst = (): void => {
  for (let i = 0; i < 10; i++) {
    for (const s of streams) void log.append(s, { type: 'text', task: 1, payload: { content: 'x'.repeat(100) } });
  }
  setImmediate(burst);
};
burst();
