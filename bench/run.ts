// agentplane benchmarks: `make bench` (node dist/bench/run.js). Prints figures; asserts nothing.
// Everything runs on loopback against the scripted model, with bounded loops and a watchdog.

import { cpus, platform, arch } from 'node:os';
import { type EngineFigures, engineFigures } from './engine.js';
import { IDLE_PAUSE_MS, idleTaskLatency, wakeLatency, warmUp, type LatencySamples } from './latency.js';
import { nativeFigures, printNative } from './native.js';
import { proxyOverhead } from './proxy.js';
import { fmt, percentile, summarize, table } from './stats.js';
import { API_KEY, startBenchServer, type BenchServer } from './support.js';
import { agentplaneThroughput, bareThroughput, mbPerSecond, perSecond, type Throughput } from './throughput.js';

const AGENT = 'bench';
const ROUNDS = 20;
const WAKE_ROUNDS = 10;
const EVENTS = 20_000;
const PROXY_ROUNDS = 500;
const ENGINE_ROUNDS = 10;
const WATCHDOG_MS = 600_000;

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
  if (process.env.BENCH_ONLY === 'engine') return printEngine(await runEngineFigures());
  const b = await startBenchServer();
  try {
    await warmUp(b, AGENT);

    for (const bench of latencyBenches) {
      printLatency(bench.title, await bench.run(b));
    }

    printProxyOverhead(await proxyOverhead(b, API_KEY, PROXY_ROUNDS));

    const { result: ap, sample } = await agentplaneThroughput(b, AGENT, EVENTS);
    const bare = await bareThroughput(sample, EVENTS);
    printThroughput(sample, ap, bare);
  } finally {
    await b.close();
  }

  // BENCH_ONLY=engine runs this section alone; it brings its own servers.
  printEngine(await runEngineFigures());

  // BENCH_ONLY=native runs this section alone; it brings its own control plane.
  printNative(await nativeFigures((s) => console.error(`native: ${s}`)));
}

function printLatency(title: string, sets: LatencySamples[]): void {
  console.log(title);
  const rows = sets.map(({ label, ms }) => {
    const s = summarize(ms);
    return [label, fmt(s.min), fmt(s.median), fmt(s.p90), fmt(s.max)];
  });
  console.log(table(['ms', 'min', 'median', 'p90', 'max'], rows) + '\n');
}

/** Two servers: idle release off (warm figures) and after 3 s (the released baseline). */
async function runEngineFigures(): Promise<EngineFigures> {
  const warm = await startBenchServer({ idleTimeoutMs: 0 });
  try {
    const short = await startBenchServer({ idleTimeoutMs: 3_000 });
    try {
      return await engineFigures(warm, short, ENGINE_ROUNDS, (s) => console.error(`engine: ${s}`));
    } finally {
      await short.close();
    }
  } finally {
    await warm.close();
  }
}

function printEngine(f: EngineFigures): void {
  console.log(`Engine: POST → the task's first model request, as the scripted model saw it (${ENGINE_ROUNDS} rounds each)`);
  const rows = [
    ['warm engine (the agent\'s session stays up)', f.firstRequest.warm],
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
  const p = (ms: number[], q: number): number => percentile([...ms].sort((a, b) => a - b), q);
  const rows = [
    ['direct to the scripted model', direct],
    ['through the model proxy', proxied],
  ].map(([label, ms]) => [label as string, fmt(p(ms as number[], 50), 3), fmt(p(ms as number[], 99), 3)]);
  rows.push(['model proxy overhead', fmt(p(proxied, 50) - p(direct, 50), 3), fmt(p(proxied, 99) - p(direct, 99), 3)]);
  console.log(table(['ms', 'p50', 'p99'], rows) + '\n');
}

function printThroughput(sample: string, ap: Throughput, bare: Throughput): void {
  console.log(`One WebSocket client, ${EVENTS.toLocaleString('en-US')} events of ${Buffer.byteLength(sample)} bytes of JSON each`);
  const rows = [ap, bare].map((t) => [
    t.label,
    fmt(t.producerSeconds * 1000, 0),
    fmt(t.seconds * 1000, 0),
    fmt(perSecond(t), 0),
    fmt(mbPerSecond(t), 2),
  ]);
  console.log(table(['path', 'sent by (ms)', 'received by (ms)', 'messages/s', 'MB/s'], rows));
  console.log(`ratio agentplane / bare: ${fmt(perSecond(ap) / perSecond(bare), 2)}`);
  console.log('agentplane path: EventLog.append (SQLite store) → fan-out → JSON.stringify → ws send');
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
