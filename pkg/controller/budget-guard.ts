// The budget guard (docs/budgets.md): asked by the model proxy before every model request of an
// agent, it reads the agent's own budget and its namespace's Budgets against what was spent (the
// agents' status, for ended tasks, plus the meter's running figures of their current tasks), and
// decides: forward; forward after a `budget_warning` (once per task and budget, from 80%); end
// the task with an `error` of reason BudgetExceeded (onExceed Stop); or hold the request with the
// agent Paused and a `budget_exceeded` event (onExceed Pause) until a budget raised lets it go,
// or the task is cancelled (its engine gives the request up).
//
// Holding polls the informer's cache (no store reads): a raise is seen within POLL_MS.

import { type Agent, isBusy, PAUSED } from '../api/agent.js';
import {
  addSpend,
  type AgentBudget,
  type BudgetReading,
  type BudgetSpec,
  describeReading,
  readBudget,
  type Spend,
  spendOf,
  WARNING_SHARE,
} from '../api/budget.js';
import { budgetStatus } from '../api/budget-spend.js';
import { isTrue, setCondition } from '../api/condition.js';
import type { BudgetEventPayload, EventDraft, TokenUsage } from '../api/event.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import type { ModelGrant } from '../modelproxy/credentials.js';
import type { BudgetVerdict } from '../modelproxy/proxy.js';
import type { ReportBudgets } from '../modelproxy/reports.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Lister } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';

const POLL_MS = 250;

/** A namespace's Budget as the guard reads it. */
export interface NamespaceBudget {
  name: string;
  spec: BudgetSpec;
}

export interface BudgetGuardDeps {
  agents: Pick<Registry<Agent>, 'updateStatus'>;
  cache: Lister<Agent>;
  /** The namespace's Budgets (none when the kind is not served). */
  budgetsOf?: (namespace: string) => NamespaceBudget[];
  /** The running task's tokens by model so far (the model proxy's meter). */
  usage: { taskModels(ref: ObjectRef, uid: string): Record<string, TokenUsage> | undefined };
  tasks: {
    taskEvent(ref: ObjectRef, uid: string, draft: EventDraft): Promise<unknown>;
    failTask(ref: ObjectRef, uid: string, error: { message: string; reason: string }): Promise<void>;
  };
  metrics: Pick<Metrics, 'budgetSpentTokens' | 'budgetSpentUsd' | 'budgetActions'>;
  logger: Logger;
  now?: () => Date;
  pollMs?: number;
}

/** One budget's reading against the request's agent. */
interface Check {
  scope: 'agent' | 'namespace';
  /** The Budget's name (namespace scope). */
  name?: string;
  onExceed: AgentBudget['onExceed'];
  reading: BudgetReading;
}

type Decision = { kind: 'allow'; warnings: Check[] } | { kind: 'Stop' | 'Pause'; check: Check };

export class BudgetGuard implements ReportBudgets {
  /** Per agent: its current task (`uid:task`) and the budgets that warned in it (`scope:name`). */
  private readonly warned = new Map<string, { task: string; budgets: Set<string> }>();
  private readonly now: () => Date;

  constructor(private readonly d: BudgetGuardDeps) {
    this.now = d.now ?? (() => new Date());
  }

  async admit(grant: ModelGrant, signal: AbortSignal): Promise<BudgetVerdict> {
    let held: Agent | undefined;
    try {
      for (;;) {
        const agent = this.d.cache.get(grant.ref.namespace, grant.ref.name);
        // Only a running task has a budget to keep (an engine's requests between tasks pass).
        if (!agent || agent.metadata.uid !== grant.uid || !isBusy(agent)) return { allow: true };
        const decision = this.decide(agent);
        if (decision.kind === 'allow') {
          // A hold this process did not see end (a restart while paused) is over too.
          if (!held && isTrue(agent.status.conditions, PAUSED)) await this.resume(agent);
          await this.warn(agent, decision.warnings);
          return { allow: true };
        }
        const { check } = decision;
        const message = exceededMessage(check);
        if (decision.kind === 'Stop') {
          this.d.metrics.budgetActions.inc({ namespace: agent.metadata.namespace, scope: check.scope, action: 'stop' });
          await this.d.tasks.failTask(grant.ref, grant.uid, { message, reason: 'BudgetExceeded' });
          return { allow: false, message };
        }
        if (!held) {
          held = agent;
          await this.pause(agent, check, message);
        }
        if (!(await sleep(this.d.pollMs ?? POLL_MS, signal))) return { allow: false, message: 'the request was given up while its task was paused' };
      }
    } finally {
      if (held) await this.resume(held);
    }
  }

  /** Whether any budget applies to the agent (its own, or its namespace's). */
  applies(ref: ObjectRef): boolean {
    return !!this.d.cache.get(ref.namespace, ref.name)?.spec.budget || !!this.d.budgetsOf?.(ref.namespace).length;
  }

