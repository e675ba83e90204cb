// Writes in turn (pkg/server/write-turns.ts; `make bench` section "writes in turn",
// BENCH_ONLY=write-burst): what another namespace's create and a GET wait while one client
// submits a burst of tasks. `serve --demo` in its own process on loopback with N agents asleep
// (`BENCH_BURST_AGENTS`, default 1,000), one WebSocket subscriber each; then N tasks submitted 32
// at a time through the REST mirror while, in the same client, an agent is created in another
// namespace every 100 ms (asleep, no worker) and one agent is read every 20 ms, each waiting for
// its previous one. Twice, same run: `--writes-per-turn 0` (every write runs as it arrives, the
// baseline) and the default. Prints figures; asserts nothing.

import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { admission, agentObject, aggregated, fetchClient, letters, loopBuckets, loopQuantile, startDemoServer } from './api-probe.js';
import { fmt, percentile, table } from './stats.js';
import { forEachConcurrently } from './support.js';

const AGENTS = Number(process.env.BENCH_BURST_AGENTS ?? 1000);
const SUBMIT_CONCURRENCY = 32;
const CREATE_GAP_MS = 100;
const GET_GAP_MS = 20;
/** The probes go on this long after the last submission is answered (what the burst set off). */
const AFTER_MS = 3_000;

export interface BurstRun {
  label: string;
  /** From the first submission to the last answer. */
  submitSeconds: number;
  creates: number[];
  gets: number[];
  /** The server's event-loop delay over the burst, ms. */
  loopP99?: number;
  /** How long writes waited for their turn (agentplane_http_write_wait_seconds), p99 ms. */
  waitP99?: number;
}

/** p99 in ms of a Prometheus histogram between two /metrics texts. */
const histogramP99 = (metric: string, before: string, after: string): number | undefined =>
  loopQuantile(loopBuckets(before, metric), loopBuckets(after, metric), 0.99);

async function burst(label: string, flags: string[], log: (s: string) => void): Promise<BurstRun> {
  const { url, child, dir } = await startDemoServer([...admission().args, ...flags], { prefix: 'agentplane-burst-' });
  const c = fetchClient(url);
  const sockets: WebSocket[] = [];
  try {
    const must = async (p: Promise<{ status: number; body: string }>): Promise<void> => {
      const r = await p;
      if (r.status >= 300) throw new Error(`${label}: ${r.status} ${r.body.slice(0, 300)}`);
    };
    const names = Array.from({ length: AGENTS }, (_, i) => `w-${letters(i)}`);
    log(`${label}: ${AGENTS} agents asleep, a subscriber each`);
    await forEachConcurrently(AGENTS, 16, async (i) => must(c.call('POST', aggregated('default'), agentObject(names[i], '@say ready', true))));
    await forEachConcurrently(AGENTS, 16, async (i) => {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v1/agents/${names[i]}/ws?since=0`);
      sockets.push(ws);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
    });
    await sleep(2_000);
    const metricsBefore = (await c.call('GET', '/metrics', undefined, 'text/plain')).body;
    const creates: number[] = [];
    const gets: number[] = [];
    let probing = true;
    const timed = async (into: number[], gap: number, call: (k: number) => Promise<void>): Promise<void> => {
      for (let k = 0; probing; k++) {
        const t = performance.now();
        await call(k);
        into.push(performance.now() - t);
        await sleep(gap);
      }
    };
    const probes = Promise.all([
      timed(creates, CREATE_GAP_MS, (k) => must(c.call('POST', aggregated('bench-other'), agentObject(`o-${letters(k)}`, '@say hi', true)))),
      timed(gets, GET_GAP_MS, () => must(c.call('GET', `/api/v1/agents/${names[0]}`))),
    ]);
    log(`${label}: ${AGENTS} tasks, ${SUBMIT_CONCURRENCY} at a time`);
    const t0 = performance.now();
    await forEachConcurrently(AGENTS, SUBMIT_CONCURRENCY, async (i) =>
      must(c.call('POST', '/api/v1/agents', { name: names[i], instructions: `@say done ${i}` })),
    );
    const submitSeconds = (performance.now() - t0) / 1000;
    await sleep(AFTER_MS);
    probing = false;
    await probes;
    const metricsAfter = (await c.call('GET', '/metrics', undefined, 'text/plain')).body;
    const loopP99 = histogramP99('agentplane_event_loop_delay_seconds', metricsBefore, metricsAfter);
    const waitP99 = histogramP99('agentplane_http_write_wait_seconds', metricsBefore, metricsAfter);
    return {
      label,
      submitSeconds,
      creates: creates.sort((a, b) => a - b),
      gets: gets.sort((a, b) => a - b),
      ...(loopP99 !== undefined ? { loopP99 } : {}),
      ...(waitP99 !== undefined ? { waitP99 } : {}),
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The baseline (no turns), then the default. */
export async function burstFigures(log: (s: string) => void): Promise<BurstRun[]> {
  return [await burst('--writes-per-turn 0 (baseline)', ['--writes-per-turn', '0'], log), await burst('default (4 a turn)', [], log)];
}

export function printBurst(runs: BurstRun[]): void {
  console.log(
    `Writes in turn: ${AGENTS} tasks submitted ${SUBMIT_CONCURRENCY} at a time beside ${AGENTS} subscribers; meanwhile a create in another namespace every ${CREATE_GAP_MS} ms and a GET every ${GET_GAP_MS} ms (ms)`,
  );
  const q = (xs: number[], p: number): string => (xs.length ? fmt(percentile(xs, p), 1) : '-');
  const rows = runs.map((r) => [
    r.label,
    fmt(r.submitSeconds, 2),
    String(r.creates.length),
    q(r.creates, 50),
    q(r.creates, 90),
    q(r.creates, 99),
    q(r.creates, 100),
    q(r.gets, 50),
    q(r.gets, 99),
    q(r.gets, 100),
    r.loopP99 === undefined ? 'n/a' : fmt(r.loopP99, 1),
    r.waitP99 === undefined ? 'n/a' : fmt(r.waitP99, 1),
  ]);
  console.log(
    table(['server', 'burst s', 'creates', 'create p50', 'p90', 'p99', 'max', 'GET p50', 'p99', 'max', 'loop delay p99', 'write wait p99'], rows) + '\n',
  );
}
