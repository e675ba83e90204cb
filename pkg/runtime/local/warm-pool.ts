// The local runtime's warm pool: workers started ahead of any agent, each in a directory of its
// own under <dataDir>/pool, its engine pre-started with the default settings, so that a new
// agent claims one instead of waiting for a worker and an engine to start. The pool only keeps
// the count: starting a slot's process, handing it to an agent and stopping it are the
// runtime's (local-runtime.ts). See docs/performance.md "Warm pool".

import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ObjectRef } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import { refillDelay, SLOT_NAMESPACE } from '../warm-pool.js';
import type { RemoteProcess } from './spawner.js';

export interface Slot {
  ref: ObjectRef;
  uid: string;
  /** The slot's workspace: becomes the claiming agent's. */
  dir: string;
  child: RemoteProcess;
  /** The model credential in the slot's environment (re-bound to the claiming agent). */
  credential: string;
  /** Connected to the server, engine started: claimable. */
  ready: boolean;
}

export interface WarmPoolOptions {
  size: number;
  /** <dataDir>/pool */
  dir: string;
  logger: Logger;
  /** Starts a slot's worker process in `dir` with a slot token and model credential. */
  start(ref: ObjectRef, uid: string, dir: string): { child: RemoteProcess; credential: string };
  /** Stops a slot's worker and revokes its credentials. */
  stop(slot: Slot): Promise<void>;
  /** The number of ready slots, whenever it changes (a gauge). */
  onReady?(n: number): void;
  /**
   * How long after a claim the pool starts the replacement (default 1 s): a slot's start-up
   * takes CPU the claiming agent's first task is using.
   */
  refillAfterClaimMs?: number;
  /** Backoff after an unclaimed slot died: first delay, doubled per death in a row up to the cap. */
  backoffMs?: { first: number; max: number };
}

export class WarmPool {
  private readonly slots = new Map<string, Slot>();
  /** Unclaimed slots that died since the last claim: the refill waits longer each time. */
  private deaths = 0;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly o: WarmPoolOptions) {}

  /**
   * Removes what an earlier run left in the pool directory (slots not claimed before it ended),
   * keeping the directories of agents that claimed one (`claimed`), then fills the pool.
   */
  start(claimed: ReadonlySet<string>): void {
    mkdirSync(this.o.dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(this.o.dir)) {
      const dir = join(this.o.dir, name);
      if (!claimed.has(dir)) rmSync(dir, { recursive: true, force: true });
    }
    this.fill();
  }

  /** A slot said hello: it can be claimed. */
  ready(ref: ObjectRef): void {
    const slot = this.slots.get(ref.name);
    if (!slot || slot.ready) return;
    slot.ready = true;
    this.report();
  }

  /** Takes a ready slot out of the pool (the caller makes it an agent's worker), and refills. */
  take(): Slot | undefined {
    const slot = [...this.slots.values()].find((s) => s.ready && s.child.exitCode === null && s.child.signalCode === null);
    if (!slot) return undefined;
    this.slots.delete(slot.ref.name);
    this.deaths = 0;
    this.report();
    setTimeout(() => this.fill(), this.o.refillAfterClaimMs ?? 1000).unref();
    return slot;
  }

  get readyCount(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.ready) n++;
    return n;
  }

  /** Process ids of the slots (started or ready). */
  pids(): number[] {
    return [...this.slots.values()].flatMap((s) => (s.child.pid ? [s.child.pid] : []));
  }

  /** Stops every slot and removes its directory; nothing refills after this. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const slots = [...this.slots.values()];
    this.slots.clear();
    this.report();
    await Promise.all(slots.map((s) => this.discard(s)));
  }

  private fill(): void {
    if (this.closed || this.timer) return;
    const delay = refillDelay(this.deaths, this.o.backoffMs?.first ?? 1000, this.o.backoffMs?.max ?? 60_000);
    if (delay > 0 && this.slots.size < this.o.size) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        // One slot per wait: while slots keep dying, they are restarted no faster than this.
        this.startOne();
        this.fill();
      }, delay);
      this.timer.unref();
      return;
    }
    while (this.slots.size < this.o.size) this.startOne();
  }

  private startOne(): void {
    if (this.closed || this.slots.size >= this.o.size) return;
    const id = `slot-${randomUUID().slice(0, 8)}`;
    const ref = { namespace: SLOT_NAMESPACE, name: id };
    const dir = join(this.o.dir, id);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const uid = randomUUID();
    let started: { child: RemoteProcess; credential: string };
    try {
      started = this.o.start(ref, uid, dir);
    } catch (err) {
      this.o.logger.error({ err: String(err) }, 'warm pool: could not start a slot');
      rmSync(dir, { recursive: true, force: true });
      this.deaths++;
      return;
    }
    const slot: Slot = { ref, uid, dir, ready: false, ...started };
    this.slots.set(id, slot);
    slot.child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.slots.get(id) !== slot) return; // claimed, or stopped on purpose
      this.slots.delete(id);
      this.deaths++;
      this.o.logger.warn({ slot: id, code, signal }, 'warm pool: an unclaimed slot exited; replacing it');
      this.report();
      void this.discard(slot).then(() => this.fill());
    });
  }

  private async discard(slot: Slot): Promise<void> {
    await this.o.stop(slot);
    rmSync(slot.dir, { recursive: true, force: true });
  }

  private report(): void {
    this.o.onReady?.(this.readyCount);
  }
}
