import { expect } from 'chai';
import type { Agent } from '../../pkg/api/agent.js';
import { lineOrder, queuePositions, withQueuePositions, type Waiter } from '../../pkg/api/agent-queue.js';
import { Admission } from '../../pkg/controller/admission.js';

const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const w = (ns: string, name: string, since: number, priority = 0): Waiter => ({ key: `${ns}/${name}`, namespace: ns, priority, since: at(since) });

describe('Admission (caps, lines, fairness, start rate)', () => {
  it('admits up to --max-workers; beyond, agents wait first come first served and go as slots free', () => {
    const a = new Admission({ maxWorkers: 2 });
    expect(a.takeWorker(w('a', 'one', 1)).admitted).to.equal(true);
    expect(a.takeWorker(w('a', 'two', 2)).admitted).to.equal(true);
    const third = a.takeWorker(w('a', 'three', 3));
    expect(third).to.deep.include({ admitted: false, reason: 'WorkerLimit' });
    expect(a.takeWorker(w('a', 'four', 4)).admitted).to.equal(false);
    // four may not pass three when a slot frees: the freed slot names three only.
    expect(a.freeWorker('a/one')).to.deep.equal(['a/three']);
    expect(a.takeWorker(w('a', 'four', 4)).admitted).to.equal(false);
    expect(a.takeWorker(w('a', 'three', 3)).admitted).to.equal(true);
    expect(a.waiting).to.equal(1);
  });

  it('capReached tells, without joining the line, the wait takeWorker would answer while a cap is reached', () => {
    const a = new Admission({ maxWorkers: 3, namespaceDefaults: { workers: 2 } });
    expect(a.capReached(w('team-a', 'a0', 0)), 'nothing held yet').to.equal(undefined);
    a.takeWorker(w('team-a', 'a0', 0));
    a.takeWorker(w('team-a', 'a1', 1));
    const hint = a.capReached(w('team-a', 'a2', 2));
    expect(a.waiting, 'asking joins nothing').to.equal(0);
    expect(hint).to.deep.equal(a.takeWorker(w('team-a', 'a2', 2)));
    expect(hint).to.deep.include({ admitted: false, reason: 'NamespaceWorkerLimit' });
    expect(a.capReached(w('team-a', 'a0', 0)), 'a holder waits for nothing').to.equal(undefined);
    expect(a.capReached(w('team-b', 'b0', 0)), 'another namespace under both caps').to.equal(undefined);
    a.takeWorker(w('team-b', 'b0', 0));
    const all = a.capReached(w('team-c', 'c0', 0));
    expect(all).to.deep.equal(a.takeWorker(w('team-c', 'c0', 0)));
    expect(all).to.deep.include({ admitted: false, reason: 'WorkerLimit' });
  });

  it('orders a line by priority (higher first), then by when each lined up, then by name', () => {
    const line = [w('a', 'late', 5), w('a', 'urgent', 9, 10), w('a', 'b-early', 1), w('a', 'a-early', 1), w('a', 'low', 0, -1)];
    expect(line.sort(lineOrder).map((x) => x.key)).to.deep.equal(['a/urgent', 'a/a-early', 'a/b-early', 'a/late', 'a/low']);
    const a = new Admission({ maxWorkers: 1 });
    a.takeWorker(w('a', 'holder', 0));
    a.takeWorker(w('a', 'first', 1));
    a.takeWorker(w('a', 'urgent', 2, 5));
    expect(a.nextWorkers()).to.deep.equal([]);
    expect(a.freeWorker('a/holder')).to.deep.equal(['a/urgent']);
  });

  it("keeps a namespace to its own cap, and gives a freed slot to the namespace running fewest: B's one agent never waits behind A's line", () => {
    const a = new Admission({ maxWorkers: 3, namespaceDefaults: { workers: 2 } });
    for (let i = 0; i < 5; i++) a.takeWorker(w('team-a', `a${i}`, i));
    expect(a.usedWorkers).to.equal(2);
    const capped = a.takeWorker(w('team-a', 'a2', 2));
    expect(capped).to.deep.include({ admitted: false, reason: 'NamespaceWorkerLimit' });
    expect(a.takeWorker(w('team-b', 'b0', 100)).admitted, 'B goes at once: a slot is free and B runs none').to.equal(true);

    // All slots held now. When one of A's frees, A and B run one each: the earlier head (A's a2) goes.
    a.takeWorker(w('team-b', 'b1', 101));
    expect(a.freeWorker('team-a/a0')).to.deep.equal(['team-a/a2']);
    // A namespace's own limits win over the defaults.
    const own = new Admission({ namespaceDefaults: { workers: 1 }, limitsFor: (ns) => (ns === 'big' ? { workers: 3 } : undefined) });
    expect([1, 2, 3, 4].map((i) => own.takeWorker(w('big', `x${i}`, i)).admitted)).to.deep.equal([true, true, true, false]);
    expect([1, 2].map((i) => own.takeWorker(w('small', `y${i}`, i)).admitted)).to.deep.equal([true, false]);
  });

  it('fair order: with A running more, a freed slot goes to B even though A lined up first', () => {
    const a = new Admission({ maxWorkers: 3 });
    for (let i = 0; i < 3; i++) a.takeWorker(w('team-a', `a${i}`, i));
    a.takeWorker(w('team-a', 'a3', 3));
    a.takeWorker(w('team-b', 'b0', 50));
    expect(a.freeWorker('team-a/a0')).to.deep.equal(['team-b/b0']);
    expect(a.takeWorker(w('team-a', 'a3', 3)).admitted).to.equal(false);
    expect(a.takeWorker(w('team-b', 'b0', 50)).admitted).to.equal(true);
  });

  it("caps a namespace's running tasks; waiting tasks start in line order as tasks end", () => {
    const a = new Admission({ namespaceDefaults: { tasks: 1 } });
    expect(a.takeTask(w('a', 't1', 1)).admitted).to.equal(true);
    expect(a.takeTask(w('a', 't3', 3))).to.deep.include({ admitted: false, reason: 'NamespaceTaskLimit' });
    expect(a.takeTask(w('a', 't2', 2)).admitted).to.equal(false);
    expect(a.takeTask(w('other', 'o1', 1)).admitted, 'another namespace has its own count').to.equal(true);
    expect(a.freeTask('a/t1')).to.deep.equal(['a/t2']);
    expect(a.takeTask(w('a', 't3', 3)).admitted, 't2 is first').to.equal(false);
    expect(a.takeTask(w('a', 't2', 2)).admitted).to.equal(true);
  });

  it('bounds worker starts a second: beyond the burst an agent waits the time to the next start', () => {
    let now = 0;
    const a = new Admission({ startRate: 2 }, () => now);
    expect(a.takeWorker(w('a', 'one', 1)).admitted).to.equal(true);
    expect(a.takeWorker(w('a', 'two', 2)).admitted).to.equal(true);
    const third = a.takeWorker(w('a', 'three', 3));
    expect(third).to.deep.include({ admitted: false, reason: 'StartRate' });
    expect(third.admitted ? 0 : third.retryMs).to.equal(500);
    now = 500;
    expect(a.takeWorker(w('a', 'three', 3)).admitted).to.equal(true);
  });

  it("gives start tokens in the fair order: another namespace's one agent goes before a busy namespace's next", () => {
    let now = 0;
    const a = new Admission({ startRate: 1, namespaceDefaults: { workers: 4 } }, () => now);
    expect(a.takeWorker(w('busy', 'b0', 0)).admitted).to.equal(true);
    expect(a.takeWorker(w('busy', 'b1', 1))).to.deep.include({ admitted: false, reason: 'StartRate' });
    expect(a.takeWorker(w('calm', 'c0', 2))).to.deep.include({ admitted: false, reason: 'StartRate' });
    now = 1_000;
    // One token is there; b1 asks first, but calm runs none and busy one: the token is c0's.
    const b1 = a.takeWorker(w('busy', 'b1', 1));
    expect(b1).to.deep.include({ admitted: false, reason: 'StartRate' });
    expect(b1.admitted ? 0 : b1.retryMs).to.equal(1_000);
    expect(a.takeWorker(w('calm', 'c0', 2)).admitted).to.equal(true);
    now = 2_000;
    expect(a.takeWorker(w('busy', 'b1', 1)).admitted).to.equal(true);
  });

  it('a start rate below one a second still starts one every 1/rate seconds', () => {
    let now = 0;
    const a = new Admission({ startRate: 0.5 }, () => now);
    expect(a.takeWorker(w('a', 'one', 1)).admitted).to.equal(true);
    const two = a.takeWorker(w('a', 'two', 2));
    expect(two.admitted ? 0 : two.retryMs).to.equal(2_000);
    now = 2_000;
    expect(a.takeWorker(w('a', 'two', 2)).admitted).to.equal(true);
    now = 4_000;
    expect(a.takeWorker(w('a', 'three', 3)).admitted).to.equal(true);
  });

  it('a place given up (deleted, put to sleep) leaves the line; seeded places are kept after a restart', () => {
    const a = new Admission({ maxWorkers: 1 });
    a.takeWorker(w('a', 'holder', 0));
    a.seed([
      { waiter: w('a', 'second', 2), forTask: false },
      { waiter: w('a', 'first', 1), forTask: false },
    ]);
    expect(a.takeWorker(w('a', 'newcomer', 10)).admitted).to.equal(false);
    // Seeded places come first, in the order they lined up; one given up leaves the line.
    expect(a.freeWorker('a/first')).to.deep.equal([]);
    expect(a.freeWorker('a/holder')).to.deep.equal(['a/second']);
    expect(a.waiting).to.equal(2);
  });
});

