import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';

import { parseRefKey } from '../../pkg/api/meta.js';
import { WorkQueue } from '../../pkg/controller/framework/workqueue.js';
import { KeyedSerializer } from '../../pkg/registry/serializer.js';
import { createLogger } from '../../pkg/observability/logger.js';

const logger = createLogger({ level: 'silent' });

/** A promise plus its resolver, to hold a reconcile open until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

async function until(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('WorkQueue', function () {
  this.timeout(5000);

  let queue: WorkQueue | undefined;
  afterEach(() => {
    queue?.close();
    queue = undefined;
  });

  it('never reconciles a key concurrently with itself, and coalesces adds made during a run into one more run', async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const first = gate();
    queue = new WorkQueue(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs++;
      if (runs === 1) await first.promise;
      else await sleep(5);
      running--;
    }, logger);

    queue.add('default/a');
    await until(() => runs === 1);
    for (let i = 0; i < 5; i++) queue.add('default/a');
    await sleep(20);
    expect(runs, 'no second run while the first is in progress').to.equal(1);
    first.open();
    await until(() => runs === 2);
    await queue.idle();
    await sleep(30);
    expect(runs).to.equal(2);
    expect(maxRunning).to.equal(1);
  });

  it('runs a key once more when it is added during its own reconcile', async () => {
    const calls: string[] = [];
    queue = new WorkQueue(async (key) => {
      calls.push(key);
      if (calls.length === 1) queue!.add(key); // re-added from inside the reconcile
      await sleep(1);
    }, logger);
    queue.add('k');
    await until(() => calls.length >= 2);
    await queue.idle();
    await sleep(20);
    expect(calls).to.deep.equal(['k', 'k']);
  });

  it('adds of an idle key each cause a run', async () => {
    let runs = 0;
    queue = new WorkQueue(async () => void runs++, logger);
    queue.add('k');
    await queue.idle();
    await until(() => runs === 1);
    queue.add('k');
    await until(() => runs === 2);
    await queue.idle();
    expect(runs).to.equal(2);
  });

  it('reconciles different keys concurrently', async () => {
    const g = gate();
    const started: string[] = [];
    queue = new WorkQueue(async (key) => {
      started.push(key);
      await g.promise;
    }, logger);
    queue.add('a');
    queue.add('b');
    queue.add('c');
    await until(() => started.length === 3);
    expect([...started].sort()).to.deep.equal(['a', 'b', 'c']);
    g.open();
    await queue.idle();
  });

  it('retries a failed reconcile with backoff, first retry after about 200 ms', async () => {
    const at: number[] = [];
    queue = new WorkQueue(async () => {
      at.push(Date.now());
      if (at.length === 1) throw new Error('transient');
    }, logger);
    queue.add('flaky');
    await until(() => at.length === 2, 2000);
    const delay = at[1] - at[0];
    expect(delay).to.be.at.least(190);
    expect(delay).to.be.below(600);
    await sleep(250);
    expect(at, 'no further retry after success').to.have.length(2);
  });

  it('doubles the delay on consecutive failures and resets after a success', async () => {
    const at: number[] = [];
    let fail = true;
    queue = new WorkQueue(async () => {
      at.push(Date.now());
      if (at.length <= 2 || (fail && at.length === 4)) throw new Error('boom');
    }, logger);
    queue.add('k');
    // Run 1 fails -> +200 ms; run 2 fails -> +400 ms; run 3 succeeds.
    await until(() => at.length === 3, 3000);
    expect(at[1] - at[0]).to.be.within(190, 500);
    expect(at[2] - at[1]).to.be.within(390, 800);
    // A success clears the failure count: the next failure retries after ~200 ms again.
    queue.add('k');
    await until(() => at.length === 5, 3000);
    fail = false;
    expect(at[4] - at[3]).to.be.within(190, 500);
  });

  it('idle() resolves at once when nothing runs, and only after running reconciles finish', async () => {
    queue = new WorkQueue(async () => undefined, logger);
    await queue.idle();

    const g = gate();
    let done = false;
    const q2 = new WorkQueue(async () => {
      await g.promise;
      done = true;
    }, logger);
    try {
      q2.add('a');
      q2.add('b');
      let idle = false;
      const p = q2.idle().then(() => (idle = true));
      await sleep(20);
      expect(idle).to.equal(false);
      g.open();
      await p;
      expect(done).to.equal(true);
      expect(idle).to.equal(true);
    } finally {
      q2.close();
    }
  });

  it('ignores adds after close, including pending retries', async () => {
    let runs = 0;
    queue = new WorkQueue(async () => {
      runs++;
      throw new Error('always');
    }, logger);
    queue.add('k');
    await until(() => runs === 1);
    queue.close();
    queue.add('other');
    await sleep(300); // past the first retry's 200 ms
    expect(runs).to.equal(1);
  });
  it('runs at most maxConcurrent keys at once, the others in the order they were added', async () => {
    const g = gate();
    const started: string[] = [];
    let running = 0;
    let maxRunning = 0;
    queue = new WorkQueue(
      async (key) => {
        started.push(key);
        running++;
        maxRunning = Math.max(maxRunning, running);
        await g.promise;
        await sleep(2);
        running--;
      },
      logger,
      { maxConcurrent: 2 },
    );
    for (const k of ['a', 'b', 'c', 'd', 'e']) queue.add(k);
    await until(() => started.length === 2);
    await sleep(20);
    expect(started, 'only two start while they are held').to.deep.equal(['a', 'b']);
    g.open();
    await until(() => started.length === 5);
    await queue.idle();
    expect(started).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(maxRunning).to.equal(2);
  });

  it("serves namespaces in turn: one namespace's burst of keys does not hold another's key behind it", async () => {
    const g = gate();
    const started: string[] = [];
    queue = new WorkQueue(
      async (key) => {
        started.push(key);
        await g.promise;
      },
      logger,
      { maxConcurrent: 1, shardOf: (key) => parseRefKey(key).namespace },
    );
    for (let i = 0; i < 5; i++) queue.add(`busy/a${i}`);
    queue.add('calm/b0');
    queue.add('calm/b1');
    queue.add('/cluster-scoped');
    g.open();
    await until(() => started.length === 8);
    await queue.idle();
    // In each namespace the order they came in; between namespaces, one each in turn (a0 ran at
    // once, a1 was waiting before calm's first key came).
    expect(started).to.deep.equal(['busy/a0', 'busy/a1', 'calm/b0', '/cluster-scoped', 'busy/a2', 'calm/b1', 'busy/a3', 'busy/a4']);
  });

  it('defaults to four keys at once', async () => {
    const g = gate();
    let running = 0;
    queue = new WorkQueue(async () => {
      running++;
      await g.promise;
    }, logger);
    for (let i = 0; i < 6; i++) queue.add(`k${i}`);
    await sleep(20);
    expect(running).to.equal(4);
    g.open();
    await until(() => running === 6);
    await queue.idle();
  });

  it('a key re-added while running waits behind keys already waiting for a slot', async () => {
    const g = gate();
    const started: string[] = [];
    queue = new WorkQueue(
      async (key) => {
        started.push(key);
        if (started.length === 1) await g.promise;
      },
      logger,
      { maxConcurrent: 1 },
    );
    queue.add('a');
    queue.add('b');
    queue.add('a'); // during a's run
    g.open();
    await until(() => started.length === 3);
    await queue.idle();
    expect(started).to.deep.equal(['a', 'b', 'a']);
  });

  it('addAfter runs the key after the delay, keeping only the earliest of several pending delays', async () => {
    const at: number[] = [];
    queue = new WorkQueue(async () => void at.push(Date.now()), logger);
    const t0 = Date.now();
    queue.addAfter('k', 300);
    queue.addAfter('k', 50); // earlier: replaces the 300 ms one
    queue.addAfter('k', 200); // later than the pending 50 ms: ignored
    await sleep(20);
    expect(at, 'nothing before the delay').to.have.length(0);
    await until(() => at.length === 1);
    expect(at[0] - t0).to.be.within(45, 190);
    await sleep(350);
    expect(at, 'the dropped delays do not run').to.have.length(1);
  });

  it('close() cancels delayed adds', async () => {
    let runs = 0;
    queue = new WorkQueue(async () => void runs++, logger);
    queue.addAfter('k', 30);
    queue.close();
    await sleep(80);
    expect(runs).to.equal(0);
  });
});

describe('KeyedSerializer', () => {
  it('runs functions for one key one at a time, in call order', async () => {
    const s = new KeyedSerializer();
    const log: string[] = [];
    let active = 0;
    let maxActive = 0;
    const job = (id: number, ms: number) => async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      log.push(`start ${id}`);
      await sleep(ms);
      log.push(`end ${id}`);
      active--;
      return id;
    };
    const results = await Promise.all([s.run('k', job(1, 20)), s.run('k', job(2, 1)), s.run('k', job(3, 5))]);
    expect(results).to.deep.equal([1, 2, 3]);
    expect(maxActive).to.equal(1);
    expect(log).to.deep.equal(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('continues with the next function after a rejection, which reaches only its caller', async () => {
    const s = new KeyedSerializer();
    const order: number[] = [];
    const p1 = s.run('k', async () => {
      order.push(1);
      throw new Error('first failed');
    });
    const p2 = s.run('k', async () => {
      order.push(2);
      return 'second';
    });
    const p3 = s.run('k', () => {
      order.push(3);
      return Promise.reject(new Error('third failed'));
    });
    const p4 = s.run('k', async () => {
      order.push(4);
      return 'fourth';
    });
    const settled = await Promise.allSettled([p1, p2, p3, p4]);
    expect(order).to.deep.equal([1, 2, 3, 4]);
    expect(settled.map((r) => r.status)).to.deep.equal(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect((settled[0] as PromiseRejectedResult).reason.message).to.equal('first failed');
    expect((settled[1] as PromiseFulfilledResult<string>).value).to.equal('second');
    expect((settled[3] as PromiseFulfilledResult<string>).value).to.equal('fourth');
  });

  it('runs different keys independently', async () => {
    const s = new KeyedSerializer();
    const g = gate();
    const done: string[] = [];
    const a = s.run('a', async () => {
      await g.promise;
      done.push('a');
    });
    await s.run('b', async () => void done.push('b'));
    expect(done).to.deep.equal(['b']);
    g.open();
    await a;
    expect(done).to.deep.equal(['b', 'a']);
  });

  it('keeps working for a key after its queue drained', async () => {
    const s = new KeyedSerializer();
    expect(await s.run('k', async () => 1)).to.equal(1);
    await sleep(1);
    expect(await s.run('k', async () => 2)).to.equal(2);
  });
});
