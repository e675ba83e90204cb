// The pod pool's loop with stand-in pods (the real ones, on a node: test/pods/warm-pool.test.ts):
// what it makes, hands out, replaces and removes as the templates and the pods change.

import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createLogger } from '../../pkg/observability/logger.js';
import { type PodSlot, PodPool, type PoolWant } from '../../pkg/runtime/kubernetes/pod-pool.js';
import { BUILTIN_TEMPLATE } from '../../pkg/runtime/kubernetes/template.js';
import { eventually } from '../support/harness.js';

const logger = createLogger({ level: 'silent' });
const template = { ...BUILTIN_TEMPLATE, image: 'agentplane/worker:test' };
const want = (namespace: string, size: number, role: 'manager' | 'worker' = 'worker'): PoolWant => ({ namespace, templateName: 'fast', template, role, size });

describe('PodPool', () => {
  let wants: PoolWant[];
  let pods: Map<string, V1Pod>;
  let made: PodSlot[];
  let discarded: string[];
  let swept: number;
  let failCreate: (slot: PodSlot) => boolean;
  let pool: PodPool;

  const start = async (): Promise<PodPool> => {
    pool = new PodPool({
      logger,
      wanted: () => wants,
      create: async (slot) => {
        if (failCreate(slot)) throw new Error(`namespaces "${slot.namespace}" not found`);
        made.push(slot);
        const name = `${slot.id}-x`;
        pods.set(name, { metadata: { name, namespace: slot.namespace }, status: { phase: 'Pending' } });
        return name;
      },
      discard: async (slot) => {
        discarded.push(slot.id);
        if (slot.pod) pods.delete(slot.pod);
      },
      pods: () => [...pods.values()],
      sweep: async () => void swept++,
      resyncMs: 20,
      refillAfterTakeMs: 0,
      backoffMs: { first: 100, max: 400 },
    });
    await pool.start();
    return pool;
  };
  const readyAll = () => pool.list().forEach((s) => pool.ready(s.ref));

  beforeEach(() => {
    wants = [];
    pods = new Map();
    made = [];
    discarded = [];
    swept = 0;
    failCreate = () => false;
  });
  afterEach(async () => {
    await pool?.close();
  });

  it('sweeps what an earlier run left, then makes each want’s slots in its namespace', async () => {
    wants = [want('team-a', 2), want('team-b', 1, 'manager')];
    await start();
    expect(swept).to.equal(1);
    await eventually(async () => made.length === 3, 2000, 'three slots');
    expect(made.map((s) => `${s.namespace}/${s.role}`).sort()).to.deep.equal(['team-a/worker', 'team-a/worker', 'team-b/manager']);
    expect(made.every((s) => /^warm-[0-9a-f]{8}$/.test(s.id) && s.ref.namespace === '.warm-pool')).to.equal(true);
    await sleep(100);
    expect(made, 'no more than asked for').to.have.length(3);
  });

  it('hands out only a ready slot of the namespace, template and role asked for, then makes another', async () => {
    wants = [want('team-a', 1)];
    await start();
    await eventually(async () => made.length === 1, 2000, 'a slot');
    expect(pool.take('team-a', 'fast', 'worker'), 'not ready yet').to.equal(undefined);
    readyAll();
    expect(pool.take('team-a', 'fast', 'manager'), 'another role').to.equal(undefined);
    expect(pool.take('team-b', 'fast', 'worker'), 'another namespace').to.equal(undefined);
    expect(pool.serves('team-a', 'fast', 'worker')).to.equal(true);
    expect(pool.serves('team-a', 'fast', 'manager')).to.equal(false);
    const taken = pool.take('team-a', 'fast', 'worker');
    expect(taken?.id).to.equal(made[0].id);
    expect(pool.readyCount).to.equal(0);
    await eventually(async () => made.length === 2, 2000, 'a replacement');
    expect(discarded, 'a taken slot is the agent’s, not discarded').to.not.include(taken!.id);
  });

  it('replaces a slot whose pod ended or vanished untaken, backing off while they keep failing', async () => {
    wants = [want('team-a', 1)];
    await start();
    await eventually(async () => made.length === 1, 2000, 'a slot');
    const first = made[0];
    pods.get(first.pod!)!.status = {
      phase: 'Pending',
      containerStatuses: [{ name: 'worker', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImageNeverPull' } } }],
    };
    await eventually(async () => discarded.includes(first.id) && made.length === 2, 2000, 'the stuck slot replaced');
    pods.delete(made[1].pod!);
    const t = Date.now();
    await eventually(async () => made.length === 3, 2000, 'the vanished slot replaced');
    expect(Date.now() - t, 'the second replacement waited longer (backoff 100, then 200 ms)').to.be.at.least(150);
  });

  it('backs off a namespace it cannot make slots in, one try at a time', async () => {
    wants = [want('missing', 3)];
    let tries = 0;
    failCreate = () => (tries++, true);
    await start();
    await sleep(350);
    expect(tries, 'tries at 0, 100, 300 ms: not three a round nor every 20 ms').to.be.within(2, 4);
    expect(made).to.have.length(0);
  });

  it('shrinks (the least ready first) and removes the slots of a pool no longer asked for', async () => {
    wants = [want('team-a', 3), want('team-b', 1)];
    await start();
    await eventually(async () => made.length === 4, 2000, 'four slots');
    const teamA = made.filter((s) => s.namespace === 'team-a');
    pool.ready(teamA[0].ref);
    wants = [want('team-a', 1)];
    await eventually(async () => pool.list().length === 1, 2000, 'one slot left');
    expect(pool.list()[0].id, 'the ready one stays').to.equal(teamA[0].id);
    expect(discarded).to.have.members(made.filter((s) => s.id !== teamA[0].id).map((s) => s.id));
  });

  it('removes every untaken slot on close and makes no more', async () => {
    wants = [want('team-a', 2)];
    await start();
    await eventually(async () => made.length === 2, 2000, 'two slots');
    await pool.close();
    expect(discarded).to.have.members(made.map((s) => s.id));
    await sleep(60);
    expect(made).to.have.length(2);
  });
});
