import { expect } from 'chai';

import { WorkerSlots } from '../../pkg/controller/worker-slots.js';
import { defaultMaxWorkers, WORKER_MEMORY_BYTES } from '../../pkg/runtime/local/capacity.js';

describe('WorkerSlots', () => {
  it('gives slots up to the limit, then lines agents up first come first served', () => {
    const s = new WorkerSlots(2);
    expect([s.take('a'), s.take('b'), s.take('c'), s.take('d')]).to.deep.equal([true, true, false, false]);
    expect(s.take('a'), 'a holder asking again keeps its slot').to.equal(true);
    expect([s.used, s.waiting]).to.deep.equal([2, 2]);
    expect(s.free('a'), 'the first in line may go').to.deep.equal(['c']);
    expect(s.take('d'), 'd is behind c, whose slot it is').to.equal(false);
    expect(s.take('c')).to.equal(true);
    expect(s.free('b')).to.deep.equal(['d']);
    expect(s.take('d')).to.equal(true);
    expect([s.used, s.waiting, s.held()]).to.deep.equal([2, 0, ['c', 'd']]);
  });

  it('frees a place in line, and counts workers found running even beyond the limit', () => {
    const s = new WorkerSlots(1);
    s.take('a');
    s.take('b');
    expect(s.free('b')).to.deep.equal([]);
    expect(s.waiting).to.equal(0);
    s.hold('x');
    expect([s.used, s.holds('x'), s.take('c')]).to.deep.equal([2, true, false]);
    expect(s.free('x'), 'still one over the limit').to.deep.equal([]);
    expect(s.free('a')).to.deep.equal(['c']);
  });

  it('has no limit at 0', () => {
    const s = new WorkerSlots(0);
    for (let i = 0; i < 500; i++) expect(s.take(`a${i}`)).to.equal(true);
    expect([s.used, s.waiting]).to.deep.equal([500, 0]);
  });
});

describe('defaultMaxWorkers', () => {
  it('budgets three quarters of the memory at WORKER_MEMORY_BYTES a worker, at least 2', () => {
    expect(defaultMaxWorkers(24 * 1024 ** 3)).to.equal(Math.floor((24 * 1024 ** 3 * 0.75) / WORKER_MEMORY_BYTES));
    expect(defaultMaxWorkers(24 * 1024 ** 3)).to.equal(96);
    expect(defaultMaxWorkers(256 * 1024 ** 2)).to.equal(2);
  });
});
