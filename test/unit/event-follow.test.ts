import { expect } from 'chai';

import type { Agent } from '../../pkg/api/agent.js';
import type { AgentEvent } from '../../pkg/api/event.js';
import { EventLog } from '../../pkg/registry/event-log.js';
import { followEvents, MAX_HELD } from '../../pkg/server/event-follow.js';
import { SqliteEventStore } from '../../plugins/event-store-sqlite/sqlite-event-store.js';

const agent = { metadata: { namespace: 'default', name: 'f', uid: 'u-f' }, spec: { task: 1 } } as Agent;
const stream = { namespace: 'default', name: 'f', uid: 'u-f' };

describe('followEvents back-pressure', () => {
  let store: SqliteEventStore;
  let log: EventLog;
  beforeEach(() => {
    store = new SqliteEventStore(':memory:');
    log = new EventLog(store);
  });
  afterEach(() => store.close());

  const append = (n: number): Promise<AgentEvent[]> =>
    Promise.all(Array.from({ length: n }, () => log.append(stream, { type: 'text', task: 1, payload: { content: 'x' } })));

  /** A reader whose unread bytes the test sets. */
  const reader = () => {
    const r = { got: [] as number[], unread: 0, behind: [] as number[] };
    const flow = { buffered: () => r.unread, maxBuffered: 1000, behind: (seq: number) => void r.behind.push(seq) };
    return { r, flow };
  };

  it('live: hands events over while the reader keeps up; past maxBuffered it stops and reports the last seq sent', async () => {
    const { r, flow } = reader();
    const f = followEvents(log, agent, (ev) => r.got.push(ev.seq), { since: 0, flow });
    await f.replayed;
    await append(3);
    r.unread = 1001; // the reader stopped reading
    await append(5);
    expect(r.got).to.deep.equal([1, 2, 3]);
    expect(r.behind).to.deep.equal([3]);
    r.unread = 0;
    await append(1);
    expect(r.got).to.deep.equal([1, 2, 3]); // stopped for good: it resumes with since=3
  });

  it('replay: sends the next page only once the reader took the last; a reader that never does is behind after MAX_HELD live events', async () => {
    await append(1200);
    const { r, flow } = reader();
    r.unread = 5000;
    const f = followEvents(log, agent, (ev) => r.got.push(ev.seq), { since: 0, flow });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(r.got).to.have.length(500); // one page, then waiting
    await append(MAX_HELD);
    expect(r.behind).to.deep.equal([]);
    await append(1);
    expect(r.behind).to.deep.equal([500]);
    await f.replayed;
    expect(r.got).to.have.length(500);
  });

  it('replay: a reader that catches up gets the rest of the history and then live events, each once, in order', async () => {
    await append(1200);
    const { r, flow } = reader();
    r.unread = 5000;
    const f = followEvents(log, agent, (ev) => r.got.push(ev.seq), { since: 0, flow });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await append(10); // held while the replay waits
    r.unread = 0;
    await f.replayed;
    await append(5);
    expect(r.got).to.deep.equal(Array.from({ length: 1215 }, (_, i) => i + 1));
    expect(r.behind).to.deep.equal([]);
  });
});
