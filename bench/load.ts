// `make load` (node dist/bench/load.js): many agents running tasks at once, watched by many
// WebSocket subscribers, on one embedded server (`serve --demo`: the scripted model, real
// workers) in its own process on loopback. Checks that every subscriber got every event of its
// agent in order with nothing missing and that no request got a 5xx; prints delivery latency,
// 5xx count, memory (PSS of the server and its workers) and how long the workers take to end
// once the agents sleep, beside a baseline of one agent measured the same way in the same run.
// Then (issue 31) the API while the agents start beside a quiet window before them (GET, creates
// without a task, a Table of 200, the server's event-loop delay: bench/api-probe.ts), and a
// fairness phase: namespace A submits LOAD_FAIR_A tasks at once, then namespace B one, and the
// time until B's task_started reaches a subscriber (bench/load-fairness.ts). Asserts the
// correctness figures (exit 1 on a miss); bounded. The server gets the admission flags of
// bench/api-probe.ts (ADMISSION_FLAGS, BENCH_ADMISSION_FLAGS).
//
// LOAD_AGENTS (default 200, up to 1000), LOAD_SUBSCRIBERS (default 1000, spread over the agents),
// LOAD_FAIR_A (default 500; 0 skips the fairness phase), LOAD_TIMEOUT_S (default 600: each wait),
// LOAD_SERVER_NODE_ARGS (Node's flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p": the
// profile is written when the server stops; `node dist/bench/loop-profile.js <file>` summarizes it).

import { readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { fmt, percentile, table } from './stats.js';
import { forEachConcurrently } from './support.js';
import {
  admission,
  describeAdmission,
  fetchClient,
  letters,
  listStates,
  prepareProbe,
  printProbe,
  type ProbePaths,
  probeWindow,
  startDemoServer,
  taskEnded,
  type AgentState,
  type Window,
  aggregated,
} from './api-probe.js';
import { fairness, FAIR_A, printFairness } from './load-fairness.js';
import { processTree, treeMemory } from '../test/support/server-process.js';

const AGENTS = Number(process.env.LOAD_AGENTS ?? 200);
const SUBSCRIBERS = Number(process.env.LOAD_SUBSCRIBERS ?? 1000);
const TIMEOUT_MS = Number(process.env.LOAD_TIMEOUT_S ?? 600) * 1000;
/** The Table of the API figures: a namespace of this many agents asleep. */
const TABLE_OF = 200;
const CONCURRENCY = 32;
// A task with a tool call and a reply: task_started, tool_call, tool_result, text, task_completed.
const TASK = (i: number): string => `@bash echo load-${i}\n@say done ${i}`;

interface Figures {
  agents: number;
  subscribers: number;
  events: number;
  delivered: number;
  /** Events all subscribers should have got: each its agent's. */
  expected: number;
  missing: number;
  outOfOrder: number;
  fiveXx: number;
  /** GET/PATCH requests repeated because their pooled connection had just been closed as idle. */
  staleRetries: number;
  latencies: number[];
  memory: { before: number; peak: number; after: number };
  /** From all agents asleep to their last worker process gone. */
  stopSeconds: number;
  seconds: number;
  /** The API figures while the tasks ran (the load run only). */
  api?: Window;
}

/** Worker processes under the server (sandbox, worker, engine): their command lines name them. */
function workerProcesses(pid: number): number {
  return processTree(pid).filter(({ pid: p }) => {
    try {
      return /agentplane-worker|claude-agent-sdk/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  }).length;
}

type Api = (method: string, path: string, body?: unknown) => Promise<any>;

/** The REST client of a run: counts 5xx answers and retries a GET/PATCH on a just-closed idle connection. */
function restClient(url: string): { api: Api; counts: { fiveXx: number; staleRetries: number } } {
  const counts = { fiveXx: 0, staleRetries: 0 };
  const api: Api = async (method, path, body) => {
    const init = { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) };
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, init);
    } catch (err) {
      // A pooled keep-alive connection the server closed as idle just as fetch reused it (the
      // client's expiry timer runs late on a saturated machine): a browser retries such a
      // request on a new connection; so do we, for the requests that are safe to repeat.
      if (method === 'POST' || (err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
      counts.staleRetries++;
      res = await fetch(`${url}${path}`, init);
    }
    if (res.status >= 500) counts.fiveXx++;
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  return { api, counts };
}

interface Subscriber {
  agent: number;
  seqs: number[];
  latencies: number[];
  ws: WebSocket;
}

/** `n` sockets spread over the agents, each from the agent's first event. */
async function subscribe(url: string, names: string[], n: number, counts: { fiveXx: number }): Promise<Subscriber[]> {
  const received: Subscriber[] = [];
  await forEachConcurrently(n, CONCURRENCY, async (i) => {
    const agent = i % names.length;
    const sub: Subscriber = { agent, seqs: [], latencies: [], ws: new WebSocket(`${url.replace('http', 'ws')}/api/v1/agents/${names[agent]}/ws?since=0`) };
    sub.ws.on('message', (d) => {
      const ev = JSON.parse((d as Buffer).toString()) as { seq: number; timestamp: string };
      sub.seqs.push(ev.seq);
      sub.latencies.push(Date.now() - Date.parse(ev.timestamp));
    });
    received.push(sub);
    await new Promise<void>((resolve, reject) => {
      sub.ws.once('open', () => resolve());
      sub.ws.once('unexpected-response', (_req, res) => {
        if ((res.statusCode ?? 0) >= 500) counts.fiveXx++;
        reject(new Error(`subscriber ${i}: HTTP ${res.statusCode}`));
      });
      sub.ws.once('error', reject);
    });
  });
  return received;
}

/**
 * One run: `agents` agents created asleep without a task (no worker), `subscribers` sockets, a
 * task each (a worker and an engine start), then asleep again. `probe`: the API figures while the
 * tasks run.
 */
async function run(url: string, pid: number, prefix: string, agents: number, subscribers: number, probe?: ProbePaths): Promise<Figures> {
  const { api, counts } = restClient(url);
  const names = Array.from({ length: agents }, (_, i) => `${prefix}-${letters(i)}`);
  // The agents exist (asleep, never ran) before anyone subscribes, so subscribers see every event from seq 1.
  await forEachConcurrently(agents, CONCURRENCY, async (i) => {
    await api('POST', aggregated('default'), {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Agent',
      metadata: { name: names[i] },
      spec: { instructions: '@say ready', lifecycle: 'Sleep', task: 0 },
    });
  });
  /** Puts every agent to sleep and waits for their workers to end; the seconds that took. */
  const sleepAll = async (): Promise<number> => {
    const t = Date.now();
    await forEachConcurrently(agents, CONCURRENCY, async (i) => void (await api('PATCH', `/api/v1/agents/${names[i]}`, { lifecycle: 'Sleep' })));
    await waitAll(url, names, (a) => a.phase === 'Sleeping');
    const deadline = Date.now() + TIMEOUT_MS;
    while (workerProcesses(pid) > 0) {
      if (Date.now() > deadline) throw new Error(`worker processes still run ${TIMEOUT_MS / 1000} s after every agent slept`);
      await sleep(250);
    }
    return (Date.now() - t) / 1000;
  };

  const memBefore = treeMemory(pid);
  let peak = memBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, treeMemory(pid))), 1000);
  const received = await subscribe(url, names, subscribers, counts);
  const t0 = Date.now();
  let tasksDone = false;
  const probing = probe && probeWindow(fetchClient(url), probe, () => tasksDone, performance.now() + TIMEOUT_MS);
  await forEachConcurrently(agents, CONCURRENCY, async (i) => void (await api('POST', '/api/v1/agents', { name: names[i], instructions: TASK(i) })));
  await waitAll(url, names, taskEnded);
  tasksDone = true;
  const seconds = (Date.now() - t0) / 1000;
  const apiWindow = await probing;
  // What each agent's history holds: the truth every subscriber is held to.
  const truth: number[][] = new Array<number[]>(agents);
  await forEachConcurrently(agents, CONCURRENCY, async (i) => {
    truth[i] = ((await api('GET', `/api/v1/agents/${names[i]}/events?limit=200`)).events as { seq: number }[]).map((e) => e.seq);
  });
  await sleep(500);
  clearInterval(sampler);
  let missing = 0;
  let outOfOrder = 0;
  let delivered = 0;
  let expected = 0;
  for (const sub of received) {
    sub.ws.close();
    const want = truth[sub.agent];
    const got = new Set(sub.seqs);
    delivered += sub.seqs.length;
    expected += want.length;
    missing += want.filter((s) => !got.has(s)).length;
    for (let k = 1; k < sub.seqs.length; k++) if (sub.seqs[k] <= sub.seqs[k - 1]) outOfOrder++;
  }
  // Memory once the agents sleep again and their workers have ended (a moment for the sockets to go).
  const stopSeconds = await sleepAll();
  await sleep(2000);
  return {
    agents,
    subscribers,
    events: truth.reduce((n, t) => n + t.length, 0),
    delivered,
    expected,
    missing,
    outOfOrder,
    fiveXx: counts.fiveXx,
    staleRetries: counts.staleRetries,
    latencies: received.flatMap((s) => s.latencies).sort((a, b) => a - b),
    memory: { before: memBefore, peak, after: treeMemory(pid) },
    stopSeconds,
    seconds,
    ...(apiWindow ? { api: apiWindow } : {}),
  };
}

