// Memory per 1,000 idle agents (issue 11; `make bench`, the "idle-memory" section;
// BENCH_ONLY=idle-memory). A real embedded server in its own process (`agentplane serve`, so its
// memory can be read from /proc), pointed at the scripted model in this process. N agents each
// run one trivial task ("@say hi": a worker and an engine really start, answer and end), then
// their workers are released after a short --idle-timeout; what is left for them is the server's
// own state. Measured, before and after in the same run: the PSS of the server's whole process
// tree (server, spawner, anything still under it) after a quiet spell, then again after a full
// garbage collection in the server (asked through its inspector, opened on loopback for this:
// `--inspect=127.0.0.1:0`), and the server's JS heap in use after that collection. A second step
// adds N agents created asleep that never ran a task (`task: 0`), for comparison. Prints figures;
// asserts nothing. Bounded by its own deadline; loopback only.
//
// BENCH_IDLE_AGENTS (default 1000): N. BENCH_IDLE_SETTLE_S (default 10): the quiet spell before
// each measurement. BENCH_IDLE_LOG_LEVEL (default warn): the server's log level; its lines about
// a task that did not complete are printed. BENCH_IDLE_HEAP_SNAPSHOTS=<dir>: a heap snapshot of
// the server after each measurement, into <dir> (<step>.heapsnapshot; writing one costs the
// server memory of its own, so take the figures from a run without).

import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { type Agent, WORKER_READY, WORKER_RELEASED } from '../pkg/api/agent.js';
import { findCondition } from '../pkg/api/condition.js';
import { startScriptedModel } from '../pkg/scriptedmodel/index.js';
import { fmt, percentile } from './stats.js';
import { API_KEY, forEachConcurrently } from './support.js';
import { freePort, processTree, type ServerProcess, startServerProcess, stillAlive, treeMemory } from '../test/support/server-process.js';

export const IDLE_AGENTS = Number(process.env.BENCH_IDLE_AGENTS ?? 1000);
const IDLE_TIMEOUT_S = 2;
const MAX_WORKERS = 8;
/** Agents run before the baseline, so it holds what a server that has run agents holds once (the spawner, compiled code). */
const WARM_UP = MAX_WORKERS;
const CREATE_CONCURRENCY = 8;
/** Quiet time before a measurement, then samples a second apart (the median is printed); and after the forced collection. */
const SETTLE_MS = Number(process.env.BENCH_IDLE_SETTLE_S ?? 10) * 1000;
const AFTER_GC_MS = 2_000;
const SAMPLES = 5;
const SNAPSHOTS = process.env.BENCH_IDLE_HEAP_SNAPSHOTS;
const AGENTS_URL = '/apis/agentplane.io/v1alpha1/namespaces/default/agents';

/** The section's bound: generous for a loaded 2-CPU machine (a worker and engine start per agent, 8 at a time). */
export const idleMemoryBudgetMs = (n: number): number => 300_000 + 2_000 * n;

export interface MemorySample {
  /** PSS of the server's process tree after the quiet spell, MiB. */
  treeMb: number;
  /** The same after a full garbage collection in the server, MiB. */
  treeGcMb: number;
  /** The server's V8 heap in use after a full garbage collection, MiB. */
  heapMb: number;
  /** Worker, engine or tool processes under the server (the spawner helper not counted). */
  workers: number;
  /** Processes under the server in all, the spawner included. */
  children: number;
}

export interface IdleMemoryFigures {
  agents: number;
  idleTimeoutS: number;
  /** The quiet spell before each measurement, seconds. */
  settleS: number;
  maxWorkers: number;
  /** A fresh server, no agent ever created. */
  fresh: MemorySample;
  /** After the warm-up agents ran a task each and were released: the baseline. */
  baseline: MemorySample;
  /** After N more agents ran a task each and were released. */
  released: MemorySample;
  /** After N more agents were created asleep with no task. */
  asleep: MemorySample;
  /** From the first create to the last worker released; from the first asleep create to the last settled. */
  seconds: { released: number; asleep: number };
  /** Tasks that did not complete (`name: message`); such an agent still ran a worker and engine and counts. */
  failedTasks: string[];
}

