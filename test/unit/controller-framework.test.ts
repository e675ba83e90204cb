import { FINALIZER_AGENT_CLEANUP } from '../../pkg/api/deletion.js';
import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';

import { type Agent, onlyMessageMoved } from '../../pkg/api/agent.js';
import { parseRefKey, refKey, type ObjectRef } from '../../pkg/api/meta.js';
import { Controller, type Result } from '../../pkg/controller/framework/controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { idleAgentDraft } from '../support/objects.js';

const logger = createLogger({ level: 'silent' });

const draft = idleAgentDraft;

async function until(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('parseRefKey', () => {
  it('inverts refKey', () => {
    const ref: ObjectRef = { namespace: 'team-a', name: 'alpha' };
    expect(parseRefKey(refKey(ref))).to.deep.equal(ref);
  });
});

describe('Controller (framework, on SqliteState)', function () {
  this.timeout(10_000);

  let state: SqliteState;
  let agents: Registry<Agent>;
  let informer: Informer<Agent>;
  let controller: Controller | undefined;

  beforeEach(() => {
    state = new SqliteState(':memory:');
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
    informer = new Informer(agents, logger);
  });

  afterEach(async () => {
    controller?.stop();
    await controller?.idle();
    controller = undefined;
    informer.stop();
    state.close();
  });

  /** A controller whose reconcile records the refs it sees (as keys) and runs `body`. */
  function recording(body: (ref: ObjectRef, n: number) => Promise<Result | void> = async () => undefined, maxConcurrent?: number) {
    const seen: string[] = [];
    controller = new Controller({
      name: 'test',
      logger,
      maxConcurrent,
      reconcile: (ref) => {
        seen.push(refKey(ref));
        return body(ref, seen.length);
      },
    });
    return seen;
  }

  it('reconciles every object once the cache has synced, then every add, update and delete', async () => {
    await agents.create(draft('a'));
    await agents.create(draft('b', {}, 'other'));
    const syncedAtReconcile: boolean[] = [];
    const seen = recording(async () => void syncedAtReconcile.push(informer.hasSynced()));
    controller!.watch(informer);
    await controller!.start();
    await controller!.start(); // no-op
    await until(() => seen.length === 2);
    await controller!.idle();
    expect([...seen].sort()).to.deep.equal(['default/a', 'other/b']);
    // The cache is synced before the first reconcile: reconcilers can trust the informer.
    expect(syncedAtReconcile).to.deep.equal([true, true]);

    seen.length = 0;
    await agents.create(draft('c'));
    await until(() => seen.length === 1);
    await controller!.idle();
    await agents.update('default', 'c', (o) => void (o.spec.instructions = 'changed'));
    await until(() => seen.length === 2);
    await controller!.idle();
    await agents.delete('default', 'c'); // marked: an update
    await until(() => seen.length === 3);
    await controller!.idle();
    await agents.removeFinalizer('default', 'c', FINALIZER_AGENT_CLEANUP); // gone
    await until(() => seen.length === 4);
    await controller!.idle();
    expect(seen).to.deep.equal(['default/c', 'default/c', 'default/c', 'default/c']);
  });

  it('maps an object to other refs when given a map', async () => {
    const seen = recording();
    controller!.watch(informer, (o) => (o.metadata.labels?.owner ? [{ namespace: o.metadata.namespace, name: o.metadata.labels.owner }] : []));
    await controller!.start();
    await agents.create(draft('worker', { owner: 'boss' }));
    await agents.create(draft('loner'));
    await until(() => seen.length === 1);
    await sleep(20);
    await controller!.idle();
    expect(seen).to.deep.equal(['default/boss']);
  });

  it('passes over the updates ignoreUpdate matches: a message-only status write reconciles nothing, a task state change does', async () => {
    await agents.create(draft('a'));
    const seen = recording();
    controller!.watch(informer, undefined, { ignoreUpdate: onlyMessageMoved });
    await controller!.start();
    await until(() => seen.length === 1); // the synthetic add
    await controller!.idle();
    await agents.updateStatus('default', 'a', (s) => void (s.lastTaskMessage = 'working on it'));
    await agents.updateStatus('default', 'a', (s) => void (s.lastTaskMessage = 'still working'));
    await sleep(50);
    await controller!.idle();
    expect(seen).to.deep.equal(['default/a']);
    await agents.updateStatus('default', 'a', (s) => {
      s.lastTaskMessage = 'done';
      s.taskStatus = 'Complete';
    });
    await until(() => seen.length === 2);
    await agents.update('default', 'a', (o) => void (o.spec.instructions = 'next'));
    await until(() => seen.length === 3);
    await controller!.idle();
    expect(seen).to.deep.equal(['default/a', 'default/a', 'default/a']);
  });

  it('holds enqueues made before start until start, and drops everything after stop', async () => {
    const seen = recording();
    controller!.enqueue({ namespace: 'default', name: 'early' });
    controller!.enqueueAfter({ namespace: 'default', name: 'later' }, 10);
    await sleep(30);
    expect(seen, 'nothing runs before start').to.deep.equal([]);
    await controller!.start();
    await until(() => seen.length === 2);
    expect(seen).to.deep.equal(['default/early', 'default/later']);

    controller!.stop();
    controller!.enqueue({ namespace: 'default', name: 'x' });
    await agents.create(draft('y'));
    await sleep(20);
    expect(seen).to.have.length(2);
  });

  it('reconciles again after requeueAfter', async () => {
    const at: number[] = [];
    recording(async (_ref, n) => {
      at.push(Date.now());
      return n === 1 ? { requeueAfter: 100 } : {};
    });
    await controller!.start();
    controller!.enqueue({ namespace: 'default', name: 'a' });
    await until(() => at.length === 2);
    expect(at[1] - at[0]).to.be.within(95, 400);
    await sleep(150);
    expect(at, 'no requeue without requeueAfter').to.have.length(2);
  });

  it('reconciles at most maxConcurrent refs at once', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) await agents.create(draft(n));
    let running = 0;
    let maxRunning = 0;
    const seen = recording(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(20);
      running--;
    }, 2);
    controller!.watch(informer);
    await controller!.start();
    await until(() => seen.length === 5);
    await controller!.idle();
    expect(maxRunning).to.equal(2);
    expect([...seen].sort()).to.deep.equal(['default/a', 'default/b', 'default/c', 'default/d', 'default/e']);
  });

  it('retries a reconcile that throws, with backoff', async () => {
    const at: number[] = [];
    recording(async () => {
      at.push(Date.now());
      if (at.length <= 2) throw new Error('transient');
    });
    await controller!.start();
    controller!.enqueue({ namespace: 'default', name: 'flaky' });
    // Fails twice: retried after ~200 ms, then ~400 ms; the third run succeeds.
    await until(() => at.length === 3, 3000);
    expect(at[1] - at[0]).to.be.within(190, 500);
    expect(at[2] - at[1]).to.be.within(390, 800);
    await sleep(300);
    expect(at, 'no retry after success').to.have.length(3);
  });
});
