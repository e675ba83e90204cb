// Where counted tokens go: the Prometheus counter (by namespace, agent, model and kind) and the
// running total of the agent's current task, which the agent controller takes when the task ends
// and adds to its task_completed payload. Also when the task began, for the retry deadline, and
// how long its first model request took to come (a warm engine's figure of merit).

import { type ObjectRef, refKey } from '../api/meta.js';
import type { Metrics, WorkerStart } from '../observability/metrics.js';
import type { ModelGrant } from './credentials.js';
import { addUsage, emptyUsage, type TokenUsage, USAGE_KINDS } from './usage.js';

interface TaskTotals {
  uid: string;
  startedAt: number;
  /** The task's own retry deadline after `startedAt` (its template's); undefined: the proxy's. */
  deadlineMs?: number;
  usage: TokenUsage;
  /** The same tokens by the model each response named. */
  byModel: Map<string, TokenUsage>;
  counted: boolean;
  /** The task's first model request was timed. */
  reached?: boolean;
  /** The worker start the task waited for, if it did (create or wake). */
  workerStart?: WorkerStart;
}

export interface UsageMeterOptions {
  /** A template's model task deadline in ms (`modelTaskDeadlineSeconds`); undefined: the proxy's. */
  deadlineMs?: (template: string) => number | undefined;
  /** Reads the clock (tests). */
  now?: () => number;
}

export class UsageMeter {
  private readonly tasks = new Map<string, TaskTotals>();
  private readonly now: () => number;

  constructor(
    private readonly metrics: Pick<Metrics, 'modelTokens'> & Partial<Pick<Metrics, 'firstModelRequest' | 'agentFirstModelRequest'>>,
    private readonly o: UsageMeterOptions = {},
  ) {
    this.now = o.now ?? Date.now;
  }

  record(grant: ModelGrant, model: string, usage: TokenUsage): void {
    const labels = { namespace: grant.ref.namespace, agent: grant.ref.name, model };
    for (const [kind, key] of Object.entries(USAGE_KINDS)) if (usage[key] > 0) this.metrics.modelTokens.inc({ ...labels, kind }, usage[key]);
    const t = this.totals(grant.ref, grant.uid);
    addUsage(t.usage, usage);
    let perModel = t.byModel.get(model);
    if (!perModel) t.byModel.set(model, (perModel = emptyUsage()));
    addUsage(perModel, usage);
    t.counted = true;
  }

  /**
   * A task of the agent was handed to its worker: its totals start at zero, and its retry
   * deadline (its template's, else the proxy's) runs from now. `workerStart`: the task waited for
   * its worker to start (a create or a wake), timed to its first model request too.
   */
  taskStarted(ref: ObjectRef, uid: string, template?: string, workerStart?: WorkerStart): void {
    const deadlineMs = template === undefined ? undefined : this.o.deadlineMs?.(template);
    this.tasks.set(refKey(ref), {
      uid,
      startedAt: this.now(),
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
      usage: emptyUsage(),
      byModel: new Map(),
      counted: false,
      ...(workerStart ? { workerStart } : {}),
    });
  }

  /** A model request of the agent's task came: the first one's delay since the hand-over is observed. */
  modelRequested(ref: ObjectRef, uid: string): void {
    const t = this.tasks.get(refKey(ref));
    if (!t || t.uid !== uid || t.reached) return;
    t.reached = true;
    const now = this.now();
    this.metrics.firstModelRequest?.observe((now - t.startedAt) / 1000);
    if (t.workerStart) this.metrics.agentFirstModelRequest?.observe({ start: t.workerStart.start }, (now - t.workerStart.at) / 1000);
  }

  /**
   * The current task's tokens by model so far (undefined when none were counted); read before
   * `taskEnded`, which forgets them.
   */
  taskModels(ref: ObjectRef, uid: string): Record<string, TokenUsage> | undefined {
    const t = this.tasks.get(refKey(ref));
    return t && t.uid === uid && t.counted ? Object.fromEntries([...t.byModel].map(([m, u]) => [m, { ...u }])) : undefined;
  }

  /** The task ended: its totals (undefined when no response was counted), and forget them. */
  taskEnded(ref: ObjectRef, uid: string): TokenUsage | undefined {
    const key = refKey(ref);
    const t = this.tasks.get(key);
    this.tasks.delete(key);
    return t && t.uid === uid && t.counted ? t.usage : undefined;
  }

  /** When the agent's current task began (for its retry deadline); undefined when unknown. */
  taskStartedAt(ref: ObjectRef, uid: string): number | undefined {
    const t = this.tasks.get(refKey(ref));
    return t && t.uid === uid ? t.startedAt : undefined;
  }

  /** The agent's current task's own retry deadline after it began (its template's); undefined: the proxy's. */
  taskDeadlineMs(ref: ObjectRef, uid: string): number | undefined {
    const t = this.tasks.get(refKey(ref));
    return t && t.uid === uid ? t.deadlineMs : undefined;
  }

  forget(ref: ObjectRef): void {
    this.tasks.delete(refKey(ref));
  }

  /**
   * The agent was deleted: its token series go from /metrics, so agents that come and go do not
   * grow the server's memory and every scrape for good. (A re-created agent of the name starts
   * its counters again from zero, which Prometheus reads as a counter reset.) The counter's own
   * series are read, once per deletion, rather than kept twice.
   */
  async dropSeries(ref: ObjectRef): Promise<void> {
    const { values } = await this.metrics.modelTokens.get();
    for (const { labels } of values) if (labels.namespace === ref.namespace && labels.agent === ref.name) this.metrics.modelTokens.remove(labels);
  }

  private totals(ref: ObjectRef, uid: string): TaskTotals {
    const key = refKey(ref);
    let t = this.tasks.get(key);
    if (!t || t.uid !== uid) {
      t = { uid, startedAt: this.now(), usage: emptyUsage(), byModel: new Map(), counted: false };
      this.tasks.set(key, t);
    }
    return t;
  }
}
