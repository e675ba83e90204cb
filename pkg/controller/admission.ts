// Admission of agents' work (docs/admission.md): who may start a worker, and whose task may run,
// within the caps: at most `maxWorkers` workers in all (`--max-workers`), per namespace at most
// `workers` workers and `tasks` running tasks (`--namespace-max-workers`, `--namespace-max-tasks`,
// or the namespace's own limits), and at most `startRate` worker starts a second.
//
// Beyond a cap an agent waits in its namespace's line, ordered by priority (higher first), then
// by when it lined up, then by name: the order `withQueuePositions` (api/agent-queue.ts) shows readers. A freed worker
// slot goes to the namespace running the fewest workers among those waiting (then to the
// earliest head), so one namespace lining up 500 agents delays another's only until the next
// slot frees, never behind its 500. This class only counts and orders; the reconciler writes
// the Queued condition and the agent workers release idle workers to make room.
//
// In memory, re-observed: holders are rebuilt as the reconciler finds workers and tasks running,
// and the lines are seeded from the agents' Queued conditions (their lastTransitionTime is when
// each lined up), so a restart keeps the order.

import { lineOrder, type Waiter } from '../api/agent-queue.js';
import { parseRefKey } from '../api/meta.js';
import type { NamespaceLimits } from '../api/namespace-limits.js';

export type { Waiter };

export type { NamespaceLimits };

export interface AdmissionLimits {
  /** Workers in all; 0 or absent: no cap. */
  maxWorkers?: number;
  /** Caps of each namespace without limits of its own. */
  namespaceDefaults?: NamespaceLimits;
  /** A namespace's own limits (the embedded home's config file, the cluster home's ConfigMap). */
  limitsFor?: (namespace: string) => NamespaceLimits | undefined;
  /** Worker starts a second (a burst of as many); 0 or absent: no bound. */
  startRate?: number;
}

export type QueueReason = 'WorkerLimit' | 'NamespaceWorkerLimit' | 'NamespaceTaskLimit' | 'StartRate';

export type Decision = { admitted: true } | { admitted: false; reason: QueueReason; message: string; retryMs?: number };

/** The waiters of each namespace, each line sorted when read after a change. */
class Lines {
  private readonly byNs = new Map<string, Map<string, Waiter>>();
  private readonly sortedCache = new Map<string, Waiter[]>();

  get size(): number {
    let n = 0;
    for (const l of this.byNs.values()) n += l.size;
    return n;
  }

  has(key: string, namespace: string): boolean {
    return this.byNs.get(namespace)?.has(key) ?? false;
  }

  /** Joins, or keeps its place (a priority change moves it). */
  add(w: Waiter): void {
    let line = this.byNs.get(w.namespace);
    if (!line) this.byNs.set(w.namespace, (line = new Map<string, Waiter>()));
    const cur = line.get(w.key);
    if (cur && cur.priority === w.priority && cur.since <= w.since) return;
    line.set(w.key, cur && cur.since < w.since ? { ...w, since: cur.since } : w);
    this.sortedCache.delete(w.namespace);
  }

  remove(key: string, namespace: string): boolean {
    const line = this.byNs.get(namespace);
    if (!line?.delete(key)) return false;
    if (!line.size) this.byNs.delete(namespace);
    this.sortedCache.delete(namespace);
    return true;
  }

  namespaces(): string[] {
    return [...this.byNs.keys()];
  }

  sorted(namespace: string): Waiter[] {
    let s = this.sortedCache.get(namespace);
    if (!s) {
      s = [...(this.byNs.get(namespace)?.values() ?? [])].sort(lineOrder);
      this.sortedCache.set(namespace, s);
    }
    return s;
  }
}

const nsOf = (key: string): string => parseRefKey(key).namespace;

export class Admission {
  /** Agents whose worker holds a slot, by key -> namespace. */
  private readonly workers = new Map<string, string>();
  /** Agents whose task runs, by key -> namespace. */
  private readonly tasks = new Map<string, string>();
  private readonly workerLine = new Lines();
  private readonly taskLine = new Lines();
  private tokens: number;
  /** Agents refused a start token, and when they last asked (ms). */
  private readonly tokenWaiters = new Map<string, number>();
  private refilledAt: number;

