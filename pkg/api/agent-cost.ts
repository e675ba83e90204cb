// GET /api/v1/agents/:name/cost: an agent's spending per task and per model, summed from its
// event stream. A task's end event carries its cost (`cost_usd`), its metered tokens (`usage`)
// and those tokens by model (`model_usage`); nothing else is read, so the figures are the
// events' own. Field names follow the peer project's cost breakdown, so its clients read it.

import type { AgentEvent, TokenUsage } from './event.js';
import { isTerminal } from './event.js';

/** Tokens in the peer's names. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreateTokens: number;
}

export interface ModelCost extends TokenCounts {
  model: string;
  /** The share of the tasks' costs this model's tokens account for (see `shareOf`). */
  costUSD: number;
  /** Tasks that used the model. */
  taskCount: number;
}

export type TaskOutcome = 'completed' | 'cancelled' | 'error' | 'running';

export interface TaskCost extends TokenCounts {
  /** Position among the agent's tasks, oldest first, from 0 (the peer's `index`). */
  index: number;
  /** The agent's task number. */
  task: number;
  outcome: TaskOutcome;
  startedAt: string;
  completedAt?: string;
  /** The task's instructions, cut to INSTRUCTION_PREVIEW characters. */
  instruction: string;
  costUSD: number;
  durationMs: number;
  turns: number;
  models: ModelCost[];
  eventCount: number;
  /** The task's events, with `?events=true`. */
  events?: AgentEvent[];
}

export interface AgentCostResponse extends TokenCounts {
  agent: string;
  namespace: string;
  /** Every task's cost, also when `limit` keeps fewer in `tasks`. */
  totalCost: number;
  taskCount: number;
  models: ModelCost[];
  tasks: TaskCost[];
}

export const INSTRUCTION_PREVIEW = 200;
/** With `?events=true`, only the newest this many tasks are returned (each with its events). */
export const COST_EVENTS_MAX_TASKS = 50;
/** Unknown model: a cost whose tokens were not metered by model (older events). */
export const UNKNOWN_MODEL = 'unknown';

const zero = (): TokenCounts => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreateTokens: 0 });

const counts = (u: Partial<TokenUsage> | undefined): TokenCounts => ({
  inputTokens: num(u?.input_tokens),
  outputTokens: num(u?.output_tokens),
  cacheReadTokens: num(u?.cache_read_input_tokens),
  cacheCreateTokens: num(u?.cache_creation_input_tokens),
});

