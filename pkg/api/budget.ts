// Budgets (docs/budgets.md): an agent's own (`spec.budget`) and its namespace's per period (the
// Budget kind), both enforced by the model proxy before every model request. This file holds the
// shapes, their schemas and the pure rules: what a response's tokens cost, what counts as spent,
// and how far along a budget is.

import { nameSchema, namespaceSchema } from './agent-fields.js';
import type { Cause } from './errors.js';
import type { TokenUsage } from './event.js';
import type { Resource } from './meta.js';

export type OnExceed = 'Stop' | 'Pause';
export const ON_EXCEED: readonly OnExceed[] = ['Stop', 'Pause'];

/** An agent's budget: at least one of the limits. */
export interface AgentBudget {
  maxCostUsd?: number;
  maxTokens?: number;
  /** The limits apply to each task on its own; default false: to all of the agent's tasks. */
  perTask?: boolean;
  onExceed: OnExceed;
}

/** What was spent: model tokens (every kind, as metered) and their cost at list prices. */
export interface Spend {
  tokens: number;
  costUsd: number;
}

/** Spend within a period: `start` is its UTC day (YYYY-MM-DD) or month (YYYY-MM). */
export interface PeriodSpend extends Spend {
  start: string;
}

/** An agent's spend in its status: all its tasks, and the current day's and month's (UTC). */
export interface AgentSpend extends Spend {
  day?: PeriodSpend;
  month?: PeriodSpend;
}

/** A budget reaches its warning at this share of a limit. */
export const WARNING_SHARE = 0.8;

const limitDescriptions = {
  maxCostUsd: 'the most the model may cost, in US dollars (tokens priced at the list price of the model each response named)',
  maxTokens: 'the most model tokens (input, output, cache reads and cache writes together)',
  onExceed: '"Stop" ends the task with an error (reason BudgetExceeded); "Pause" holds it (status Paused) until the budget is raised or the task is cancelled',
} as const;

export const agentBudgetSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['onExceed'],
  properties: {
    maxCostUsd: { type: 'number', minimum: 0, description: limitDescriptions.maxCostUsd },
    maxTokens: { type: 'integer', minimum: 0, description: limitDescriptions.maxTokens },
    perTask: { type: 'boolean', description: "true: the limits apply to each task on its own; default false: to all of the agent's tasks together" },
    onExceed: { type: 'string', enum: ON_EXCEED, description: limitDescriptions.onExceed },
  },
  description: 'checked by the model proxy before every model request: a budget_warning event at 80%, the onExceed action at 100% (docs/budgets.md)',
} as const;

const spendProps = {
  tokens: { type: 'integer', minimum: 0 },
  costUsd: { type: 'number', minimum: 0 },
} as const;

const periodSpendSchema = { type: 'object', required: ['start', 'tokens', 'costUsd'], properties: { start: { type: 'string' }, ...spendProps } } as const;

export const agentSpendSchema = {
  type: 'object',
  required: ['tokens', 'costUsd'],
  properties: {
    ...spendProps,
    day: { ...periodSpendSchema, description: 'the current UTC day (start YYYY-MM-DD)' },
    month: { ...periodSpendSchema, description: 'the current UTC month (start YYYY-MM)' },
  },
  description: "model spend of the agent's ended tasks, metered by the model proxy: in all, this UTC day and this UTC month",
} as const;

/** The limits need at least one bound (the schema checks each one's type). */
export function validateBudgetLimits(b: { maxCostUsd?: number; maxTokens?: number } | undefined, field: string): Cause[] {
  if (!b || b.maxCostUsd !== undefined || b.maxTokens !== undefined) return [];
  return [{ field, message: 'must set maxTokens or maxCostUsd (or both)' }];
}

