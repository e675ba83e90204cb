import { expect } from 'chai';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { flowOf, WriteTurns } from '../../pkg/server/write-turns.js';

/** Admits `n` writes of `flow`, recording each one's start in `log`. */
function submit(turns: WriteTurns, flow: string, n: number, log: string[]): void {
  for (let i = 1; i <= n; i++) {
    const name = `${flow}${i}`;
    const waiting = turns.admit(flow);
    if (waiting) void waiting.then(() => log.push(name));
    else log.push(name);
  }
}

describe('WriteTurns', () => {
  it('starts at most perTurn writes a turn; the rest start in later turns, namespaces in rotation, each in order', async () => {
    const turns = new WriteTurns(2);
    const log: string[] = [];
    submit(turns, 'a', 6, log);
    submit(turns, 'b', 2, log);
    submit(turns, 'c', 1, log);
    expect(log).to.deep.equal(['a1', 'a2']);
    expect(turns.waiting).to.equal(7);
    await nextTurn();
    // The second turn: a's line first (it lined up first), then b's; a goes to the back.
    expect(log).to.deep.equal(['a1', 'a2', 'a3', 'b1']);
    await nextTurn();
    expect(log.slice(4)).to.deep.equal(['c1', 'a4']);
    await nextTurn();
    await nextTurn();
    expect(log.slice(6)).to.deep.equal(['b2', 'a5', 'a6']);
    expect(turns.waiting).to.equal(0);
  });

  it('a namespace arriving behind a long line starts within one turn', async () => {
    const turns = new WriteTurns(1);
    const log: string[] = [];
    submit(turns, 'big', 100, log);
    await nextTurn();
    submit(turns, 'small', 1, log);
    await nextTurn();
    await nextTurn();
    expect(log).to.include('small1');
    expect(log.indexOf('small1')).to.be.below(5);
    expect(turns.waiting).to.equal(100 - log.filter((x) => x.startsWith('big')).length);
  });

  it('starts a write at once when the turn has room and nobody waits; a new turn has room again', async () => {
    const turns = new WriteTurns(3);
    expect([turns.admit('x'), turns.admit('y'), turns.admit('x')]).to.deep.equal([undefined, undefined, undefined]);
    expect(turns.admit('x')).to.be.instanceOf(Promise);
    await nextTurn();
    await nextTurn();
    expect(turns.admit('z')).to.equal(undefined);
  });
});

describe('flowOf', () => {
  it('is the namespace in the path, else in the query, else the REST default', () => {
    expect(flowOf('/apis/agentplane.io/v1alpha1/namespaces/team-a/agents?dryRun=All')).to.equal('team-a');
    expect(flowOf('/api/v1/namespaces/team-b/agents')).to.equal('team-b');
    expect(flowOf('/api/v1/agents?namespace=team-c&x=1')).to.equal('team-c');
    expect(flowOf('/api/v1/agents/a1')).to.equal('default');
    expect(flowOf('/api/v1/agents?namespace=')).to.equal('default');
  });
});

describe('flowOf, malformed URLs', () => {
  it('never throws: a malformed escape is the route’s to refuse', () => {
    expect(flowOf('/apis/agentplane.io/v1alpha1/namespaces/%E0%A4%A/agents')).to.equal('%E0%A4%A');
    expect(flowOf('/api/v1/agents?namespace=%zz')).to.equal('%zz');
  });
});
