// agentplane benchmarks: `make bench` (node dist/bench/run.js). Prints figures; asserts nothing.
// Everything runs on loopback against the scripted model, with bounded loops and a watchdog.

import { cpus, platform, arch } from 'node:os';
import { apiLoadBudgetMs, apiLoadFigures, printApiLoad } from './api-load.js';
import { type EngineFigures, engineFigures, type PoolFigures, poolFigures } from './engine.js';
import { IDLE_AGENTS, IDLE_MEMORY_HEADER, type IdleMemoryFigures, idleMemoryBudgetMs, idleMemoryFigures, idleMemoryRows } from './idle-memory.js';
import { IDLE_PAUSE_MS, idleTaskLatency, wakeLatency, warmUp, type LatencySamples } from './latency.js';
import { listFigures, listRows } from './lists.js';
import { nativeFigures, printNative } from './native.js';
import { proxyOverhead } from './proxy.js';
import { fmt, percentile, summarize, table } from './stats.js';
import { API_KEY, startBenchServer, type BenchServer } from './support.js';
import { eventsPerSecond, type WireRun, wireFigures } from './wire.js';
import { burstFigures, printBurst } from './write-burst.js';
import type { FirehoseSpec } from '../test/support/firehose.js';

const AGENT = 'bench';
const ROUNDS = 20;
const WAKE_ROUNDS = 10;
/** Events at wire speed (bench/wire.ts): as fast as they go, then at a fixed rate; rounds alternate the two paths. */
const THROUGHPUT: FirehoseSpec = { count: 20_000, rate: 0, size: 100 };
const LATENCY: FirehoseSpec = { count: 3_000, rate: 1_000, size: 100 };
const WIRE_ROUNDS = Number(process.env.BENCH_WIRE_ROUNDS ?? 3);
const PROXY_ROUNDS = 500;
const ENGINE_ROUNDS = 10;
const WARM_POOL = 2;
/** 10 minutes for the other sections; the idle-memory section's own bound (it grows with its agents) on top when it runs. */
const IDLE_SECTION = !process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'idle-memory';
const API_LOAD_SECTION = !process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'api-load';
const WATCHDOG_MS =
  (process.env.BENCH_ONLY === 'idle-memory' || process.env.BENCH_ONLY === 'api-load' ? 0 : 600_000) +
  (IDLE_SECTION ? idleMemoryBudgetMs(IDLE_AGENTS) + 60_000 : 0) +
  (API_LOAD_SECTION ? apiLoadBudgetMs() + 60_000 : 0);

/** Latency figures, each printed as one section. Add wake latency here when it exists. */
const latencyBenches: { title: string; run: (b: BenchServer) => Promise<LatencySamples[]> }[] = [
  {
    title: `Task to an idle agent (${ROUNDS} rounds, "@say n", one model turn, ${IDLE_PAUSE_MS} ms pause after idle)`,
    run: (b) => idleTaskLatency(b, AGENT, ROUNDS),
  },
  {
    title: `Wake: task to a sleeping agent (${WAKE_ROUNDS} rounds; its worker process starts each time)`,
    run: (b) => wakeLatency(b, 'sleeper', WAKE_ROUNDS),
  },
];

async function main(): Promise<void> {
  const cpu = cpus();
  console.log('agentplane benchmarks');
  console.log(`node ${process.version}, ${platform()}/${arch()}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown'})`);
  console.log('loopback only; scripted model; client in the server process\n');

  if (process.env.BENCH_ONLY === 'native') {
    printNative(await nativeFigures((s) => console.error(`native: ${s}`)));
    return;
  }
  if (process.env.BENCH_ONLY === 'api-load') {
    printApiLoad(await apiLoadFigures((s) => console.error(`api-load: ${s}`)));
    return;
  }
  if (process.env.BENCH_ONLY === 'write-burst') {
    printBurst(await burstFigures((s) => console.error(`write-burst: ${s}`)));
    return;
  }
  if (process.env.BENCH_ONLY === 'idle-memory') {
    printIdleMemory(await idleMemoryFigures((s) => console.error(`idle-memory: ${s}`)));
    return;
  }
  if (process.env.BENCH_ONLY === 'lists') {
    printLists(await listFigures((s) => console.error(`lists: ${s}`)));
    return;
  }
  if (process.env.BENCH_ONLY === 'wire') {
    printWire(await wireFigures({ throughput: THROUGHPUT, latency: LATENCY, rounds: WIRE_ROUNDS }));
    return;
  }
  if (process.env.BENCH_ONLY === 'engine') {
    const f = await runEngineFigures();
    printEngine(f.engine);
    return printPool(f.pool);
  }
  const b = await startBenchServer();
  try {
    await warmUp(b, AGENT);

    for (const bench of latencyBenches) {
      printLatency(bench.title, await bench.run(b));
    }

    printProxyOverhead(await proxyOverhead(b, API_KEY, PROXY_ROUNDS));
  } finally {
    await b.close();
  }

  // BENCH_ONLY=wire runs this section alone; it brings its own server and stand-in worker.
  printWire(await wireFigures({ throughput: THROUGHPUT, latency: LATENCY, rounds: WIRE_ROUNDS }));

  // BENCH_ONLY=engine runs this section alone; it brings its own servers.
  const engine = await runEngineFigures();
  printEngine(engine.engine);
  printPool(engine.pool);

  // BENCH_ONLY=lists runs this section alone; it brings its own server.
  printLists(await listFigures((s) => console.error(`lists: ${s}`)));

  // BENCH_ONLY=idle-memory runs this section alone; it brings its own server, in its own process.
  printIdleMemory(await idleMemoryFigures((s) => console.error(`idle-memory: ${s}`)));

  // BENCH_ONLY=native runs this section alone; it brings its own control plane.
  printNative(await nativeFigures((s) => console.error(`native: ${s}`)));

  // BENCH_ONLY=api-load runs this section alone; it brings its own server and control plane.
  printApiLoad(await apiLoadFigures((s) => console.error(`api-load: ${s}`)));

  // BENCH_ONLY=write-burst runs this section alone; it brings its own servers.
  printBurst(await burstFigures((s) => console.error(`write-burst: ${s}`)));
}

