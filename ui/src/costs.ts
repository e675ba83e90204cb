// Cost and last activity per agent, from its events (the agent object carries neither): the
// sum of each task's own cost (the cost_usd of the event that ended it: completed, cancelled or
// failed) and the newest event's time. Each refresh reads only the events
// newer than those already counted (newest page first, paging back with `before`), so a poll
// costs one small request per agent.

import { api, q } from './api';
import type { AgentEvent } from './types';

export interface CostPoint {
  time: number;
  cost: number;
}

export interface AgentCosts {
  /** Highest seq counted. */
  seq: number;
  cost: number;
  lastActivity: string | undefined;
  /** One point per task that spent something, oldest first. */
  points: CostPoint[];
}

const PAGE = 200;
const TASK_ENDS = new Set(['task_completed', 'task_cancelled', 'error']);

/** What the task an event ended spent; 0 for any other event. */
export const taskCost = (e: AgentEvent): number => (TASK_ENDS.has(e.type) && typeof e.payload.cost_usd === 'number' ? e.payload.cost_usd : 0);
const known = new Map<string, AgentCosts>();

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

export const costsOf = (namespace: string, name: string): AgentCosts | undefined => known.get(keyOf(namespace, name));

export async function refreshCosts(namespace: string, name: string): Promise<AgentCosts> {
  const prev = known.get(keyOf(namespace, name)) ?? { seq: 0, cost: 0, lastActivity: undefined, points: [] };
  const fresh: AgentEvent[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await api<{ events: AgentEvent[] }>('GET', `/api/v1/agents/${encodeURIComponent(name)}/events${q({ namespace, limit: PAGE, before })}`);
    const newer = page.events.filter((e) => e.seq > prev.seq);
    fresh.unshift(...newer);
    if (page.events.length < PAGE || newer.length < page.events.length || !page.events.length) break;
    before = page.events[0]!.seq;
  }
  const next: AgentCosts = { ...prev, points: [...prev.points] };
  for (const e of fresh) {
    next.seq = Math.max(next.seq, e.seq);
    next.lastActivity = e.timestamp;
    const cost = taskCost(e);
    if (cost > 0) {
      next.cost += cost;
      next.points.push({ time: Date.parse(e.timestamp), cost });
    }
  }
  known.set(keyOf(namespace, name), next);
  return next;
}

export const usd = (n: number | undefined): string => (n === undefined ? '—' : `$${n.toFixed(n < 1 ? 4 : 2)}`);

export function ago(iso: string | undefined): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}
