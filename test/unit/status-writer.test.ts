import { expect } from 'chai';

import type { Agent } from '../../pkg/api/agent.js';
import type { AgentEvent, EventType } from '../../pkg/api/event.js';
import { StatusWriter } from '../../pkg/controller/status-writer.js';

const ref = { namespace: 'default', name: 'a', uid: 'u-a' };
let seq = 0;
const ev = (type: EventType, content = ''): AgentEvent => ({
  seq: ++seq,
  agentName: 'a',
  namespace: 'default',
  task: 1,
  type,
  timestamp: new Date().toISOString(),
  payload: { content },
});

/** A write that records the seqs it applied and takes `ms`. */
function recorder(ms = 2) {
  const writes: number[][] = [];
  const write = async (_r: typeof ref, events: readonly AgentEvent[]): Promise<Agent> => {
    writes.push(events.map((e) => e.seq));
    await new Promise((r) => setTimeout(r, ms));
    return { metadata: { name: 'a' } } as Agent;
  };
  return { writes, write };
}

const fail = (_r: unknown, err: unknown): never => {
  throw err;
};

describe('StatusWriter', () => {
  it('writes a burst of messages as two writes: the first at once, the newest one interval later (a note replaces the note still waiting)', async () => {
    const { writes, write } = recorder();
    const w = new StatusWriter(write, fail, 50);
    const events = Array.from({ length: 300 }, () => ev('text', 'x'));
    events.forEach((e) => w.note(ref, e));
    await new Promise((r) => setTimeout(r, 200));
    w.stop();
    expect(writes).to.deep.equal([[events[0].seq], [events[299].seq]]);
  });

  it('writes a task state change as soon as the write in flight is done, with the messages before it', async () => {
    const { writes, write } = recorder(20);
    const w = new StatusWriter(write, fail, 10_000);
    const first = ev('text');
    w.note(ref, first); // written at once: nothing was written within the interval
    const msgs = [ev('text'), ev('text')];
    msgs.forEach((m) => w.note(ref, m));
    const end = ev('task_completed');
    const t0 = Date.now();
    await w.add(ref, end);
    w.stop();
    // Not held for the 10 s interval: right after the first write.
    expect(Date.now() - t0).to.be.below(1000);
    // The second note replaced the first while it waited; the state change keeps its place after it.
    expect(writes).to.deep.equal([[first.seq], [msgs[1].seq, end.seq]]);
  });

  it('rejects the events of a failed write, reports one no one waits for, and goes on with later ones', async () => {
    let failing = true;
    const reported: unknown[] = [];
    const w = new StatusWriter(
      async () => {
        if (failing) throw new Error('gone');
        return { metadata: { name: 'a' } } as Agent;
      },
      (_r, err) => reported.push(err),
      0,
    );
    w.note(ref, ev('text'));
    await new Promise((r) => setTimeout(r, 10));
    expect(reported).to.have.length(1);
    const err = await w.add(ref, ev('task_started')).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    failing = false;
    await w.add(ref, ev('task_completed'));
    w.stop();
  });
});