function printLists(rows: Parameters<typeof listRows>[0]): void {
  console.log('Lists: a page of agents from a namespace of 10 000 (baseline: the same page from a namespace of 500, same server, same run)');
  console.log(table(['ms', 'n', 'p50', 'p99', 'baseline p50', 'baseline p99'], listRows(rows)) + '\n');
}

function printIdleMemory(f: IdleMemoryFigures): void {
  console.log(
    `Idle agents: memory of the server's process tree (PSS, MiB; as it is after ${f.settleS} s quiet, then after a full GC in the server) and the server's JS heap in use after that GC; ${f.agents} agents that each ran "@say hi" and were released after --idle-timeout ${f.idleTimeoutS} (--max-workers ${f.maxWorkers}); per 1,000: what the step added, per 1,000 agents`,
  );
  console.log(table(IDLE_MEMORY_HEADER, idleMemoryRows(f)));
  console.log(`tasks that did not complete: ${f.failedTasks.length}${f.failedTasks.length ? ` (${f.failedTasks.slice(0, 3).join('; ')})` : ''}\n`);
}

function printLatency(title: string, sets: LatencySamples[]): void {
  console.log(title);
  const rows = sets.map(({ label, ms }) => {
    const s = summarize(ms);
    return [label, fmt(s.min), fmt(s.median), fmt(s.p90), fmt(s.max)];
  });
  console.log(table(['ms', 'min', 'median', 'p90', 'max'], rows) + '\n');
}

/**
 * Servers: idle release off (warm figures) and after 3 s (the released baseline); then, with the
 * released-baseline server still up as the pool's baseline, one with a warm pool.
 */
async function runEngineFigures(): Promise<{ engine: EngineFigures; pool: PoolFigures }> {
  const log = (s: string): void => console.error(`engine: ${s}`);
  const short = await startBenchServer({ idleTimeoutMs: 3_000 });
  try {
    let engine: EngineFigures;
    const warm = await startBenchServer({ idleTimeoutMs: 0 });
    try {
      engine = await engineFigures(warm, short, ENGINE_ROUNDS, log);
    } finally {
      await warm.close();
    }
    const pooled = await startBenchServer({ idleTimeoutMs: 3_000, warmPool: WARM_POOL });
    try {
      return { engine, pool: await poolFigures(pooled, short, WARM_POOL, ENGINE_ROUNDS, log) };
    } finally {
      await pooled.close();
    }
  } finally {
    await short.close();
  }
}

function printPool(f: PoolFigures): void {
  console.log(
    `Warm pool (--warm-pool ${f.size}): POST → the task's first model request (${f.create.pool.length} rounds each, interleaved; pool full before each)`,
  );
  const rows = [
    ['create, warm pool (new agent takes a slot)', f.create.pool],
    ['baseline: create, no pool (worker and engine start)', f.create.plain],
    ['wake a released agent, warm pool (starts cold)', f.wake.pool],
    ['baseline: wake a released agent, no pool', f.wake.plain],
  ].map(([label, ms]) => {
    const s = summarize(ms as number[]);
    return [label as string, fmt(s.min), fmt(s.median), fmt(s.p90), fmt(s.max)];
  });
  console.log(table(['ms', 'min', 'median', 'p90', 'max'], rows));
  console.log(`creates that took a ready slot: ${f.hits} of ${f.create.pool.length}\n`);
}

