import { expect } from 'chai';

import type { Agent } from '../../pkg/api/agent.js';
import type { AgentEvent, EventType } from '../../pkg/api/event.js';
import { StatusWriter } from '../../pkg/controller/status-writer.js';

const ref = { namespace: 'default', name: 'a' };
let seq = 0;
const ev = (type: EventType, content = ''): AgentEvent =>
  ({ seq: ++seq, agentName: 'a', namespace: 'default', task: 1, type, timestamp: new Date().toISOString(), payload: { content } }) as AgentEvent;

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

describe('StatusWriter', () => {
  it('writes a burst of messages as a few writes, every event once and in order', async () => {
    const { writes, write } = recorder();
    const w = new StatusWriter(write, 50);
    const events = Array.from({ length: 300 }, () => ev('text', 'x'));
    const done = events.map((e) => w.add(ref, e, false));
    await Promise.all(done);
    w.stop();
    // The first at once (nothing was waiting), the rest together one interval later.
    expect(writes.length).to.be.at.most(3);
    expect(writes.flat()).to.deep.equal(events.map((e) => e.seq));
  });

  it('writes a task state change as soon as the write in flight is done, with the messages before it', async () => {
    const { writes, write } = recorder(20);
    const w = new StatusWriter(write, 10_000);
    const first = ev('text');
    const a = w.add(ref, first, false); // written at once
    const msgs = [ev('text'), ev('text')];
    msgs.forEach((m) => void w.add(ref, m, false));
    const end = ev('task_completed');
    const t0 = Date.now();
    await Promise.all([a, w.add(ref, end, true)]);
    w.stop();
    // Not held for the 10 s interval: right after the first write.
    expect(Date.now() - t0).to.be.below(1000);
    expect(writes).to.deep.equal([[first.seq], [...msgs.map((m) => m.seq), end.seq]]);
  });

  it('rejects the events of a failed write and goes on with later ones', async () => {
    let fail = true;
    const w = new StatusWriter(async () => {
      if (fail) throw new Error('gone');
      return { metadata: { name: 'a' } } as Agent;
    }, 0);
    const err = await w.add(ref, ev('task_started'), true).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    fail = false;
    await w.add(ref, ev('task_completed'), true);
    w.stop();
  });
});