/** Runs the section; `log` prints progress. */
export async function idleMemoryFigures(log: (s: string) => void, n = IDLE_AGENTS): Promise<IdleMemoryFigures> {
  const deadline = Date.now() + idleMemoryBudgetMs(n);
  const model = await startScriptedModel({ apiKey: API_KEY });
  const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-idle-'));
  let srv: ServerProcess | undefined;
  // If the bench is ended from outside this section (its watchdog), the server's tree goes with it.
  const killTree = (): void => killAll(srv ? processTree(srv.child.pid!) : []);
  process.once('exit', killTree);
  try {
    srv = await startServerProcess({
      port: await freePort(),
      dataDir,
      model: { url: model.url, apiKey: API_KEY },
      // The rate limit is off: this measures memory, and creates come faster than 100/s.
      args: [
        '--idle-timeout',
        String(IDLE_TIMEOUT_S),
        '--max-workers',
        String(MAX_WORKERS),
        '--rate-limit',
        '0',
        '--log-level',
        process.env.BENCH_IDLE_LOG_LEVEL ?? 'warn',
      ],
      nodeArgs: ['--inspect=127.0.0.1:0'],
    });
    if (SNAPSHOTS) mkdirSync(SNAPSHOTS, { recursive: true });
    const { url } = srv;
    const pid = srv.child.pid!;
    const f: Partial<IdleMemoryFigures> = { agents: n, idleTimeoutS: IDLE_TIMEOUT_S, settleS: SETTLE_MS / 1000, maxWorkers: MAX_WORKERS };

    log('fresh server');
    f.fresh = await measure(srv, 'fresh', log);

    log(`warm-up: ${WARM_UP} agents run a task and are released`);
    const failed = new Map<string, string>();
    await runAndRelease(url, pid, 'warm', WARM_UP, deadline, failed);
    f.baseline = await measure(srv, 'baseline', log);

    log(`${n} agents run "@say hi" and are released after ${IDLE_TIMEOUT_S} s`);
    let t0 = Date.now();
    await runAndRelease(url, pid, 'idle', n, deadline, failed, log);
    const releasedSeconds = (Date.now() - t0) / 1000;
    f.failedTasks = [...failed].map(([name, message]) => `${name}: ${message}`);
    // What the server said about them (warnings and errors; more with BENCH_IDLE_LOG_LEVEL=info).
    for (const name of failed.keys()) for (const line of srv.output.filter((l) => l.includes(`"${name}"`)).slice(-20)) log(`server about ${name}: ${line}`);
    f.released = await measure(srv, 'released', log);

    log(`${n} agents created asleep, no task`);
    t0 = Date.now();
    await createAll(n, async (i) => {
      const body = {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Agent',
        metadata: { name: `asleep-${i}` },
        spec: { instructions: '@say hi', lifecycle: 'Sleep', task: 0 },
      };
      const res = await fetch(`${url}${AGENTS_URL}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`create asleep-${i}: ${res.status} ${await res.text()}`);
    });
    await waitFor(url, pid, 'asleep-', n, deadline, (a) => (a.status.status === 'Sleeping' ? undefined : `${a.status.status}`));
    f.seconds = { released: releasedSeconds, asleep: (Date.now() - t0) / 1000 };
    f.asleep = await measure(srv, 'asleep', log);
    return f as IdleMemoryFigures;
  } finally {
    await stop(srv, killTree);
    process.off('exit', killTree);
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Creates `n` agents named `<prefix>-<i>` with a task each, then waits until every task ended and
 * every worker was released. Tasks that ended otherwise than completed are put in `failed`.
 */
async function runAndRelease(
  url: string,
  pid: number,
  prefix: string,
  n: number,
  deadline: number,
  failed: Map<string, string>,
  log?: (s: string) => void,
): Promise<void> {
  await createAll(n, async (i) => {
    const res = await fetch(`${url}/api/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${prefix}-${i}`, instructions: '@say hi' }),
    });
    if (res.status !== 201) throw new Error(`create ${prefix}-${i}: ${res.status} ${await res.text()}`);
  });
  await waitFor(
    url,
    pid,
    `${prefix}-`,
    n,
    deadline,
    (a) => {
      if (a.status.taskStatus === 'Error' || a.status.taskStatus === 'Cancelled')
        failed.set(a.metadata.name, `${a.status.taskStatus}: ${a.status.lastTaskMessage}`);
      const ready = findCondition(a.status.conditions, WORKER_READY);
      if (a.status.taskStatus === 'InProgress' || a.status.taskStatus === '') return `task ${a.status.taskStatus || 'not started'}`;
      return ready?.status === 'False' && ready.reason === WORKER_RELEASED ? undefined : `worker ${ready?.status ?? '?'} ${ready?.reason ?? ''}`;
    },
    log,
  );
}

/** Calls `create(i)` for i in 0..n-1, a few at a time. */
const createAll = (n: number, create: (i: number) => Promise<void>): Promise<void> => forEachConcurrently(n, CREATE_CONCURRENCY, create);

/**
 * Polls the agents (pages of the aggregated API) until all `n` named `<prefix>…` are where
 * `pending` says (it answers undefined when the agent is there) and no worker process is left
 * under the server.
 */
async function waitFor(
  url: string,
  pid: number,
  prefix: string,
  n: number,
  deadline: number,
  pending: (a: Agent) => string | undefined,
  log?: (s: string) => void,
): Promise<void> {
  let lastLog = Date.now();
  for (;;) {
    const agents = (await listAgents(url)).filter((a) => a.metadata.name.startsWith(prefix));
    const waiting = agents.map((a) => [a.metadata.name, pending(a)] as const).filter(([, why]) => why !== undefined);
    const workers = workerProcesses(pid).length;
    if (agents.length === n && waiting.length === 0 && workers === 0) return;
    const state = `${agents.length} of ${n} agents listed, ${waiting.length} not there yet (${waiting
      .slice(0, 3)
      .map(([name, why]) => `${name}: ${why}`)
      .join('; ')}), ${workers} worker processes`;
    if (Date.now() > deadline) throw new Error(`idle-memory: out of time: ${state}`);
    if (log && Date.now() - lastLog > 30_000) {
      log(state);
      lastLog = Date.now();
    }
    await sleep(1000);
  }
}

async function listAgents(url: string): Promise<Agent[]> {
  const out: Agent[] = [];
  let cont = '';
  do {
    const res = await fetch(`${url}${AGENTS_URL}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    if (res.status !== 200) throw new Error(`list agents: ${res.status} ${await res.text()}`);
    const list = (await res.json()) as { items: Agent[]; metadata: { continue?: string } };
    out.push(...list.items);
    cont = list.metadata.continue ?? '';
  } while (cont);
  return out;
}

/** Processes under the server other than its spawner helper: workers, engines, their tools. */
function workerProcesses(pid: number): number[] {
  return processTree(pid)
    .slice(1)
    .filter((p) => !p.cmd.includes('spawner-main'))
    .map((p) => p.pid);
}

/**
 * After a quiet spell: the median of a few samples of the tree's PSS as it is; then again after a
 * full collection in the server, with its heap in use; with BENCH_IDLE_HEAP_SNAPSHOTS, a heap
 * snapshot named after `step`.
 */
async function measure(srv: ServerProcess, step: string, log: (s: string) => void): Promise<MemorySample> {
  const pid = srv.child.pid!;
  const pss = async (): Promise<number> => {
    const xs: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      if (i) await sleep(1000);
      xs.push(treeMemory(pid));
    }
    return percentile(
      xs.sort((a, b) => a - b),
      50,
    );
  };
  await sleep(SETTLE_MS);
  const treeMb = await pss();
  const inspector = await Inspector.open(srv);
  try {
    await inspector.call('HeapProfiler.collectGarbage');
    const { usedSize } = (await inspector.call('Runtime.getHeapUsage')) as { usedSize: number };
    await sleep(AFTER_GC_MS);
    const treeGcMb = await pss();
    if (SNAPSHOTS) {
      const file = join(SNAPSHOTS, `${step}.heapsnapshot`);
      await inspector.snapshot(file);
      log(`heap snapshot: ${file}`);
    }
    return { treeMb, treeGcMb, heapMb: usedSize / 1024 / 1024, workers: workerProcesses(pid).length, children: processTree(pid).length - 1 };
  } finally {
    inspector.close();
  }
}

/** A session on the server's inspector (Chrome DevTools protocol over a loopback WebSocket). */
class Inspector {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  private chunk?: (s: string) => void;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(String(data)) as { id?: number; method?: string; params?: { chunk: string }; result?: unknown; error?: { message: string } };
      if (m.method === 'HeapProfiler.addHeapSnapshotChunk') this.chunk?.(m.params!.chunk);
      const p = m.id === undefined ? undefined : this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id!);
      if (m.error) p.reject(new Error(`inspector: ${m.error.message}`));
      else p.resolve(m.result);
    });
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('inspector: the connection closed'));
      this.pending.clear();
    });
  }

  /** Connects to the address the server printed when its inspector started (`Debugger listening on ws://…`). */
  static async open(srv: ServerProcess): Promise<Inspector> {
    const url = srv.output.map((l) => /Debugger listening on (ws:\/\/\S+)/.exec(l)?.[1]).find(Boolean);
    if (!url) throw new Error('idle-memory: the server printed no inspector address');
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new Inspector(ws);
  }

  call(method: string, params: object = {}): Promise<unknown> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Writes a heap snapshot (the server collects garbage first) to `file`. */
  async snapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    this.chunk = (s) => out.write(s);
    try {
      await this.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.chunk = undefined;
      await new Promise((r) => out.end(r));
    }
  }

  close(): void {
    this.ws.close();
  }
}