function add(to: TokenCounts, from: TokenCounts): void {
  to.inputTokens += from.inputTokens;
  to.outputTokens += from.outputTokens;
  to.cacheReadTokens += from.cacheReadTokens;
  to.cacheCreateTokens += from.cacheCreateTokens;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * A token count weighted by price. Every Claude model prices its token kinds in the same ratio
 * (output 5x input, cache reads 0.1x, cache writes 1.25x), so a task's cost splits over its
 * models by these weights without knowing any model's price.
 */
const weight = (t: TokenCounts): number => t.inputTokens + 5 * t.outputTokens + 0.1 * t.cacheReadTokens + 1.25 * t.cacheCreateTokens;

/** The task's tokens by model: `model_usage`, else `usage` under UNKNOWN_MODEL. */
function modelsOf(payload: Record<string, unknown>): Map<string, TokenCounts> {
  const out = new Map<string, TokenCounts>();
  const byModel = payload.model_usage;
  if (byModel && typeof byModel === 'object' && !Array.isArray(byModel)) {
    for (const [model, u] of Object.entries(byModel as Record<string, Partial<TokenUsage>>)) out.set(model, counts(u));
  } else if (payload.usage && typeof payload.usage === 'object') {
    out.set(UNKNOWN_MODEL, counts(payload.usage));
  }
  return out;
}

/** Each model's share of a task's cost, by price weight (evenly when nothing weighs). */
function shareOf(cost: number, models: Map<string, TokenCounts>): ModelCost[] {
  if (!models.size && cost > 0) models.set(UNKNOWN_MODEL, zero());
  const total = [...models.values()].reduce((s, t) => s + weight(t), 0);
  return [...models].map(([model, t]) => ({ model, ...t, costUSD: total > 0 ? (cost * weight(t)) / total : cost / models.size, taskCount: 1 }));
}

function newTask(ev: AgentEvent, index: number): TaskCost {
  return {
    index,
    task: ev.task,
    outcome: 'running',
    startedAt: ev.timestamp,
    instruction: '',
    costUSD: 0,
    durationMs: 0,
    turns: 0,
    ...zero(),
    models: [],
    eventCount: 0,
  };
}

/** Folds one event into its task. */
function fold(t: TaskCost, ev: AgentEvent): void {
  t.eventCount++;
  const p = (ev.payload ?? {}) as unknown as Record<string, unknown>;
  if (ev.type === 'task_started' && typeof p.instructions === 'string') {
    t.startedAt = ev.timestamp;
    t.instruction = p.instructions.length > INSTRUCTION_PREVIEW ? `${p.instructions.slice(0, INSTRUCTION_PREVIEW)}…` : p.instructions;
  }
  if (!isTerminal(ev.type)) return;
  t.outcome = ev.type === 'task_completed' ? 'completed' : ev.type === 'task_cancelled' ? 'cancelled' : 'error';
  t.completedAt = ev.timestamp;
  // Read from any end event: a cancelled or failed task's end may carry what it spent too.
  t.costUSD = num(p.cost_usd);
  t.durationMs = Math.round(num(p.duration_ms));
  t.turns = Math.round(num(p.turns));
  const models = modelsOf(p);
  Object.assign(t, zero());
  for (const c of models.values()) add(t, c);
  t.models = shareOf(t.costUSD, models);
}

export interface CostOptions {
  /** Keep only the newest `limit` tasks in `tasks` (0 or undefined: all); totals cover all. */
  limit?: number;
  /** Include each returned task's events (then at most COST_EVENTS_MAX_TASKS tasks). */
  events?: boolean;
}

/** The cost breakdown of an agent from its events (any order; read by seq). */
export function costBreakdown(agent: string, namespace: string, events: readonly AgentEvent[], opts: CostOptions = {}): AgentCostResponse {
  const byTask = new Map<number, TaskCost>();
  const eventsOf = new Map<number, AgentEvent[]>();
  for (const ev of [...events].sort((a, b) => a.seq - b.seq)) {
    let t = byTask.get(ev.task);
    if (!t) byTask.set(ev.task, (t = newTask(ev, byTask.size)));
    fold(t, ev);
    if (opts.events) eventsOf.set(ev.task, [...(eventsOf.get(ev.task) ?? []), ev]);
  }
  const tasks = [...byTask.values()];
  const totals = zero();
  const models = new Map<string, ModelCost>();
  for (const t of tasks) {
    add(totals, t);
    for (const m of t.models) {
      const sum = models.get(m.model) ?? { model: m.model, ...zero(), costUSD: 0, taskCount: 0 };
      add(sum, m);
      sum.costUSD += m.costUSD;
      sum.taskCount++;
      models.set(m.model, sum);
    }
  }
  let keep = opts.limit ? opts.limit : tasks.length;
  if (opts.events) keep = Math.min(keep, COST_EVENTS_MAX_TASKS);
  const shown = tasks.slice(Math.max(0, tasks.length - keep)).map((t) => (opts.events ? { ...t, events: eventsOf.get(t.task) ?? [] } : t));
  return {
    agent,
    namespace,
    totalCost: tasks.reduce((s, t) => s + t.costUSD, 0),
    taskCount: tasks.length,
    ...totals,
    models: [...models.values()].sort((a, b) => b.costUSD - a.costUSD || a.model.localeCompare(b.model)),
    tasks: shown,
  };
}

const tokenProps = {
  inputTokens: { type: 'integer', minimum: 0 },
  outputTokens: { type: 'integer', minimum: 0 },
  cacheReadTokens: { type: 'integer', minimum: 0 },
  cacheCreateTokens: { type: 'integer', minimum: 0 },
} as const;

const modelCostSchema = {
  type: 'object',
  required: ['model', 'costUSD', 'taskCount', ...Object.keys(tokenProps)],
  properties: { model: { type: 'string' }, costUSD: { type: 'number', minimum: 0 }, taskCount: { type: 'integer', minimum: 0 }, ...tokenProps },
} as const;

export const agentCostResponseSchema = {
  $id: 'AgentCostResponse',
  type: 'object',
  required: ['agent', 'namespace', 'totalCost', 'taskCount', 'models', 'tasks', ...Object.keys(tokenProps)],
  properties: {
    agent: { type: 'string' },
    namespace: { type: 'string' },
    totalCost: { type: 'number', minimum: 0, description: 'US dollars over every task, whatever `limit` keeps' },
    taskCount: { type: 'integer', minimum: 0 },
    ...tokenProps,
    models: {
      type: 'array',
      items: modelCostSchema,
      description: 'per model, most expensive first; a task with several models splits its cost by their tokens, weighted by price',
    },
    tasks: {
      type: 'array',
      description: 'per task, oldest first',
      items: {
        type: 'object',
        required: [
          'index',
          'task',
          'outcome',
          'startedAt',
          'instruction',
          'costUSD',
          'durationMs',
          'turns',
          'models',
          'eventCount',
          ...Object.keys(tokenProps),
        ],
        properties: {
          index: { type: 'integer', minimum: 0 },
          task: { type: 'integer', minimum: 1 },
          outcome: { type: 'string', enum: ['completed', 'cancelled', 'error', 'running'] },
          startedAt: { type: 'string', format: 'date-time' },
          completedAt: { type: 'string', format: 'date-time' },
          instruction: { type: 'string' },
          costUSD: { type: 'number', minimum: 0 },
          durationMs: { type: 'integer', minimum: 0 },
          turns: { type: 'integer', minimum: 0 },
          ...tokenProps,
          models: { type: 'array', items: modelCostSchema },
          eventCount: { type: 'integer', minimum: 0 },
          events: { type: 'array', items: { type: 'object' }, description: 'with ?events=true' },
        },
      },
    },
  },
} as const;
