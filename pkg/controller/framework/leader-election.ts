// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does
// it: a candidate takes the Lease when it is free or its holder has not renewed it for the lease
// duration (measured on this process's clock from when it last saw the record change, so clock
// skew between replicas does not matter), renews it every retry period, and gives up leadership
// when it could not renew within the renew deadline. Every write carries the resourceVersion it
// read, so two candidates racing for one Lease cannot both win. A graceful stop releases the
// Lease (empty holder), so a successor takes over at once instead of after the lease duration.
// Unlike client-go, which only polls, a candidate also watches the Lease: it sees each renewal
// when it happens (not up to a retry period later) and tries again at the very moment the lease
// it saw expires, so a dead leader is replaced within the lease duration of its last renewal.

import { CoordinationV1Api, type KubeConfig, V1MicroTime, type V1Lease, Watch } from '@kubernetes/client-node';
import type { Logger } from '../../observability/logger.js';
import { inspect } from 'node:util';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  /** The Lease: its namespace (the install namespace) and name. */
  namespace: string;
  name: string;
  /** Who this candidate is (pod name, else hostname_pid); unique among the replicas. */
  identity: string;
  /** How long a holder's last renewal keeps the Lease from others; default 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it stops leading; default 10 s. */
  renewDeadlineMs?: number;
  /** How often a candidate tries to acquire, and the leader to renew; default 2 s. */
  retryPeriodMs?: number;
  logger: Logger;
  /** Called once when this candidate becomes the leader. */
  onStartedLeading: () => void;
  /** Called once when it stops leading (renewal failed, the Lease was taken, or stop()). */
  onStoppedLeading: () => void;
  /** Called whenever the observed holder changes (including to this candidate). */
  onNewLeader?: (identity: string) => void;
}

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** The Lease as last seen: its record and when (this process's clock) it last changed. */
interface Observed {
  holder: string;
  renewTime: string;
  resourceVersion: string;
  at: number;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly leaseMs: number;
  private readonly renewMs: number;
  private readonly retryMs: number;
  private observed?: Observed;
  private leading = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** The candidate's watch of the Lease (absent while leading). */
  private follow?: { abort?: AbortController };

  constructor(private readonly o: LeaderElectionOptions) {
    this.api = o.kubeConfig.makeApiClient(CoordinationV1Api);
    this.leaseMs = o.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewMs = o.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryMs = o.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    if (!(this.leaseMs > this.renewMs && this.renewMs > this.retryMs && this.retryMs > 0)) {
      throw new Error('leader election: the lease duration must exceed the renew deadline, which must exceed the retry period (> 0)');
    }
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** The holder last seen on the Lease ('' when free or not read yet). */
  get leader(): string {
    return this.observed?.holder ?? '';
  }

  /** Starts campaigning in the background; returns at once. */
  start(): void {
    this.loop ??= this.run().catch((err: unknown) => this.o.logger.error({ err: String(err) }, 'leader election stopped'));
  }

  /** Stops campaigning; a leader releases the Lease so that another replica takes over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    this.unwatchLease();
    if (this.leading) {
      await this.release().catch((err: unknown) => this.o.logger.warn({ err: String(err) }, 'could not release the lease'));
      this.stepDown('stopping');
    }
  }

  private async run(): Promise<void> {
    // Candidate: try every retry period, and when the lease seen expires, until the Lease is ours.
    while (!this.stopped && !(await this.tryAcquireOrRenew())) {
      this.watchLease();
      await this.sleep(this.untilNextTry());
    }
    this.unwatchLease();
    if (this.stopped) return;
    this.leading = true;
    this.o.logger.info({ lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity }, 'became the leader');
    this.o.onStartedLeading();
    // Leader: renew every retry period; a renewal that does not succeed within the renew
    // deadline (tried every retry period meanwhile) ends leadership.
    let lastRenew = Date.now();
    while (!this.stopped) {
      await this.sleep(this.retryMs);
      if (this.stopped) return;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = Date.now();
        continue;
      }
      if (this.observed && this.observed.holder !== this.o.identity) return this.stepDown(`the lease is held by ${this.observed.holder}`);
      if (Date.now() - lastRenew >= this.renewMs) return this.stepDown('could not renew the lease within the renew deadline');
    }
  }

  /** A retry period, or less: until the lease this candidate saw expires (1 ms after, by its clock). */
  private untilNextTry(): number {
    const o = this.observed;
    if (!o || o.holder === '' || o.holder === this.o.identity) return this.retryMs;
    return Math.min(this.retryMs, Math.max(0, o.at + this.leaseMs - Date.now()) + 1);
  }

  /**
   * Follows the Lease while a candidate: each change is observed when it happens, and a released
   * Lease (no holder) wakes the candidate at once. A watch that ends is started again (from the
   * last version seen) on the next try; polling covers the gap.
   */
  private watchLease(): void {
    if (this.follow || this.stopped) return;
    const follow: { abort?: AbortController } = {};
    this.follow = follow;
    const rv = this.observed?.resourceVersion;
    const done = (err: unknown): void => {
      if (this.follow !== follow) return;
      this.follow = undefined;
      if (err) this.o.logger.debug({ err: err instanceof Error ? err.message : inspect(err) }, 'leader election: lease watch ended');
    };
    new Watch(this.o.kubeConfig)
      .watch(
        `/apis/coordination.k8s.io/v1/namespaces/${this.o.namespace}/leases`,
        { fieldSelector: `metadata.name=${this.o.name}`, ...(rv ? { resourceVersion: rv } : {}) },
        (type, lease: V1Lease) => {
          if (this.follow !== follow || (type !== 'ADDED' && type !== 'MODIFIED')) return;
          this.observe(lease);
          if (!lease.spec?.holderIdentity) this.wake?.();
        },
        done,
      )
      .then((abort) => (this.follow === follow ? (follow.abort = abort) : abort.abort()), done);
  }

  private unwatchLease(): void {
    this.follow?.abort?.abort();
    this.follow = undefined;
  }

  private stepDown(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.o.logger.warn({ lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity, why }, 'stopped leading');
    this.o.onStoppedLeading();
  }

  /** One attempt: true when the Lease is ours (acquired or renewed) afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    let lease: V1Lease | undefined;
    try {
      lease = await this.api.readNamespacedLease({ namespace: this.o.namespace, name: this.o.name });
    } catch (err) {
      if (httpStatus(err) !== 404) return this.failed('read', err);
    }
    // Stamped when the decision is made (after the read), so an acquireTime never precedes the expiry it follows.
    const now = new Date();
    if (!lease) {
      try {
        const created = await this.api.createNamespacedLease({ namespace: this.o.namespace, body: this.record(now, now, 0) });
        this.observe(created);
        return true;
      } catch (err) {
        return this.failed('create', err);
      }
    }
    this.observe(lease);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const mine = holder === this.o.identity;
    // Someone else holds it and renewed it less than a lease duration ago (by our clock).
    if (!mine && holder !== '' && Date.now() - this.observed!.at < this.leaseMs) return false;
    const acquireTime = mine && spec.acquireTime ? new Date(spec.acquireTime) : now;
    const transitions = (spec.leaseTransitions ?? 0) + (mine ? 0 : 1);
    try {
      const updated = await this.api.replaceNamespacedLease({
        namespace: this.o.namespace,
        name: this.o.name,
        // resourceVersion: a conflicting write by another candidate makes this one fail (409).
        body: {
          ...this.record(acquireTime, now, transitions),
          metadata: { name: this.o.name, namespace: this.o.namespace, resourceVersion: lease.metadata?.resourceVersion ?? '' },
        },
      });
      this.observe(updated);
      return true;
    } catch (err) {
      return this.failed('update', err);
    }
  }

  /** Gives the Lease up: no holder, so the next candidate's attempt takes it. */
  private async release(): Promise<void> {
    const lease = await this.api.readNamespacedLease({ namespace: this.o.namespace, name: this.o.name });
    if (lease.spec?.holderIdentity !== this.o.identity) return;
    await this.api.replaceNamespacedLease({
      namespace: this.o.namespace,
      name: this.o.name,
      body: {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime(Date.now()) },
      },
    });
    this.o.logger.info({ lease: `${this.o.namespace}/${this.o.name}` }, 'released the lease');
  }

  private record(acquired: Date, renewed: Date, transitions: number): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.o.name, namespace: this.o.namespace },
      spec: {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: Math.ceil(this.leaseMs / 1000),
        acquireTime: new V1MicroTime(acquired.getTime()),
        renewTime: new V1MicroTime(renewed.getTime()),
        leaseTransitions: transitions,
      },
    };
  }

  /** Notes the record; its clock restarts only when holder or renewal changed. */
  private observe(lease: V1Lease): void {
    const holder = lease.spec?.holderIdentity ?? '';
    const renewTime = lease.spec?.renewTime ? new Date(lease.spec.renewTime).toISOString() : '';
    const resourceVersion = lease.metadata?.resourceVersion ?? '';
    const prev = this.observed;
    if (prev && prev.holder === holder && prev.renewTime === renewTime) {
      prev.resourceVersion = resourceVersion;
      return;
    }
    this.observed = { holder, renewTime, resourceVersion, at: Date.now() };
    if (prev?.holder !== holder) this.o.onNewLeader?.(holder);
  }

  private failed(op: string, err: unknown): false {
    const status = httpStatus(err);
    // 409: another candidate wrote first; it is the leader now (seen on the next read).
    if (status !== 409) this.o.logger.warn({ op, status, err: err instanceof Error ? err.message : String(err) }, 'leader election: lease request failed');
    return false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }
}

function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** This replica's identity: the pod's name (Deployment sets POD_NAME), else hostname_pid. */
export function candidateIdentity(hostname: string, env = process.env, pid = process.pid): string {
  return env.POD_NAME ? env.POD_NAME : `${hostname}_${pid}`;
}