/** SIGTERM to the server; SIGKILL to its tree if it has not exited within 30 s, and to whatever of the tree is left 10 s after. */
async function stop(srv: ServerProcess | undefined, killTree: () => void): Promise<void> {
  if (!srv) return;
  const tree = processTree(srv.child.pid!);
  srv.child.kill('SIGTERM');
  const gone = await Promise.race([srv.exited.then(() => true), sleep(30_000).then(() => false)]);
  if (!gone) killTree();
  for (let i = 0; i < 100 && stillAlive(tree).length; i++) await sleep(100);
  killAll(stillAlive(tree));
}

function killAll(procs: readonly { pid: number }[]): void {
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** The table's rows: each step, and per 1,000 agents what it added to the step before. */
export function idleMemoryRows(f: IdleMemoryFigures): string[][] {
  const per1000 = (after: number, before: number): string => fmt(((after - before) / f.agents) * 1000, 1);
  const row = (label: string, s: MemorySample, prev?: MemorySample, seconds?: number): string[] => [
    label,
    fmt(s.treeMb, 1),
    prev ? per1000(s.treeMb, prev.treeMb) : '',
    fmt(s.treeGcMb, 1),
    prev ? per1000(s.treeGcMb, prev.treeGcMb) : '',
    fmt(s.heapMb, 1),
    prev ? per1000(s.heapMb, prev.heapMb) : '',
    String(s.workers),
    String(s.children),
    seconds === undefined ? '' : fmt(seconds, 0),
  ];
  return [
    row('fresh server, no agent yet', f.fresh),
    row(`baseline: after ${WARM_UP} agents ran a task and were released`, f.baseline),
    row(`+ ${f.agents} agents ran "@say hi", released (idle)`, f.released, f.baseline, f.seconds.released),
    row(`+ ${f.agents} agents created asleep, never ran (task: 0)`, f.asleep, f.released, f.seconds.asleep),
  ];
}

export const IDLE_MEMORY_HEADER = ['MiB', 'tree PSS', 'per 1,000', 'after GC', 'per 1,000', 'heap used', 'per 1,000', 'workers', 'children', 'time s'];