/** Waits until `pred` holds for every one of `names` (lists of the default namespace every 500 ms). */
async function waitAll(url: string, names: string[], pred: (a: AgentState) => boolean): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  const c = fetchClient(url);
  let nextLog = Date.now() + 30_000;
  for (;;) {
    const states = new Map((await listStates(c, '/api/v1/agents?namespace=default')).map((s) => [s.name, s]));
    const pending = names.filter((n) => !states.has(n) || !pred(states.get(n)!));
    if (!pending.length) return;
    if (Date.now() > nextLog) {
      console.error(`load: ${names.length - pending.length} of ${names.length} agents there`);
      nextLog = Date.now() + 30_000;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pending.length} agents (${pending.slice(0, 5).join(', ')}...)`);
    await sleep(500);
  }
}

function printRuns(base: Figures, load: Figures, perAgent: number): void {
  const row = (what: string, f: (x: Figures) => string): string[] => [what, f(base), f(load)];
  const ms = (p: number) => (x: Figures) => (x.latencies.length ? fmt(percentile(x.latencies, p), 0) : '-');
  console.log(
    table(
      ['', `baseline (1 agent, ${perAgent} subscribers)`, `load (${AGENTS} agents, ${SUBSCRIBERS} subscribers)`],
      [
        row('events (in history)', (x) => String(x.events)),
        row('events delivered / expected', (x) => `${x.delivered} / ${x.expected}`),
        row('missing / out of order', (x) => `${x.missing} / ${x.outOfOrder}`),
        row('5xx answers', (x) => String(x.fiveXx)),
        row('requests retried on a closed idle connection', (x) => String(x.staleRetries)),
        row('delivery latency p50 (ms)', ms(50)),
        row('delivery latency p99 (ms)', ms(99)),
        row('max lag (ms)', (x) => (x.latencies.length ? fmt(x.latencies.at(-1)!, 0) : '-')),
        row('tasks done in (s)', (x) => fmt(x.seconds, 1)),
        row('memory (PSS) of server+workers before (MiB)', (x) => fmt(x.memory.before, 0)),
        row('memory (PSS) peak (MiB)', (x) => fmt(x.memory.peak, 0)),
        row('memory (PSS) after all sleep (MiB)', (x) => fmt(x.memory.after, 0)),
        row('all asleep -> no worker process (s)', (x) => fmt(x.stopSeconds, 1)),
      ],
    ),
  );
}

async function main(): Promise<void> {
  const perAgent = Math.max(1, Math.round(SUBSCRIBERS / AGENTS));
  const adm = admission();
  console.log(`agentplane load: ${AGENTS} agents, ${SUBSCRIBERS} WebSocket subscribers (${perAgent} per agent), one embedded server (--demo), loopback`);
  console.log(describeAdmission(adm));
  const nodeArgs = (process.env.LOAD_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const { url, child, dir, killTree } = await startDemoServer(adm.args, { nodeArgs });
  const watchdog = setTimeout(() => {
    console.error('load: watchdog fired');
    killTree();
    process.exit(2);
  }, TIMEOUT_MS * 4);
  const log = (s: string): void => console.error(`load: ${s}`);
  try {
    const c = fetchClient(url);
    const probe: ProbePaths = {
      get: '/api/v1/agents/probe?namespace=bench-get',
      table: aggregated('bench-table'),
      create: aggregated('bench-create'),
      createPrefix: 'q',
      metrics: { client: c, path: '/metrics' },
    };
    log(`API probe: one agent to GET, ${TABLE_OF} agents asleep for the Table; then a quiet window`);
    await prepareProbe(c, probe.get, TABLE_OF);
    // Its worker would stay up until the idle timeout; the runs wait for no worker to be left.
    const slept = await c.call('PATCH', probe.get, { lifecycle: 'Sleep' });
    if (slept.status !== 200) throw new Error(`PATCH probe: ${slept.status} ${slept.body}`);
    const quiet = await probeWindow(c, probe, () => true, performance.now() + TIMEOUT_MS);
    log('baseline: 1 agent');
    const base = await run(url, child.pid!, 'base', 1, perAgent);
    log(`load: ${AGENTS} agents`);
    const load = await run(url, child.pid!, 'load', AGENTS, SUBSCRIBERS, { ...probe, createPrefix: 'l' });
    printRuns(base, load, perAgent);
    printProbe(`\nAPI while the ${AGENTS} agents' tasks ran, beside a quiet window before them`, quiet, load.api!, TABLE_OF);
    if (FAIR_A > 0) {
      log(`fairness: namespace fair-a submits ${FAIR_A} tasks, then fair-b one`);
      printFairness(await fairness(url, TIMEOUT_MS));
    }
    const bad = [base, load].filter((x) => x.missing || x.outOfOrder || x.fiveXx || x.delivered !== x.expected);
    if (bad.length) {
      console.error('load: FAILED: a subscriber missed events, got them out of order, or a request got a 5xx');
      process.exitCode = 1;
    }
  } finally {
    clearTimeout(watchdog);
    child.kill('SIGTERM');
    // With many agents still queued the server's shutdown may take a while: at most 30 s.
    await Promise.race([new Promise((r) => child.once('exit', r)), sleep(30_000)]);
    killTree();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
