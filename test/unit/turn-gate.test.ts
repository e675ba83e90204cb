// The model proxy's gate for checkpoints of running tasks: a held agent's request waits until the
// last hold is released; other agents' requests pass; a request dropped while waiting is let go.

import { expect } from 'chai';

import { TurnGate } from '../../pkg/modelproxy/turn-gate.js';

const a = { namespace: 'default', name: 'a' };
const b = { namespace: 'default', name: 'b' };
const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('TurnGate', () => {
  it('lets requests pass while nothing is held', async () => {
    expect(await new TurnGate().pass(a, new AbortController().signal)).to.equal(true);
  });

  it("holds the agent's next request, says so, and lets it go on the last release", async () => {
    const gate = new TurnGate();
    let told = 0;
    const first = (): void => void told++;
    const second = (): void => undefined;
    gate.hold(a, first);
    gate.hold(a, second);
    expect(await gate.pass(b, new AbortController().signal)).to.equal(true);
    const waiting = gate.pass(a, new AbortController().signal);
    expect(told).to.equal(1);
    expect(gate.isWaiting(a)).to.equal(true);
    gate.release(a, first);
    expect(await settled(waiting)).to.equal(false);
    gate.release(a, second);
    expect(await waiting).to.equal(true);
    expect(gate.isWaiting(a)).to.equal(false);
  });

  it('tells a later holder at once when a request already waits', () => {
    const gate = new TurnGate();
    const first = (): void => undefined;
    gate.hold(a, first);
    void gate.pass(a, new AbortController().signal);
    let told = false;
    gate.hold(a, () => (told = true));
    expect(told).to.equal(true);
  });

  it('forgets a request whose client went away', async () => {
    const gate = new TurnGate();
    const holder = (): void => undefined;
    gate.hold(a, holder);
    const gone = new AbortController();
    const waiting = gate.pass(a, gone.signal);
    gone.abort();
    expect(await waiting).to.equal(false);
    expect(gate.isWaiting(a)).to.equal(false);
  });
});
