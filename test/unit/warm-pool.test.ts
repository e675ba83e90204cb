// The warm pool's bookkeeping with stand-in processes (the real ones: test/integration/warm-pool.test.ts),
// and the model credential re-bind a claim relies on.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { ObjectRef } from '../../pkg/api/meta.js';
import { CredentialRegistry } from '../../pkg/modelproxy/index.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { RemoteProcess } from '../../pkg/runtime/local/spawner.js';
import { refillDelay, SLOT_NAMESPACE } from '../../pkg/runtime/warm-pool.js';
import { type Slot, WarmPool } from '../../pkg/runtime/local/warm-pool.js';

const logger = createLogger({ level: 'silent' });

describe('warm pool', () => {
  describe('refillDelay', () => {
    it('starts at once without deaths, then doubles per death up to the cap', () => {
      expect([0, 1, 2, 3, 4, 7, 8, 100].map((d) => refillDelay(d, 1000, 60_000))).to.deep.equal([0, 1000, 2000, 4000, 8000, 60_000, 60_000, 60_000]);
    });
  });

  describe('WarmPool', () => {
    let dir: string;
    let started: { ref: ObjectRef; dir: string; child: RemoteProcess }[];
    let stopped: string[];
    let ready: number[];
    let pool: WarmPool;
    const make = (size: number): WarmPool =>
      new WarmPool({
        size,
        dir: join(dir, 'pool'),
        logger,
        start: (ref, _uid, d) => {
          const child = new RemoteProcess();
          child.pid = 1000 + started.length;
          started.push({ ref, dir: d, child });
          return { child, credential: `cred-${ref.name}` };
        },
        stop: async (slot: Slot) => {
          stopped.push(slot.ref.name);
          slot.child.exited(0, null);
        },
        onReady: (n) => ready.push(n),
        backoffMs: { first: 200, max: 1000 },
        refillAfterClaimMs: 0,
      });

    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'agentplane-pool-'));
      started = [];
      stopped = [];
      ready = [];
    });
    afterEach(async () => {
      await pool?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('clears what an earlier run left unclaimed, keeps claimed directories, and fills', () => {
      for (const d of ['slot-old', 'slot-claimed']) mkdirSync(join(dir, 'pool', d), { recursive: true });
      pool = make(2);
      pool.start(new Set([join(dir, 'pool', 'slot-claimed')]));
      expect(started).to.have.length(2);
      expect(started.every((s) => s.ref.namespace === SLOT_NAMESPACE && existsSync(s.dir))).to.equal(true);
      expect(readdirSync(join(dir, 'pool')).sort()).to.deep.equal(['slot-claimed', ...started.map((s) => s.ref.name)].sort());
    });

    it('hands out only ready slots, and refills after a claim', async () => {
      pool = make(2);
      pool.start(new Set());
      expect(pool.take(), 'nothing ready yet').to.equal(undefined);
      pool.ready(started[0].ref);
      expect(pool.readyCount).to.equal(1);
      const slot = pool.take();
      expect(slot?.ref).to.deep.equal(started[0].ref);
      expect(slot?.credential).to.equal(`cred-${started[0].ref.name}`);
      expect(ready).to.deep.equal([1, 0]);
      await sleep(5);
      expect(started).to.have.length(3);
      // A claimed slot's exit is the agent's business, not the pool's.
      slot!.child.exited(1, null);
      await sleep(5);
      expect(started).to.have.length(3);
      expect(existsSync(slot!.dir)).to.equal(true);
    });

    it('replaces a slot that died unclaimed, waiting longer after each death', async () => {
      pool = make(1);
      pool.start(new Set());
      started[0].child.exited(1, null);
      await sleep(20);
      expect(existsSync(started[0].dir), 'its directory removed').to.equal(false);
      expect(started, 'not restarted at once').to.have.length(1);
      await sleep(400);
      expect(started).to.have.length(2);
      started[1].child.exited(1, null);
      await sleep(250);
      expect(started, 'the second wait (400 ms) is longer than the first (200 ms)').to.have.length(2);
      await sleep(400);
      expect(started).to.have.length(3);
    });

    it('stops every slot and removes its directory on close; nothing refills after', async () => {
      pool = make(2);
      pool.start(new Set());
      pool.ready(started[0].ref);
      await pool.close();
      expect(stopped.sort()).to.deep.equal(started.map((s) => s.ref.name).sort());
      expect(readdirSync(join(dir, 'pool'))).to.deep.equal([]);
      expect(ready.at(-1)).to.equal(0);
      await sleep(10);
      expect(started).to.have.length(2);
    });
  });

  describe('CredentialRegistry.rebind', () => {
    it("moves a slot's credential to the agent, replacing the agent's earlier one", () => {
      const reg = new CredentialRegistry();
      const slot = { namespace: SLOT_NAMESPACE, name: 'slot-1' };
      const agent = { namespace: 'default', name: 'a' };
      const held = reg.issue(slot, 'uid-slot');
      const earlier = reg.issue(agent, 'uid-old');
      expect(reg.rebind(slot, agent, 'uid-a')).to.equal(true);
      expect(reg.authenticate(held)).to.deep.equal({ ref: agent, uid: 'uid-a' });
      expect(reg.authenticate(earlier)).to.equal(undefined);
      expect(reg.rebind(slot, agent, 'uid-a'), 'the slot has none left').to.equal(false);
      reg.revoke(agent);
      expect(reg.authenticate(held)).to.equal(undefined);
    });
  });
});