describe('withQueuePositions and queuePositions (what readers see)', () => {
  const agent = (ns: string, name: string, queued: number | undefined, priority = 0): Agent => ({
    apiVersion: 'agentplane.io/v1alpha1',
    kind: 'Agent',
    metadata: { name, namespace: ns, uid: name, resourceVersion: '1', generation: 1, creationTimestamp: at(0) },
    spec: { instructions: 'x', model: 'm', templateRef: 'default', role: 'worker', connectors: [], lifecycle: '', task: 1, priority },
    status: {
      status: queued === undefined ? 'Running' : 'Queued',
      taskStatus: 'InProgress',
      lastTaskMessage: '',
      observedTask: 0,
      conditions: queued === undefined ? [] : [{ type: 'Queued', status: 'True', reason: 'WorkerLimit', message: 'm', lastTransitionTime: at(queued) }],
    },
  });

  it("numbers each Queued agent's place in its namespace's line, copies only those, and leaves the rest as they are", () => {
    const all = [agent('a', 'x', 3), agent('a', 'y', 1), agent('a', 'z', 5, 2), agent('a', 'run', undefined), agent('b', 'solo', 9)];
    const seen = withQueuePositions(all, (ns) => all.filter((x) => x.metadata.namespace === ns));
    expect(seen.map((x) => [x.metadata.name, x.status.queue?.position])).to.deep.equal([
      ['x', 3],
      ['y', 2],
      ['z', 1],
      ['run', undefined],
      ['solo', 1],
    ]);
    expect(seen[3]).to.equal(all[3]);
    expect(all[0].status.queue, 'the cached object is not changed').to.equal(undefined);
  });

  it("queuePositions sorts a namespace's line once per version of the source, and again when it changes", () => {
    const all = [agent('a', 'x', 3), agent('a', 'y', 1)];
    let version = 7;
    let listed = 0;
    const present = queuePositions(
      (ns) => (listed++, all.filter((x) => x.metadata.namespace === ns)),
      () => version,
    );
    const place = (name: string): number | undefined => present(all.filter((x) => x.metadata.name === name))[0].status.queue?.position;
    expect([place('x'), place('y'), place('x')]).to.deep.equal([2, 1, 2]);
    expect(listed, 'one sort for three reads of the same version').to.equal(1);
    all.push(agent('a', 'w', 0));
    expect(place('x'), 'an unchanged version reads the line it sorted').to.equal(2);
    version = 8;
    expect([place('x'), place('w')]).to.deep.equal([3, 1]);
    expect(listed).to.equal(2);
  });
});
