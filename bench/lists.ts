// Lists that scale (`make bench`, the "lists" section; BENCH_ONLY=lists): a page of 500 agents out
// of a namespace of 10,000, through both APIs of one embedded server, beside the same page from a
// namespace that holds only 500 (one page, nothing to skip) measured in the same run. Agents are
// created asleep with no task (`task: 0`), so no worker starts and the figures are the API's.
// Prints figures; asserts nothing.

import { performance } from 'node:perf_hooks';
import { percentile } from './stats.js';
import { letters } from './api-probe.js';
import { forEachConcurrently, startBenchServer } from './support.js';

const BIG = 10_000;
const PAGE = 500;
const ROUNDS = 30;
const CONCURRENCY = 8;

export interface ListRow {
  label: string;
  ms: number[];
  baseline: number[];
}

/** Creates the agents, then times each kind of page; `log` prints progress. */
export async function listFigures(log: (s: string) => void): Promise<ListRow[]> {
  const b = await startBenchServer();
  const base = b.server.url;
  const agents = (ns: string): string => `${base}/apis/agentplane.io/v1alpha1/namespaces/${ns}/agents`;
  try {
    for (const [ns, n] of [
      ['small', PAGE],
      ['big', BIG],
    ] as const) {
      log(`creating ${n} agents in ${ns}`);
      await forEachConcurrently(n, CONCURRENCY, async (i) => {
        const body = {
          apiVersion: 'agentplane.io/v1alpha1',
          kind: 'Agent',
          metadata: { name: letters(i) },
          spec: { instructions: '@say hi', lifecycle: 'Sleep', task: 0 },
        };
        const res = await fetch(agents(ns), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        if (res.status !== 201) throw new Error(`create ${ns}/${letters(i)}: ${res.status} ${await res.text()}`);
      });
    }
    const timed = async (url: string, want: number): Promise<{ ms: number; cont?: string }> => {
      const t0 = performance.now();
      const res = await fetch(url);
      // The REST mirror answers {agents, continue}, the aggregated API an AgentList.
      const body = (await res.json()) as { items?: unknown[]; agents?: unknown[]; metadata?: { continue?: string }; continue?: string };
      const ms = performance.now() - t0;
      const n = (body.items ?? body.agents)?.length;
      if (res.status !== 200 || n !== want) throw new Error(`GET ${url}: ${res.status}, ${n} items`);
      return { ms, cont: body.metadata?.continue ?? body.continue };
    };
    const rounds = async (url: (ns: string) => Promise<string>): Promise<{ big: number[]; small: number[] }> => {
      const big: number[] = [];
      const small: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        big.push((await timed(await url('big'), PAGE)).ms);
        small.push((await timed(await url('small'), PAGE)).ms);
      }
      return { big, small };
    };
    // A page from the middle: the continue token after the first 10 pages (20 for 10,000).
    const middle = async (first: (ns: string) => string, ns: string): Promise<string> => {
      if (ns === 'small') return first(ns);
      let url = first(ns);
      for (let i = 0; i < 10; i++) url = `${first(ns)}&continue=${encodeURIComponent((await timed(url, PAGE)).cont!)}`;
      return url;
    };
    log('timing pages');
    const restFirst = (ns: string): string => `${base}/api/v1/agents?namespace=${ns}&limit=${PAGE}`;
    const aggFirst = (ns: string): string => `${agents(ns)}?limit=${PAGE}`;
    const rest = await rounds(async (ns) => restFirst(ns));
    const agg = await rounds(async (ns) => aggFirst(ns));
    const aggMiddle = await rounds((ns) => middle(aggFirst, ns));
    return [
      { label: `REST mirror: first page of ${PAGE} of ${BIG}`, ms: rest.big, baseline: rest.small },
      { label: `aggregated API: first page of ${PAGE} of ${BIG}`, ms: agg.big, baseline: agg.small },
      { label: `aggregated API: 11th page (continue) of ${BIG}`, ms: aggMiddle.big, baseline: aggMiddle.small },
    ];
  } finally {
    await b.close();
  }
}

export function listRows(rows: ListRow[]): string[][] {
  const p = (ms: number[], q: number): number =>
    percentile(
      [...ms].sort((a, b) => a - b),
      q,
    );
  return rows.map((r) => [r.label, String(r.ms.length), ...[p(r.ms, 50), p(r.ms, 99), p(r.baseline, 50), p(r.baseline, 99)].map((n) => n.toFixed(2))]);
}
