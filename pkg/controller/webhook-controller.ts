// The webhook controller (docs/triggers-and-webhooks.md), run by the leader only: it delivers the
// chosen events of each Webhook's agents to its URL, in order per agent, at least once. Level
// based: each webhook's status holds a cursor per agent (the last event seq acknowledged or passed
// over), and a reconcile sends what the event log holds after it, so a restart or a new leader
// resumes where the store says; only a batch sent but not yet recorded is sent again. An agent's
// next event waits until the receiver acknowledged (2xx) the one before; a failure is retried
// with exponential backoff and recorded in the status. A new agent's events are sent from its
// first; an agent older than the webhook from the moment the webhook first saw it.

import type { Agent } from '../api/agent.js';
import { ApiError } from '../api/errors.js';
import type { AgentEvent } from '../api/event.js';
import type { ObjectRef } from '../api/meta.js';
import { type Webhook, type WebhookAttempt, webhookCovers, type WebhookCursor, WEBHOOK_FAILURES_KEPT } from '../api/webhook.js';
import type { Logger } from '../observability/logger.js';
import type { Informer } from '../registry/cache/informer.js';
import type { EventLog } from '../registry/event-log.js';
import type { Registry } from '../registry/registry.js';
import type { SecretStore } from '../registry/secrets.js';
import { streamOf } from './event-ingest.js';
import { Controller } from './framework/controller.js';
import { backoffMs, signedDelivery, signingKey, type WebhookSend } from './webhook-delivery.js';

export interface WebhookControllerOptions {
  webhooks: Registry<Webhook>;
  informers: { webhooks: Informer<Webhook>; agents: Informer<Agent> };
  events: EventLog;
  secrets: SecretStore;
  send: WebhookSend;
  logger: Logger;
  /** First retry after this long, doubling to maxBackoffMs (defaults 1 s and 5 min). */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long a receiver has to answer (default 10 s). */
  timeoutMs?: number;
  /** Reconcile every webhook this often even without news (default 30 s). */
  resyncMs?: number;
}

/** Events of one agent sent in one reconcile before the status records them. */
const BATCH = 50;

interface AgentOutcome {
  agent: string;
  cursor: WebhookCursor;
  delivered: WebhookAttempt[];
  failure?: WebhookAttempt;
  /** When this agent's next attempt may be made (after a failure). */
  retryAt?: number;
  more: boolean;
}

export class WebhookController {
  readonly controller: Controller;
  /** Failed attempts in a row and the earliest next attempt, per webhook and agent uid. */
  private readonly backoff = new Map<string, { attempts: number; notBefore: number }>();

  constructor(private readonly o: WebhookControllerOptions) {
    this.controller = new Controller({ name: 'webhooks', logger: o.logger, reconcile: (ref) => this.reconcile(ref) });
    const { webhooks, agents } = o.informers;
    // A status write (the controller's own) changes no generation: nothing to do for it.
    this.controller.watch(webhooks, (w) => [w.metadata], { ignoreUpdate: (old, w) => old.metadata.generation === w.metadata.generation });
    this.controller.watch(agents, (a) => this.webhooksOf(a.metadata.namespace, a.metadata.name), {
      ignoreUpdate: (old, a) => old.metadata.uid === a.metadata.uid,
    });
    o.events.onAppend((ev) => {
      for (const ref of this.webhooksOf(ev.namespace, ev.agentName, ev.type)) this.controller.enqueue(ref);
    });
  }

  start(): Promise<void> {
    return this.controller.start();
  }

  stop(): void {
    this.controller.stop();
  }

  private webhooksOf(namespace: string, agent: string, type?: string): ObjectRef[] {
    return this.o.informers.webhooks
      .list(namespace)
      .filter((w) => webhookCovers(w, agent) && (!type || (w.spec.eventTypes as string[]).includes(type)))
      .map((w) => w.metadata);
  }

  private async reconcile(ref: ObjectRef): Promise<{ requeueAfter?: number }> {
    const resync = this.o.resyncMs ?? 30_000;
    const w = this.o.informers.webhooks.get(ref.namespace, ref.name);
    if (!w || w.metadata.deletionTimestamp) {
      for (const k of this.backoff.keys()) if (k.startsWith(`${ref.namespace}/${ref.name}/`)) this.backoff.delete(k);
      return {};
    }
    const secret = (await this.o.secrets.get(w.metadata.namespace, w.spec.secretRef.name))?.data[w.spec.secretRef.key];
    const agents = this.o.informers.agents.list(w.metadata.namespace).filter((a) => webhookCovers(w, a.metadata.name) && !a.metadata.deletionTimestamp);
    const key = secret === undefined ? undefined : signingKey(secret);
    const outcomes = await Promise.all(agents.map((a) => this.deliverAgent(w, a, key)));
    await this.record(w, outcomes, agents);
    if (outcomes.some((x) => x.more)) return { requeueAfter: 1 };
    const retries = outcomes.map((x) => x.retryAt).filter((t): t is number => t !== undefined);
    return { requeueAfter: retries.length ? Math.max(1, Math.min(...retries) - Date.now()) : resync };
  }

