// The Kubernetes runtime's warm pool: pods made ahead of any agent from a template that asks for
// one (`warmPool` in template.yaml), each with its own workspace claim, Secret and ConfigMap and
// its engine started with the agents' defaults, so that a new solo agent of that template and
// role in that namespace takes a Running pod instead of waiting for a claim to be provisioned and
// a pod to start. A pod cannot change namespace or volumes, so a slot is made for one namespace
// and brings the claim that becomes the taker's workspace (docs/kubernetes-runtime.md "Warm pool").
//
// The pool is a level-triggered loop: it reads what the templates want and what slot pods exist,
// and makes or removes the difference; it runs on a timer and whenever a slot changes. It keeps
// only the count and the slots' identities: making, handing over and removing objects are the
// runtime's (kubernetes-runtime.ts).

import { randomBytes, randomUUID } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import type { Role } from '../../api/agent.js';
import type { ObjectRef } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import { refillDelay, SLOT_NAMESPACE } from '../warm-pool.js';
import { podEnded } from './pod-index.js';
import type { WorkerTemplate } from './template.js';

/** What one template wants in one namespace. */
export interface PoolWant {
  namespace: string;
  templateName: string;
  template: WorkerTemplate;
  role: Role;
  size: number;
}

export interface PodSlot {
  /** `warm-<hex>`: the prefix of its objects' names (names.ts slotNames). */
  id: string;
  namespace: string;
  templateName: string;
  role: Role;
  /** Its identity for the control channel and the model proxy until an agent takes it. */
  ref: ObjectRef;
  uid: string;
  /** The pod's name, once made. */
  pod?: string;
  /** The pod was seen by the watch (so its absence later means it is gone). */
  seen?: boolean;
  /** Its worker connected, engine started: it can be taken. */
  ready: boolean;
  madeAt: number;
}

export interface PodPoolOptions {
  logger: Logger;
  /** What the templates want now. */
  wanted(): PoolWant[];
  /** Makes the slot's Secret, ConfigMap, claim and pod; resolves with the pod's name. */
  create(slot: PodSlot, want: PoolWant): Promise<string>;
  /** Revokes the slot's credentials and deletes its objects; missing ones are fine. */
  discard(slot: PodSlot): Promise<void>;
  /** The slot pods the watch knows, not yet taken. */
  pods(): V1Pod[];
  /** Deletes every untaken slot object an earlier run left (their credentials died with it). */
  sweep(): Promise<void>;
  /** The number of ready slots, whenever it changes (a gauge). */
  onReady?(n: number): void;
  /** The loop's period when nothing changes (default 5 s). */
  resyncMs?: number;
  /** After a take, how long before the replacement is made (default 1 s): the taker starts first. */
  refillAfterTakeMs?: number;
  /** Backoff per namespace and template after a slot died untaken or could not be made. */
  backoffMs?: { first: number; max: number };
  /** A slot whose pod the watch has not seen after this long is given up (default 60 s). */
  unseenAfterMs?: number;
}

const keyOf = (x: { namespace: string; templateName: string; role: Role }): string => `${x.namespace}/${x.templateName}/${x.role}`;

export class PodPool {
  private readonly slots = new Map<string, PodSlot>();
  /** Per want: slots that died or failed in a row, and when the next may be made. */
  private readonly failures = new Map<string, { count: number; notBefore: number }>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private closed = false;
  private lastReported = -1;

  constructor(private readonly o: PodPoolOptions) {}

  /** Removes what an earlier run left, then keeps the pool filled. */
  async start(): Promise<void> {
    await this.o.sweep();
    this.kick();
  }

  /** Runs the loop now (or once more after the run in progress). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.reconcile()
      .catch((err) => this.o.logger.warn({ err: String(err) }, 'warm pool: reconcile failed; retrying'))
      .finally(() => {
        this.running = undefined;
        if (this.closed) return;
        if (this.again) {
          this.again = false;
          this.kick();
          return;
        }
        this.timer = setTimeout(() => this.kick(), this.o.resyncMs ?? 5000);
        this.timer.unref();
      });
  }

  /** A slot's worker said hello: it can be taken. */
  ready(ref: ObjectRef): void {
    const slot = [...this.slots.values()].find((s) => s.ref.name === ref.name && s.ref.namespace === ref.namespace);
    if (!slot || slot.ready) return;
    slot.ready = true;
    this.failures.delete(keyOf(slot));
    this.report();
  }

  /** Whether a template keeps a pool in the namespace for agents of the role. */
  serves(namespace: string, templateName: string, role: Role): boolean {
    return this.o.wanted().some((w) => w.size > 0 && keyOf(w) === keyOf({ namespace, templateName, role }));
  }

