// The cost breakdown's query on the REST mirror (GET /api/v1/agents/:name/cost; the aggregated
// API's agents/<name>/cost reads the same with its own parameter rules):
// `limit` (the newest N tasks; 0 or absent: all), `events` (each task's events), and `refresh`,
// which komputer-ai's clients send to skip its cache: agentplane sums the events on every
// request, so every answer is fresh and it changes nothing.

import type { CostOptions } from '../api/agent-cost.js';
import { badRequest } from '../api/errors.js';
import { intParam, type Query } from './params.js';

export function costOptions(q: Query): CostOptions {
  const limit = intParam(q, 'limit', { min: 0 });
  const events = flag(q, 'events');
  flag(q, 'refresh');
  return { ...(limit ? { limit } : {}), ...(events ? { events } : {}) };
}

function flag(q: Query, name: string): boolean {
  const v = q[name];
  if (v === undefined) return false;
  if (Array.isArray(v)) throw badRequest(`query parameter "${name}" is given more than once`);
  if (v === 'true' || v === '1' || v === '') return true;
  if (v === 'false' || v === '0') return false;
  throw badRequest(`query parameter "${name}" must be "true" or "false"`, { causes: [{ field: name, message: 'must be "true" or "false"' }] });
}