  /** Sends one agent's next events, in order, stopping at the first failure. */
  private async deliverAgent(w: Webhook, a: Agent, key: Buffer | undefined): Promise<AgentOutcome> {
    const agent = a.metadata.name;
    const stream = streamOf(a);
    const stored = w.status.cursors?.[agent];
    const cursor: WebhookCursor =
      stored && stored.uid === a.metadata.uid
        ? { ...stored }
        : {
            uid: a.metadata.uid,
            seq: Date.parse(a.metadata.creationTimestamp) >= Date.parse(w.metadata.creationTimestamp) ? 0 : await this.o.events.lastSeq(stream),
          };
    const out: AgentOutcome = { agent, cursor, delivered: [], more: false };
    const bk = `${w.metadata.namespace}/${w.metadata.name}/${a.metadata.uid}`;
    const held = this.backoff.get(bk);
    if (held && held.notBefore > Date.now()) return { ...out, retryAt: held.notBefore };
    const events = await this.o.events.since(stream, cursor.seq, BATCH);
    for (const ev of events) {
      if (!(w.spec.eventTypes as string[]).includes(ev.type)) {
        cursor.seq = ev.seq;
        continue;
      }
      const attempt = await this.attempt(w, a, ev, key);
      if (attempt.status < 200 || attempt.status > 299) {
        const attempts = (held?.attempts ?? 0) + 1;
        const notBefore = Date.now() + backoffMs(attempts, this.o.baseBackoffMs ?? 1000, this.o.maxBackoffMs ?? 300_000);
        this.backoff.set(bk, { attempts, notBefore });
        this.o.logger.info(
          { namespace: w.metadata.namespace, name: w.metadata.name, agent, seq: ev.seq, status: attempt.status, attempts },
          'webhook delivery failed',
        );
        return { ...out, failure: attempt, retryAt: notBefore };
      }
      this.backoff.delete(bk);
      out.delivered.push(attempt);
      cursor.seq = ev.seq;
    }
    return { ...out, more: events.length === BATCH };
  }

  private async attempt(w: Webhook, a: Agent, ev: AgentEvent, key: Buffer | undefined): Promise<WebhookAttempt> {
    const base = { time: new Date().toISOString(), agent: a.metadata.name, seq: ev.seq, type: ev.type };
    if (!key) return { ...base, status: 0, message: `secret "${w.spec.secretRef.name}" (key "${w.spec.secretRef.key}") does not exist` };
    const d = signedDelivery(ev, a.metadata.uid, key);
    try {
      const status = await this.o.send(w.spec.url, { ...d, signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000) });
      return { ...base, status, ...(status < 200 || status > 299 ? { message: `the receiver answered ${status}` } : {}) };
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      return { ...base, status: 0, message: (cause ?? (err instanceof Error ? err.message : String(err))).slice(0, 500) };
    }
  }

  /** One status write per reconcile: cursors, counts, the last delivery and failures. */
  private async record(w: Webhook, outcomes: AgentOutcome[], agents: Agent[]): Promise<void> {
    const present = new Set(agents.map((a) => a.metadata.name));
    const stored = w.status.cursors ?? {};
    const moved = outcomes.some((x) => x.delivered.length || x.failure || stored[x.agent]?.uid !== x.cursor.uid || stored[x.agent]?.seq !== x.cursor.seq);
    if (!moved && Object.keys(stored).every((name) => present.has(name))) return;
    try {
      await this.o.webhooks.updateStatus(w.metadata.namespace, w.metadata.name, (s) => {
        const cursors = Object.fromEntries(Object.entries(s.cursors ?? {}).filter(([name]) => present.has(name)));
        for (const x of outcomes) cursors[x.agent] = x.cursor;
        s.cursors = cursors;
        const delivered = outcomes.flatMap((x) => x.delivered);
        const failures = outcomes.flatMap((x) => (x.failure ? [x.failure] : []));
        if (delivered.length) {
          s.delivered = (s.delivered ?? 0) + delivered.length;
          s.lastDelivery = delivered.sort((x, y) => x.time.localeCompare(y.time)).at(-1)!;
        }
        if (failures.length) {
          s.failed = (s.failed ?? 0) + failures.length;
          s.lastFailures = [...(s.lastFailures ?? []), ...failures].slice(-WEBHOOK_FAILURES_KEPT);
        }
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
}
