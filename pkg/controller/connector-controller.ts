// The connector reconciler: owns connector status, for connectors written through any API (the
// REST mirror, the aggregated API, kubectl on the cluster home's custom resources). Level-triggered
// over the connector informer: a connector that appears, or whose URL or credential reference
// changes, is checked (the credential read from its secret then, tools/list within a deadline) and
// the finding written to its status. A secret's change re-checks the connectors that reference it;
// task dispatch asks for a re-check of the connectors it attaches. Every connector is checked again
// periodically, since the server it names can come and go without any write here: every `resyncMs`
// while Ready, and with doubling delays (up to `maxBackoffMs`) while it fails, so a dead server
// costs little. Checks run in the controller's workqueue: never in a request or a task, one at a
// time per connector, a bounded number at once.

import type { Connector, ConnectorPhase } from '../api/connector.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { ConnectorChecker } from '../connector/check.js';
import { probeInputs } from '../connector/check.js';
import type { Logger } from '../observability/logger.js';
import type { Informer } from '../registry/cache/informer.js';
import { Controller, type Result } from './framework/controller.js';

/** Re-check of a Ready connector. */
export const DEFAULT_CONNECTOR_RESYNC_MS = 30_000;
/** The longest wait between checks of a failing connector. */
export const DEFAULT_CONNECTOR_MAX_BACKOFF_MS = 5 * 60_000;
/** Checks at once: each may wait out a probe deadline, and the machine has other work. */
const MAX_CONCURRENT_CHECKS = 4;

export interface ConnectorControllerOptions {
  informer: Informer<Connector>;
  checker: ConnectorChecker;
  logger: Logger;
  /** Re-check of a Ready connector (default 30 s); also the first delay after a failure. */
  resyncMs?: number;
  /** Cap of the doubling delay between checks of a failing connector (default 5 min). */
  maxBackoffMs?: number;
}

export class ConnectorController {
  readonly controller: Controller;
  private readonly resyncMs: number;
  private readonly maxBackoffMs: number;
  /** Consecutive failed checks per connector incarnation (namespace/name/uid). */
  private readonly failures = new Map<string, number>();
  /** Aborts probes under way on stop, so shutdown does not wait out their deadlines. */
  private readonly stopping = new AbortController();

  constructor(private readonly o: ConnectorControllerOptions) {
    this.resyncMs = Math.max(1, o.resyncMs ?? DEFAULT_CONNECTOR_RESYNC_MS);
    this.maxBackoffMs = Math.max(this.resyncMs, o.maxBackoffMs ?? DEFAULT_CONNECTOR_MAX_BACKOFF_MS);
    this.controller = new Controller({
      name: 'connector',
      logger: o.logger,
      reconcile: (ref) => this.reconcile(ref),
      maxConcurrent: MAX_CONCURRENT_CHECKS,
    });
    // Status writes, labels and display fields do not change what a check finds: only the URL
    // and the credential reference do (else every status write would trigger another check).
    this.controller.watch(o.informer, undefined, { ignoreUpdate: (old, obj) => probeInputs(old) === probeInputs(obj) });
  }

  start(): Promise<void> {
    return this.controller.start();
  }

  /** Stops checking; probes under way are aborted and their findings dropped. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.controller.stop();
    await this.controller.idle();
  }

  /** A secret was created, replaced or deleted: re-check the connectors that reference it. */
  secretChanged(namespace: string, secretName: string): void {
    for (const c of this.o.informer.list(namespace)) {
      if (c.spec.authSecretName === secretName) this.controller.enqueue(c.metadata);
    }
  }

  /** Someone is about to use the connector (task dispatch): check it again soon. */
  recheck(ref: ObjectRef): void {
    this.controller.enqueue(ref);
  }

  private async reconcile(ref: ObjectRef): Promise<Result | void> {
    const c = this.o.informer.get(ref.namespace, ref.name);
    const key = refKey(ref);
    if (!c || c.metadata.deletionTimestamp) {
      for (const k of this.failures.keys()) if (k.startsWith(`${key}/`)) this.failures.delete(k);
      return;
    }
    const phase = await this.o.checker.check(c, this.stopping.signal);
    if (this.stopping.signal.aborted) return;
    return { requeueAfter: this.nextCheckIn(`${key}/${c.metadata.uid}`, phase) };
  }

  /** Resets the failure count on success, else counts one more; the delay until the next check. */
  private nextCheckIn(incarnation: string, phase: ConnectorPhase): number {
    if (phase === 'Ready') {
      this.failures.delete(incarnation);
      return this.resyncMs;
    }
    const n = (this.failures.get(incarnation) ?? 0) + 1;
    this.failures.set(incarnation, n);
    return Math.min(this.resyncMs * 2 ** (n - 1), this.maxBackoffMs);
  }
}