  /**
   * Takes a ready slot for a new agent of the template and role in the namespace (the caller
   * makes it the agent's), and refills after a while.
   */
  take(namespace: string, templateName: string, role: Role): PodSlot | undefined {
    const key = keyOf({ namespace, templateName, role });
    const pods = new Set(
      this.o
        .pods()
        .filter((p) => !podEnded(p))
        .map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`),
    );
    const slot = [...this.slots.values()].find((s) => keyOf(s) === key && s.ready && s.pod && pods.has(`${s.namespace}/${s.pod}`));
    if (!slot) return undefined;
    this.slots.delete(slot.id);
    this.failures.delete(key);
    this.report();
    setTimeout(() => this.kick(), this.o.refillAfterTakeMs ?? 1000).unref();
    return slot;
  }

  get readyCount(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.ready) n++;
    return n;
  }

  /** The slots, made or being made (tests, status). */
  list(): PodSlot[] {
    return [...this.slots.values()];
  }

  /** Stops the loop and removes every untaken slot. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
    const slots = [...this.slots.values()];
    this.slots.clear();
    this.report();
    await Promise.all(slots.map((s) => this.o.discard(s).catch(() => undefined)));
  }

  private async reconcile(): Promise<void> {
    const now = Date.now();
    const wants = new Map(this.o.wanted().map((w) => [keyOf(w), w]));
    const pods = new Map(this.o.pods().map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p]));
    const gone: PodSlot[] = [];
    for (const s of this.slots.values()) {
      if (!s.pod) continue; // being made
      const pod = pods.get(`${s.namespace}/${s.pod}`);
      if (pod) s.seen = true;
      const dead = pod ? podEnded(pod) : s.seen || now - s.madeAt > (this.o.unseenAfterMs ?? 60_000);
      if (dead) {
        this.o.logger.warn({ namespace: s.namespace, slot: s.id, pod: s.pod }, 'warm pool: an untaken pod ended; replacing it');
        this.failed(keyOf(s), now);
        gone.push(s);
      } else if (!wants.has(keyOf(s))) {
        gone.push(s);
      }
    }
    for (const [key, w] of wants) {
      const have = [...this.slots.values()].filter((s) => keyOf(s) === key && !gone.includes(s));
      // Fewer: the ones not ready go first.
      if (have.length > w.size) gone.push(...have.sort((a, b) => Number(a.ready) - Number(b.ready)).slice(0, have.length - w.size));
    }
    for (const s of gone) this.slots.delete(s.id);
    if (gone.length) this.report();
    await Promise.all(
      gone.map((s) =>
        this.o.discard(s).catch((err) => this.o.logger.warn({ namespace: s.namespace, slot: s.id, err: String(err) }, 'warm pool: could not remove a slot')),
      ),
    );
    for (const [key, w] of wants) {
      const f = this.failures.get(key);
      if (f && now < f.notBefore) continue;
      const missing = w.size - [...this.slots.values()].filter((s) => keyOf(s) === key).length;
      // After a failure, one at a time: a namespace that is missing is not tried n times a round.
      for (let i = 0; i < (f ? Math.min(missing, 1) : missing); i++) this.make(w);
    }
  }

  private make(w: PoolWant): void {
    const id = `warm-${randomBytes(4).toString('hex')}`;
    const slot: PodSlot = {
      id,
      namespace: w.namespace,
      templateName: w.templateName,
      role: w.role,
      ref: { namespace: SLOT_NAMESPACE, name: `${w.namespace}/${id}` },
      uid: randomUUID(),
      ready: false,
      madeAt: Date.now(),
    };
    this.slots.set(id, slot);
    this.o.create(slot, w).then(
      (pod) => {
        slot.pod = pod;
        if (this.slots.get(id) !== slot) void this.o.discard(slot).catch(() => undefined); // removed meanwhile
      },
      (err) => {
        this.o.logger.warn({ namespace: w.namespace, template: w.templateName, err: String(err) }, 'warm pool: could not make a slot');
        this.failed(keyOf(slot), Date.now());
        if (this.slots.get(id) === slot) this.slots.delete(id);
        void this.o.discard(slot).catch(() => undefined);
      },
    );
  }

  private failed(key: string, now: number): void {
    const count = (this.failures.get(key)?.count ?? 0) + 1;
    const delay = refillDelay(count, this.o.backoffMs?.first ?? 2000, this.o.backoffMs?.max ?? 120_000);
    this.failures.set(key, { count, notBefore: now + delay });
  }

  private report(): void {
    const n = this.readyCount;
    if (n === this.lastReported) return;
    this.lastReported = n;
    this.o.onReady?.(n);
  }
}