/** US dollars per million tokens, by model family (list prices); cache reads 0.1x, cache writes 1.25x input. */
const PRICES: [RegExp, [number, number]][] = [
  [/opus-4-[5-9]/, [5, 25]],
  [/opus/, [15, 75]],
  [/haiku-4/, [1, 5]],
  [/3-5-haiku|haiku-3-5/, [0.8, 4]],
  [/haiku/, [0.25, 1.25]],
  [/sonnet/, [3, 15]],
];
/** A model of no known family is priced as the dearest, so a cost budget errs on the safe side. */
const UNKNOWN_PRICE: [number, number] = [15, 75];

/** What `usage` of `model` costs at list prices, in US dollars. */
export function priceOf(model: string, u: TokenUsage): number {
  const [input, output] = PRICES.find(([re]) => re.test(model))?.[1] ?? UNKNOWN_PRICE;
  return (u.input_tokens * input + u.output_tokens * output + u.cache_read_input_tokens * input * 0.1 + u.cache_creation_input_tokens * input * 1.25) / 1e6;
}

export const tokensOf = (u: TokenUsage): number => u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

/** The spend of tokens by model (a task's `model_usage`, or the meter's running figures). */
export function spendOf(byModel: Record<string, TokenUsage> | undefined): Spend {
  const s = { tokens: 0, costUsd: 0 };
  for (const [model, u] of Object.entries(byModel ?? {})) {
    s.tokens += tokensOf(u);
    s.costUsd += priceOf(model, u);
  }
  return s;
}

export const addSpend = (a: Spend, b: Spend): Spend => ({ tokens: a.tokens + b.tokens, costUsd: a.costUsd + b.costUsd });

export type Period = 'day' | 'month';
export const PERIODS: readonly Period[] = ['day', 'month'];

/** The UTC period `at` falls in: YYYY-MM-DD or YYYY-MM. */
export const periodStart = (period: Period, at: Date): string => at.toISOString().slice(0, period === 'day' ? 10 : 7);

/** The agent's spend in the period that holds `at` (zero when its record is of an earlier one). */
export function spendIn(spend: AgentSpend | undefined, period: Period, at: Date): Spend {
  const p = spend?.[period];
  return p && p.start === periodStart(period, at) ? { tokens: p.tokens, costUsd: p.costUsd } : { tokens: 0, costUsd: 0 };
}

/** `spend` with a task's spend added, at `at` (periods that ended start again). */
export function addTaskSpend(spend: AgentSpend | undefined, task: Spend, at: Date): AgentSpend {
  const out: AgentSpend = addSpend(spend ?? { tokens: 0, costUsd: 0 }, task);
  for (const period of PERIODS) out[period] = { start: periodStart(period, at), ...addSpend(spendIn(spend, period, at), task) };
  return out;
}

/** How far along a budget is: its most used limit. */
export interface BudgetReading {
  limit: 'maxTokens' | 'maxCostUsd';
  spent: number;
  max: number;
  /** spent / max; 1 for a limit of 0 (reached before anything is spent: a freeze). */
  share: number;
}

export function readBudget(b: { maxCostUsd?: number; maxTokens?: number }, spent: Spend): BudgetReading | undefined {
  const readings: BudgetReading[] = [];
  const share = (s: number, m: number): number => (m > 0 ? s / m : 1);
  if (b.maxTokens !== undefined) readings.push({ limit: 'maxTokens', spent: spent.tokens, max: b.maxTokens, share: share(spent.tokens, b.maxTokens) });
  if (b.maxCostUsd !== undefined) readings.push({ limit: 'maxCostUsd', spent: spent.costUsd, max: b.maxCostUsd, share: share(spent.costUsd, b.maxCostUsd) });
  return readings.sort((x, y) => y.share - x.share)[0];
}

/** "maxTokens 1200 of 1000" / "maxCostUsd $0.0123 of $0.0100". */
export function describeReading(r: BudgetReading): string {
  return r.limit === 'maxTokens' ? `${r.spent} of ${r.max} tokens` : `$${r.spent.toFixed(4)} of $${r.max.toFixed(4)}`;
}