function printEngine(f: EngineFigures): void {
  console.log(`Engine: POST → the task's first model request, as the scripted model saw it (${ENGINE_ROUNDS} rounds each)`);
  const rows = [
    ["warm engine (the agent's session stays up)", f.firstRequest.warm],
    ['baseline: new engine resuming the session (model switched)', f.firstRequest.cold],
    ['released idle agent: worker and engine start', f.firstRequest.released],
  ].map(([label, ms]) => {
    const s = summarize(ms as number[]);
    return [label as string, fmt(s.min), fmt(s.median), fmt(s.p90), fmt(s.max)];
  });
  console.log(table(['ms', 'min', 'median', 'p90', 'max'], rows) + '\n');
  console.log('Engine: CPU per trivial task ("@say", one model turn), worker and engine processes together');
  console.log(
    table(
      ['', 'CPU ms per task'],
      [
        ['warm engine', fmt(f.cpuPerTask.warm, 0)],
        ['baseline: new engine per task', fmt(f.cpuPerTask.cold, 0)],
      ],
    ) + '\n',
  );
  console.log(`Engine: trivial tasks per second, ${f.tasksPerSecond.agents} agents at once (a task each, ${ENGINE_ROUNDS / 2} rounds)`);
  console.log(
    table(
      ['', 'tasks/s'],
      [
        ['warm engines', fmt(f.tasksPerSecond.warm, 1)],
        ['baseline: new engine per task', fmt(f.tasksPerSecond.cold, 1)],
      ],
    ) + '\n',
  );
  console.log(`Memory per idle agent (RSS of its processes, mean over ${f.memory.warmAgents} agents)`);
  console.log(
    table(
      ['', 'MB per agent', 'processes'],
      [
        ['idle, warm (worker and engine kept)', fmt(f.memory.warmMb, 1), String(f.memory.warmProcesses)],
        ['idle, released (after --idle-timeout)', fmt(f.memory.releasedMb, 1), String(f.memory.releasedProcesses)],
      ],
    ) + '\n',
  );
}

function printProxyOverhead({ direct, proxied }: { direct: number[]; proxied: number[] }): void {
  console.log(`Model proxy overhead (${PROXY_ROUNDS} streamed "@say" requests each way, interleaved, one keep-alive connection)`);
  const p = (ms: number[], q: number): number =>
    percentile(
      [...ms].sort((a, b) => a - b),
      q,
    );
  const rows = [
    ['direct to the scripted model', direct],
    ['through the model proxy', proxied],
  ].map(([label, ms]) => [label as string, fmt(p(ms as number[], 50), 3), fmt(p(ms as number[], 99), 3)]);
  rows.push(['model proxy overhead', fmt(p(proxied, 50) - p(direct, 50), 3), fmt(p(proxied, 99) - p(direct, 99), 3)]);
  console.log(table(['ms', 'p50', 'p99'], rows) + '\n');
}

function printWire({ throughput, latency }: { throughput: WireRun[][]; latency: WireRun[][] }): void {
  const median = (xs: number[]): number =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const paths = [0, 1].map((i) => throughput[0][i].label);
  console.log(
    `Events at wire speed: worker process -> control channel -> store -> WebSocket client, beside the same producer through a bare ws relay (${throughput.length} rounds, alternating; ${THROUGHPUT.size}-character text events)`,
  );
  const tput = paths.map((label, i) => {
    const runs = throughput.map((r) => r[i]);
    const rates = runs.map(eventsPerSecond);
    const cpu = median(runs.map((r) => r.cpuMicros));
    return [
      label,
      fmt(median(rates), 0),
      fmt(Math.min(...rates), 0),
      fmt(Math.max(...rates), 0),
      fmt(median(runs.map((r) => r.bytes / 1e6 / r.seconds)), 2),
      fmt(cpu, 1),
    ];
  });
  console.log(`Throughput, ${THROUGHPUT.count.toLocaleString('en-US')} events as fast as the producer's socket takes them`);
  console.log(table(['path', 'events/s (median)', 'min', 'max', 'MB/s', 'CPU µs/event'], tput));
  const ratio = median(throughput.map((r) => eventsPerSecond(r[0]) / eventsPerSecond(r[1])));
  console.log(`ratio agentplane / bare relay (median of rounds): ${fmt(ratio, 2)}\n`);

  console.log(
    `Latency, ${LATENCY.count.toLocaleString('en-US')} events at ${LATENCY.rate.toLocaleString('en-US')}/s: sent by the producer -> received by the client`,
  );
  const lat = paths.map((label, i) => {
    const ms = latency.flatMap((r) => r[i].latencies).sort((a, b) => a - b);
    const cpu = median(latency.map((r) => r[i].cpuMicros));
    return [label, fmt(percentile(ms, 50), 2), fmt(percentile(ms, 90), 2), fmt(percentile(ms, 99), 2), fmt(ms[ms.length - 1], 2), fmt(cpu, 1)];
  });
  console.log(table(['ms', 'p50', 'p90', 'p99', 'max', 'CPU µs/event'], lat));
  const p99 = (i: number): number =>
    percentile(
      latency.flatMap((r) => r[i].latencies).sort((a, b) => a - b),
      99,
    );
  console.log(`p99 agentplane / bare relay: ${fmt(p99(0) / p99(1), 2)}`);
  console.log('agentplane path: hub -> agent controller -> EventLog.append (SQLite group commit) -> fan-out -> ws send');
  console.log('CPU µs/event: this process (server or relay, plus the client) during the run; the producer is a separate process\n');
}

const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 1000} s; giving up`);
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

main().then(
  () => process.exit(0),
  (err) => {
    console.error('bench failed:', err);
    process.exit(1);
  },
);
