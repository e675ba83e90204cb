// `make load`'s fairness phase (issue 31): is admission fair between namespaces? Namespace fair-a
// submits LOAD_FAIR_A tasks at once (an agent each, each with its task), then namespace fair-b
// submits one; the figure is how long B's task takes to start: from B's POST to its
// `task_started` event at a subscriber that was listening before. Goal <= 2 s. Also printed:
// what B's GET showed right after the POST (its status, and its queue position when the server
// has them) and how far A had got when B started.

import { performance } from 'node:perf_hooks';
import { agentObject, aggregated, type AgentState, fetchClient, isQueued, letters, listStates, stateOf, taskEnded } from './api-probe.js';
import { fmt } from './stats.js';
import { forEachConcurrently, LiveSocket } from './support.js';

export const FAIR_A = Number(process.env.LOAD_FAIR_A ?? 500);
const GOAL_MS = 2_000;

export interface FairnessFigures {
  a: number;
  /** A's submits: seconds to send them all, and those not answered 2xx (0: no answer). */
  submitSeconds: number;
  refused: Map<number, number>;
  /** B: POST -> task_started at its subscriber, ms; undefined when it did not start within the timeout. */
  bStartMs?: number;
  timeoutMs: number;
  /** B as a GET showed it right after its POST. */
  bAfterSubmit?: AgentState;
  /** A's agents when B started (or timed out): started (a task status, not Queued) and ended. */
  aStarted: number;
  aEnded: number;
}

export async function fairness(url: string, timeoutMs: number): Promise<FairnessFigures> {
  const c = fetchClient(url);
  const must = async (p: Promise<{ status: number; body: string }>, what: string): Promise<string> => {
    const res = await p;
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.body.slice(0, 300)}`);
    return res.body;
  };
  // B's agent exists asleep (never ran) with a subscriber from its first event.
  await must(c.call('POST', aggregated('fair-b'), agentObject('b', '@say ready', true)), 'create fair-b/b');
  const ws = new LiveSocket(`${url.replace(/^http/, 'ws')}/api/v1/agents/b/ws?namespace=fair-b&since=0`);
  await ws.opened();
  const f: FairnessFigures = { a: FAIR_A, submitSeconds: 0, refused: new Map(), timeoutMs, aStarted: 0, aEnded: 0 };
  const t0 = performance.now();
  await forEachConcurrently(FAIR_A, 32, async (i) => {
    const res = await c.call('POST', '/api/v1/agents?namespace=fair-a', { name: letters(i), instructions: '@say hi' }).catch(() => ({ status: 0, body: '' }));
    if (res.status >= 300 || res.status === 0) f.refused.set(res.status, (f.refused.get(res.status) ?? 0) + 1);
  });
  f.submitSeconds = (performance.now() - t0) / 1000;
  const started = ws.until((ev) => ev.type === 'task_started', timeoutMs);
  const tB = performance.now();
  await must(c.call('POST', '/api/v1/agents?namespace=fair-b', { name: 'b', instructions: '@say hi' }), 'task to fair-b/b');
  f.bAfterSubmit = stateOf(JSON.parse(await must(c.call('GET', '/api/v1/agents/b?namespace=fair-b'), 'GET fair-b/b')) as Record<string, unknown>);
  try {
    f.bStartMs = (await started).at - tB;
  } catch {
    // not within the timeout: printed as such
  }
  ws.close();
  const a = await listStates(c, '/api/v1/agents?namespace=fair-a');
  f.aStarted = a.filter((x) => x.taskStatus !== '' && !isQueued(x)).length;
  f.aEnded = a.filter(taskEnded).length;
  return f;
}

export function printFairness(f: FairnessFigures): void {
  const b = f.bAfterSubmit;
  const refused = f.refused.size ? [...f.refused].map(([s, n]) => `${n} x ${s || 'no answer'}`).join(', ') : 'none';
  console.log(`\nFairness: namespace fair-a submitted ${f.a} tasks (in ${fmt(f.submitSeconds, 1)} s; not 2xx: ${refused}), then fair-b one`);
  console.log(
    `fair-b's task: POST -> task_started at its subscriber ${f.bStartMs === undefined ? `> ${fmt(f.timeoutMs / 1000, 0)} s (did not start)` : `${fmt(f.bStartMs, 0)} ms`}` +
      `; goal <= ${GOAL_MS / 1000} s: ${f.bStartMs !== undefined && f.bStartMs <= GOAL_MS ? 'met' : 'NOT met'}`,
  );
  console.log(
    `fair-b right after its POST: status ${b?.phase || '-'}, taskStatus ${b?.taskStatus || '-'}, queue position ${b?.position ?? 'n/a'}; ` +
      `fair-a when it started: ${f.aStarted} started (not Queued), ${f.aEnded} ended of ${f.a}\n`,
  );
}