  constructor(
    readonly limits: AdmissionLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = Math.max(1, limits.startRate ?? 0);
    this.refilledAt = now();
  }

  get maxWorkers(): number {
    return this.limits.maxWorkers ?? 0;
  }

  get usedWorkers(): number {
    return this.workers.size;
  }

  get waiting(): number {
    return this.workerLine.size + this.taskLine.size;
  }

  holdsWorker(key: string): boolean {
    return this.workers.has(key);
  }

  /** Agents holding a worker slot. */
  workerHolders(): string[] {
    return [...this.workers.keys()];
  }

  /**
   * Whether a worker idle in `namespace` should make room: someone waits for a slot every
   * worker holds (--max-workers), or someone of its own namespace waits for the namespace's cap.
   */
  roomWanted(namespace: string): boolean {
    if (!this.workerLine.size) return false;
    if (this.maxWorkers > 0 && this.workers.size >= this.maxWorkers) return true;
    const cap = this.namespaceLimits(namespace).workers ?? 0;
    return cap > 0 && this.workerLine.sorted(namespace).length > 0 && this.countIn(this.workers, namespace) >= cap;
  }

  /** Waiters from stored Queued conditions (after a restart): their places are kept. */
  seed(waiters: { waiter: Waiter; forTask: boolean }[]): void {
    for (const { waiter, forTask } of waiters) (forTask ? this.taskLine : this.workerLine).add(waiter);
  }

  /** Whether the agent may start its worker now; when not, it is (or stays) in line. */
  takeWorker(w: Waiter): Decision {
    if (this.workers.has(w.key)) return { admitted: true };
    this.workerLine.add(w);
    const full = this.namespaceFull(w.namespace);
    if (full) return full;
    const order = this.nextWorkers();
    if (!order.includes(w.key)) return this.allBusy();
    const wait = this.takeToken(w.key, order);
    if (wait > 0)
      return { admitted: false, reason: 'StartRate', message: `waiting to start: at most ${this.limits.startRate} workers start a second`, retryMs: wait };
    this.workerLine.remove(w.key, w.namespace);
    this.workers.set(w.key, w.namespace);
    return { admitted: true };
  }

  /**
   * The wait `takeWorker` would answer now because a cap on workers is reached (its namespace's,
   * or --max-workers), for an agent that holds no slot; nothing is taken or joined. Undefined
   * when no cap is reached (it might go at once: the line, the start rate and idle workers
   * that make room decide that in `takeWorker`).
   */
  capReached(w: Waiter): Decision | undefined {
    if (this.workers.has(w.key)) return undefined;
    return this.namespaceFull(w.namespace) ?? (this.maxWorkers > 0 && this.workers.size >= this.maxWorkers ? this.allBusy() : undefined);
  }

  private namespaceFull(namespace: string): Decision | undefined {
    const cap = this.namespaceLimits(namespace).workers ?? 0;
    if (!(cap > 0 && this.countIn(this.workers, namespace) >= cap)) return undefined;
    return { admitted: false, reason: 'NamespaceWorkerLimit', message: `waiting for a worker: namespace ${namespace} runs ${cap} of ${cap} allowed` };
  }

  private allBusy(): Decision {
    return { admitted: false, reason: 'WorkerLimit', message: `waiting for a worker: all ${this.maxWorkers} allowed (--max-workers) are busy` };
  }

  /** A worker found running (a pod after a restart) holds a slot, whatever the caps. */
  holdWorker(key: string): void {
    this.workerLine.remove(key, nsOf(key));
    this.workers.set(key, nsOf(key));
  }

  /**
   * The agent's worker stopped, or it no longer wants one: its slot or place in line is given up
   * (its task's too). Returns the agents that may now go.
   */
  freeWorker(key: string): string[] {
    const ns = nsOf(key);
    this.tokenWaiters.delete(key);
    const had = this.workers.delete(key) || this.workerLine.remove(key, ns);
    const task = this.freeTask(key);
    return had ? [...new Set([...this.nextWorkers(), ...task])] : task;
  }