  /** The budgets that apply to the agent's running task, read now. */
  checks(agent: Agent): Check[] {
    const { namespace } = agent.metadata;
    const running = (a: Agent): Spend => spendOf(this.d.usage.taskModels(a.metadata, a.metadata.uid));
    const out: Check[] = [];
    const own = agent.spec.budget;
    if (own) {
      const task = running(agent);
      const spent = own.perTask ? task : addSpend({ tokens: agent.status.spend?.tokens ?? 0, costUsd: agent.status.spend?.costUsd ?? 0 }, task);
      const period = own.perTask ? 'task' : 'total';
      this.gauge(namespace, 'agent', agent.metadata.name, period, spent);
      const reading = readBudget(own, spent);
      if (reading) out.push({ scope: 'agent', onExceed: own.onExceed, reading });
    }
    const budgets = this.d.budgetsOf?.(namespace) ?? [];
    if (!budgets.length) return out;
    const now = this.now();
    const agents = this.d.cache.list(namespace);
    for (const b of budgets) {
      const spent = budgetStatus(b.spec, agents, now, running).spent!;
      this.gauge(namespace, 'namespace', b.name, b.spec.period, spent);
      const reading = readBudget(b.spec, spent);
      if (reading) out.push({ scope: 'namespace', name: b.name, onExceed: b.spec.onExceed, reading });
    }
    return out;
  }

  private decide(agent: Agent): Decision {
    const checks = this.checks(agent);
    const exceeded = checks.filter((c) => c.reading.share >= 1);
    // Stop wins over Pause: a budget that ends the task is not held off by one that waits.
    const stop = exceeded.find((c) => c.onExceed === 'Stop');
    if (stop) return { kind: 'Stop', check: stop };
    if (exceeded[0]) return { kind: 'Pause', check: exceeded[0] };
    return { kind: 'allow', warnings: checks.filter((c) => c.reading.share >= WARNING_SHARE) };
  }

  private async warn(agent: Agent, warnings: Check[]): Promise<void> {
    const task = `${agent.metadata.uid}:${agent.spec.task}`;
    let seen = this.warned.get(refKey(agent.metadata));
    if (seen?.task !== task) this.warned.set(refKey(agent.metadata), (seen = { task, budgets: new Set() }));
    for (const c of warnings) {
      const key = `${c.scope}:${c.name ?? ''}`;
      if (seen.budgets.has(key)) continue;
      seen.budgets.add(key);
      this.d.metrics.budgetActions.inc({ namespace: agent.metadata.namespace, scope: c.scope, action: 'warning' });
      const percent = Math.floor(c.reading.share * 100);
      const message = `${budgetName(c)} is ${percent}% spent (${describeReading(c.reading)})`;
      await this.event(agent, { type: 'budget_warning', payload: payload(c, message) });
    }
  }

  /** The task is held: the agent shows Paused, and its stream says why. */
  private async pause(agent: Agent, c: Check, message: string): Promise<void> {
    this.d.metrics.budgetActions.inc({ namespace: agent.metadata.namespace, scope: c.scope, action: 'pause' });
    this.d.logger.info({ namespace: agent.metadata.namespace, name: agent.metadata.name }, message);
    await this.setPaused(agent, true, message);
    await this.event(agent, { type: 'budget_exceeded', payload: payload(c, message) });
  }

  private async resume(agent: Agent): Promise<void> {
    await this.setPaused(agent, false, 'the budget allows the task to go on');
  }

  private async setPaused(agent: Agent, paused: boolean, message: string): Promise<void> {
    const { namespace, name, uid } = agent.metadata;
    try {
      await this.d.agents.updateStatus(namespace, name, (s, a) => {
        if (a.metadata.uid !== uid) return;
        s.conditions = setCondition(s.conditions ?? [], {
          type: PAUSED,
          status: paused ? 'True' : 'False',
          reason: paused ? 'BudgetExceeded' : 'BudgetAllows',
          message,
        });
      });
    } catch (err) {
      // Gone, or storage down: the hold itself goes on (or ends) all the same.
      this.d.logger.warn({ namespace, name, err: String(err) }, 'the Paused condition could not be written');
    }
  }

  private async event(agent: Agent, draft: EventDraft): Promise<void> {
    await this.d.tasks.taskEvent(agent.metadata, agent.metadata.uid, draft).catch((err: unknown) => {
      this.d.logger.warn({ namespace: agent.metadata.namespace, name: agent.metadata.name, err: String(err) }, 'a budget event could not be stored');
    });
  }

  private gauge(namespace: string, scope: string, name: string, period: string, s: Spend): void {
    const labels = { namespace, scope, name, period };
    this.d.metrics.budgetSpentTokens.set(labels, s.tokens);
    this.d.metrics.budgetSpentUsd.set(labels, s.costUsd);
  }

  /** The agent is gone: its warnings and series go. */
  forget(ref: ObjectRef): void {
    this.warned.delete(refKey(ref));
    for (const period of ['task', 'total']) {
      const labels = { namespace: ref.namespace, scope: 'agent', name: ref.name, period };
      this.d.metrics.budgetSpentTokens.remove(labels);
      this.d.metrics.budgetSpentUsd.remove(labels);
    }
  }
}

const budgetName = (c: Check): string => (c.scope === 'agent' ? "the agent's budget" : `namespace Budget "${c.name}"`);

function exceededMessage(c: Check): string {
  const what = `${budgetName(c)} is spent (${describeReading(c.reading)})`;
  return c.onExceed === 'Stop' ? `${what}: the task is stopped` : `${what}: the task is paused until the budget is raised (or the task is cancelled)`;
}

function payload(c: Check, message: string): BudgetEventPayload {
  return {
    scope: c.scope,
    ...(c.name ? { name: c.name } : {}),
    limit: c.reading.limit,
    spent: c.reading.spent,
    max: c.reading.max,
    onExceed: c.onExceed,
    message,
  };
}

/** Waits `ms`; false when `signal` aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