export const BUDGET_KIND = 'Budget';

/** A namespace's Budget: every agent of the namespace together, per UTC period. */
export interface BudgetSpec {
  period: Period;
  maxCostUsd?: number;
  maxTokens?: number;
  onExceed: OnExceed;
}

/** Set on reads, never stored: the period's spend, from the agents' status and their running tasks. */
export interface BudgetStatus {
  periodStart?: string;
  spent?: Spend;
  /** The most used limit's share, 0 to 1 (more once exceeded). */
  used?: number;
  /** Each agent's part of `spent`, most first (agents that spent nothing left out). */
  agents?: ({ name: string } & Spend)[];
}

export type Budget = Resource<BudgetSpec, BudgetStatus>;

const periodSchema = { type: 'string', enum: PERIODS, description: '"day" or "month" (UTC): the spend counts from the start of the current one' } as const;

const budgetFields = {
  period: periodSchema,
  maxCostUsd: { type: 'number', minimum: 0, description: `${limitDescriptions.maxCostUsd}, by all the namespace's agents in the period` },
  maxTokens: { type: 'integer', minimum: 0, description: `${limitDescriptions.maxTokens}, by all the namespace's agents in the period` },
  onExceed: { type: 'string', enum: ON_EXCEED, description: `${limitDescriptions.onExceed}; applies to every task of the namespace that asks the model` },
} as const;

export const budgetSpecSchema = {
  $id: 'BudgetSpec',
  type: 'object',
  additionalProperties: false,
  required: ['period', 'onExceed'],
  properties: budgetFields,
} as const;

const spendStatusProps = { ...spendProps } as const;

export const budgetStatusSchema = {
  $id: 'BudgetStatus',
  type: 'object',
  properties: {
    periodStart: { type: 'string', description: 'the current period: its UTC day (YYYY-MM-DD) or month (YYYY-MM)' },
    spent: { type: 'object', required: ['tokens', 'costUsd'], properties: spendStatusProps, description: "the namespace's agents' spend in the period" },
    used: { type: 'number', minimum: 0, description: "the most used limit's share: 0.8 warns, 1 acts" },
    agents: {
      type: 'array',
      items: { type: 'object', required: ['name', 'tokens', 'costUsd'], properties: { name: { type: 'string' }, ...spendStatusProps } },
      description: "each agent's part of spent, most first",
    },
  },
  description: 'computed on every read from the agents (never stored)',
} as const;

export const budgetRequestSchema = {
  $id: 'BudgetRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'period', 'onExceed'],
  properties: {
    name: nameSchema,
    namespace: namespaceSchema,
    ...budgetFields,
  },
} as const;

export const budgetPatchRequestSchema = {
  $id: 'BudgetPatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  // `null` for a limit (which removes it) is taken by the service before the schema is applied.
  properties: budgetFields,
} as const;

/** POST /api/v1/budgets. */
export interface BudgetRequest extends BudgetSpec {
  name: string;
  namespace?: string;
}

/** PATCH /api/v1/budgets/:name: the fields given change; a limit set to null is removed. */
export type BudgetPatchRequest = Partial<Omit<BudgetSpec, 'maxCostUsd' | 'maxTokens'>> & { maxCostUsd?: number | null; maxTokens?: number | null };

export interface BudgetResponse extends BudgetSpec {
  name: string;
  namespace: string;
  createdAt: string;
  periodStart: string;
  spent: Spend;
  used: number;
  agents: ({ name: string } & Spend)[];
}

export function toBudgetResponse(b: Budget): BudgetResponse {
  return {
    name: b.metadata.name,
    namespace: b.metadata.namespace,
    createdAt: b.metadata.creationTimestamp,
    ...b.spec,
    periodStart: b.status.periodStart ?? '',
    spent: b.status.spent ?? { tokens: 0, costUsd: 0 },
    used: b.status.used ?? 0,
    agents: b.status.agents ?? [],
  };
}