  /** Whether the agent's task may be handed to its worker now; when not, it is (or stays) in line. */
  takeTask(w: Waiter): Decision {
    if (this.tasks.has(w.key)) return { admitted: true };
    this.taskLine.add(w);
    const cap = this.namespaceLimits(w.namespace).tasks ?? 0;
    if (cap > 0) {
      const room = cap - this.countIn(this.tasks, w.namespace);
      const ahead = this.taskLine.sorted(w.namespace).findIndex((x) => x.key === w.key);
      if (ahead >= room)
        return { admitted: false, reason: 'NamespaceTaskLimit', message: `waiting to run: namespace ${w.namespace} runs ${cap} of ${cap} tasks allowed` };
    }
    this.taskLine.remove(w.key, w.namespace);
    this.tasks.set(w.key, w.namespace);
    return { admitted: true };
  }

  /** A task found running holds its place among the namespace's running tasks. */
  holdTask(key: string): void {
    this.taskLine.remove(key, nsOf(key));
    this.tasks.set(key, nsOf(key));
  }

  /**
   * The agent's task ended (or it waits for none): returns the agents whose task may now run, and
   * when a worker is wanted, the agent first in line for one (its look releases the idle worker).
   */
  freeTask(key: string): string[] {
    const ns = nsOf(key);
    if (!this.tasks.delete(key) && !this.taskLine.remove(key, ns)) return [];
    const cap = this.namespaceLimits(ns).tasks ?? 0;
    const line = this.taskLine.sorted(ns);
    const room = cap > 0 ? cap - this.countIn(this.tasks, ns) : line.length;
    const next = line.slice(0, Math.max(0, room)).map((w) => w.key);
    return this.roomWanted(ns) ? [...next, ...this.fairOrder(1)] : next;
  }

  /** The agents waiting for a worker that go next, in the order they go (fair between namespaces). */
  nextWorkers(): string[] {
    return this.fairOrder(this.maxWorkers > 0 ? this.maxWorkers - this.workers.size : Number.POSITIVE_INFINITY);
  }

  /** The first `free` agents waiting for a worker, in the order slots go to them. */
  private fairOrder(free: number): string[] {
    const running = new Map<string, number>();
    for (const ns of this.workers.values()) running.set(ns, (running.get(ns) ?? 0) + 1);
    const heads = new Map(this.workerLine.namespaces().map((ns) => [ns, 0]));
    const picked: string[] = [];
    while (picked.length < free) {
      let best: { ns: string; w: Waiter; n: number } | undefined;
      for (const [ns, i] of heads) {
        const w = this.workerLine.sorted(ns)[i];
        const n = running.get(ns) ?? 0;
        const cap = this.namespaceLimits(ns).workers ?? 0;
        if (!w || (cap > 0 && n >= cap)) continue;
        if (!best || n < best.n || (n === best.n && lineOrder(w, best.w) < 0)) best = { ns, w, n };
      }
      if (!best) break;
      picked.push(best.w.key);
      heads.set(best.ns, heads.get(best.ns)! + 1);
      running.set(best.ns, best.n + 1);
    }
    return picked;
  }

  private namespaceLimits(ns: string): NamespaceLimits {
    return { ...this.limits.namespaceDefaults, ...this.limits.limitsFor?.(ns) };
  }

  private countIn(holders: Map<string, string>, ns: string): number {
    let n = 0;
    for (const v of holders.values()) if (v === ns) n++;
    return n;
  }

  /**
   * Takes a start token for `key`; else how long until one is there for it (ms). Tokens go in the
   * fair order as slots do: an agent takes one only when there are enough for those before it
   * that wait for one too (asked lately). First come, a namespace whose many agents ask again
   * each time one of theirs ends took nearly every token, and another namespace's one task
   * waited 5 s to start (docs/admission.md).
   */
  private takeToken(key: string, order: string[]): number {
    const rate = this.limits.startRate ?? 0;
    if (rate <= 0) return 0;
    const now = this.now();
    this.tokens = Math.min(Math.max(1, rate), this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
    // One that asked and then never came back (a bug elsewhere) does not hold the others for ever.
    const stale = Math.max(5_000, 2_000 / rate);
    const ahead = order.slice(0, Math.max(0, order.indexOf(key))).filter((k) => now - (this.tokenWaiters.get(k) ?? -Infinity) < stale).length;
    if (this.tokens >= ahead + 1) {
      this.tokens -= 1;
      this.tokenWaiters.delete(key);
      return 0;
    }
    this.tokenWaiters.set(key, now);
    return Math.ceil(((ahead + 1 - this.tokens) / rate) * 1000);
  }
}
