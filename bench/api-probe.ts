// What the API answers while agents start (issue 31), shared by `make bench`'s "api under load"
// section (bench/api-load.ts) and `make load` (bench/load.ts): a window of requests made the same
// way quiet and under load (GETs of one agent, creates without a task, Tables of a namespace of
// N agents), the server's event-loop delay read from its own /metrics when it has the histogram,
// and the admission flags the servers are started with. Prints figures; asserts nothing.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVE_FLAGS } from '../cmd/agentplane/serve-flags.js';
import { processTree } from '../test/support/server-process.js';
import { fmt, percentile, table } from './stats.js';
import { forEachConcurrently } from './support.js';

/**
 * The admission settings every server of these benches gets (issue 31): one place to turn them
 * on or off. BENCH_ADMISSION_FLAGS overrides it ('' for none: the server's defaults). A flag this
 * build's `serve` does not know is left out and named in the output, so the benches run before
 * and after the admission work alike.
 */
export const ADMISSION_FLAGS = process.env.BENCH_ADMISSION_FLAGS ?? '--max-workers 6 --namespace-max-workers 4 --start-rate 4';

const FLAGS = Object.values(SERVE_FLAGS) as { name: string; env?: string }[];

export interface Admission {
  /** `serve` arguments. */
  args: string[];
  /** The same as environment variables (the cluster home's server is started by hack/control-plane.sh). */
  env: Record<string, string>;
  /** What was passed, and what this build does not know. */
  used: string;
  unknown: string[];
}

export function admission(spec = ADMISSION_FLAGS): Admission {
  const words = spec.split(/\s+/).filter(Boolean);
  const a: Admission = { args: [], env: {}, used: '', unknown: [] };
  for (let i = 0; i < words.length; i += 2) {
    const name = words[i].replace(/^--/, '');
    const value = words[i + 1] ?? '';
    const f = FLAGS.find((x) => x.name === name);
    if (!f) {
      a.unknown.push(`--${name}`);
      continue;
    }
    a.args.push(`--${name}`, value);
    if (f.env) a.env[f.env] = value;
  }
  a.used = a.args.join(' ') || '(none: the defaults)';
  return a;
}

export const describeAdmission = (a: Admission): string =>
  `admission flags: ${a.used}${a.unknown.length ? `; not in this build, left out: ${a.unknown.join(' ')}` : ''}`;

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'cmd', 'agentplane', 'main.js');

export interface DemoServerOptions {
  /** The temporary directory's prefix. */
  prefix?: string;
  /** Node's own flags before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Another build's main.js (to compare two builds); default this build's. */
  main?: string;
  /** More environment for the server. */
  env?: Record<string, string>;
}

/** `agentplane serve --demo` (embedded home) in its own process on loopback. */
export async function startDemoServer(
  args: string[],
  o: DemoServerOptions = {},
): Promise<{ url: string; child: ChildProcess; dir: string; killTree: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), o.prefix ?? 'agentplane-load-'));
  const argv = [...(o.nodeArgs ?? []), o.main ?? MAIN, 'serve', '--demo', '--host', '127.0.0.1', '--port', '0', '--data-dir', join(dir, 'data'), ...args];
  // A session of its own, as `agentplane serve` runs from its own terminal or as a service: with the
  // kernel's autogroups the server's CPU share is then its own, not shared with this bench's
  // clients (1,000 WebSocket subscribers in `make load`), which no deployment puts in its group.
  const child = spawn(process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AGENTPLANE_LOG_LEVEL: 'info', ...o.env },
    detached: true,
  });
  // Detached, it no longer gets the terminal's Ctrl-C with the bench: it goes down with the bench
  // however the bench ends (its workers, sessions of their own too, with it).
  const killTree = (): void => {
    for (const { pid } of processTree(child.pid!).reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  };
  const onSignal = (sig: NodeJS.Signals): void => {
    killTree();
    process.kill(process.pid, sig);
  };
  process.once('exit', killTree);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  child.once('exit', () => {
    process.removeListener('exit', killTree);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += String(d);
      const m = /"url":"(http:\/\/[^"]+)".*agentplane is serving/.exec(out);
      if (m) resolve(m[1]);
      if (out.length > 1e6) out = out.slice(-1e5); // the server logs for the whole run: keep only the tail
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}): ${out.slice(-2000)}`)));
  });
  child.stdout.resume();
  return { url, child, dir, killTree };
}

export interface Client {
  call(method: string, path: string, body?: unknown, accept?: string): Promise<{ status: number; body: string }>;
  close(): void;
}

/** The embedded home's client: fetch's keep-alive pool against the server's http URL. */
export function fetchClient(base: string): Client {
  return {
    async call(method, path, body, accept = 'application/json') {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { accept, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.text() };
    },
    close: () => undefined,
  };
}

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
export const aggregated = (ns: string): string => `/apis/agentplane.io/v1alpha1/namespaces/${ns}/agents`;
/** An agent through the aggregated API; `asleep`: no task, no worker (`task: 0`). */
export const agentObject = (name: string, instructions: string, asleep: boolean): unknown => ({
  apiVersion: 'agentplane.io/v1alpha1',
  kind: 'Agent',
  metadata: { name },
  spec: { instructions, role: 'worker', ...(asleep ? { lifecycle: 'Sleep', task: 0 } : {}) },
});

/** An agent's state as either API shows it (REST mirror: flat; aggregated: under `status`). */
export interface AgentState {
  name: string;
  phase: string;
  taskStatus: string;
  /** Its place in its namespace's line while Queued, when the server has it. */
  position?: number;
}

export function stateOf(x: Record<string, any>): AgentState {
  const st = (typeof x.status === 'object' && x.status !== null ? x.status : x) as Record<string, any>;
  // REST: `queuePosition`; aggregated API: `status.queue.position` (docs/admission.md).
  const position = (x.queuePosition ?? (st.queue as { position?: number } | undefined)?.position) as unknown;
  return {
    name: (x.metadata?.name ?? x.name) as string,
    phase: typeof st.status === 'string' ? st.status : '',
    taskStatus: (st.taskStatus ?? '') as string,
    ...(typeof position === 'number' ? { position } : {}),
  };
}

export const taskEnded = (s: Pick<AgentState, 'taskStatus'>): boolean => ['Complete', 'Error', 'Cancelled'].includes(s.taskStatus);
export const isQueued = (s: AgentState): boolean => s.phase === 'Queued' || s.position !== undefined;

/** Every agent of a list path (REST mirror or aggregated API), page by page. */
export async function listStates(c: Client, path: string): Promise<AgentState[]> {
  const out: AgentState[] = [];
  let cont = '';
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await c.call('GET', `${path}${sep}limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
    const body = JSON.parse(res.body) as { agents?: Record<string, any>[]; items?: Record<string, any>[]; continue?: string; metadata?: { continue?: string } };
    out.push(...(body.agents ?? body.items ?? []).map(stateOf));
    cont = body.metadata?.continue ?? body.continue ?? '';
    if (!cont) return out;
  }
}

/** `agentplane_event_loop_delay_seconds` (or another histogram) from a /metrics text: cumulative buckets (le -> count), summed over label sets. */
const LOOP_METRIC = 'agentplane_event_loop_delay_seconds';

export type Scrape = Map<number, number> | undefined;

export function loopBuckets(text: string, metric = LOOP_METRIC): Scrape {
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}_bucket`)) continue;
    const m = /le="([^"]+)"[^}]*}\s+(\S+)/.exec(line);
    if (!m) continue;
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
  }
  return buckets.size ? buckets : undefined;
}

/** A quantile (0..1) in ms of what was observed between two scrapes, interpolated in its bucket as Prometheus does. */
export function loopQuantile(before: Scrape, after: Scrape, q: number): number | undefined {
  if (!before || !after) return undefined;
  const les = [...after.keys()].sort((a, b) => a - b);
  const counts = les.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  for (let i = 0; i < les.length; i++) {
    if (counts[i] < rank) continue;
    if (les[i] === Infinity) return les[i - 1] * 1000;
    const lo = i ? les[i - 1] : 0;
    const below = i ? counts[i - 1] : 0;
    const inBucket = counts[i] - below;
    return (lo + (les[i] - lo) * (inBucket ? (rank - below) / inBucket : 1)) * 1000;
  }
  return undefined;
}

export interface ProbePaths {
  /** One agent, settled. */
  get: string;
  /** The namespace of N agents, listed as a Table. */
  table: string;
  /** Where the creates without a task go (aggregated API), and their names' prefix. */
  create: string;
  createPrefix: string;
  /** The server's /metrics, on the client that reaches it. */
  metrics?: { client: Client; path: string };
}

export interface Window {
  get: number[];
  create: number[];
  table: number[];
  /** Event-loop delay between the window's first and last scrape, ms; undefined when the server has no such metric. */
  loop?: { p50: number; p99: number };
  /** Why `loop` is undefined. */
  loopNote?: string;
  /** Answers other than 2xx, by status. */
  errors: Map<number, number>;
  seconds: number;
  /** The machine's 1-minute load average at the window's start and end. */
  loadavg: [number, number];
}

/** The probe's fixtures: one agent that ran a task and settled (bench-get/probe), `tableOf` agents asleep in bench-table. */
export async function prepareProbe(c: Client, getPath: string, tableOf: number): Promise<void> {
  const must = async (p: Promise<{ status: number; body: string }>, what: string): Promise<string> => {
    const res = await p;
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.body.slice(0, 300)}`);
    return res.body;
  };
  await must(c.call('POST', aggregated('bench-get'), agentObject('probe', '@say hi', false)), 'create bench-get/probe');
  const settleBy = Date.now() + 120_000;
  for (;;) {
    const x = JSON.parse(await must(c.call('GET', getPath), 'GET probe')) as { taskStatus?: string; status?: { taskStatus?: string } };
    if (taskEnded({ taskStatus: x.status?.taskStatus ?? x.taskStatus ?? '' })) break;
    if (Date.now() > settleBy) throw new Error("the probe agent's task did not end within 120 s");
    await sleep(250);
  }
  await forEachConcurrently(tableOf, 8, async (i) => {
    await must(c.call('POST', aggregated('bench-table'), agentObject(letters(i), '@say hi', true)), `create bench-table/${letters(i)}`);
  });
  await sleep(3_000);
}

const GET_GAP_MS = 20;
const TABLE_GAP_MS = 200;
export const PROBE_CREATES = 20;
const CREATE_GAP_MS = 1_000;

/** The loop-delay buckets, or why there are none. */
async function scrape(m: ProbePaths['metrics']): Promise<Scrape | string> {
  if (!m) return 'no /metrics';
  try {
    const res = await m.client.call('GET', m.path, undefined, 'text/plain');
    if (res.status !== 200) return `/metrics answered ${res.status}`;
    return loopBuckets(res.body) ?? `no ${LOOP_METRIC} in /metrics`;
  } catch (err) {
    return `/metrics: ${(err as Error).message}`;
  }
}

/**
 * One window: GETs every 20 ms, a Table every 200 ms and a create without a task every second
 * (20 of them), each waiting for the one before, until the creates are done and `until` says so
 * (checked every 250 ms) or `deadline` (performance.now()) passes.
 */
export async function probeWindow(c: Client, p: ProbePaths, until: () => boolean, deadline: number): Promise<Window> {
  const w: Window = { get: [], create: [], table: [], errors: new Map(), seconds: 0, loadavg: [loadavg()[0], 0] };
  const t0 = performance.now();
  const before = await scrape(p.metrics);
  let stop = false;
  const timed = async (into: number[], method: string, path: string, body?: unknown, accept?: string): Promise<void> => {
    const t = performance.now();
    try {
      const res = await c.call(method, path, body, accept);
      if (res.status >= 300) w.errors.set(res.status, (w.errors.get(res.status) ?? 0) + 1);
      else into.push(performance.now() - t);
    } catch {
      w.errors.set(0, (w.errors.get(0) ?? 0) + 1);
    }
  };
  const loop = async (into: number[], gap: number, path: string, accept?: string): Promise<void> => {
    while (!stop) {
      await timed(into, 'GET', path, undefined, accept);
      await sleep(gap);
    }
  };
  const creates = (async () => {
    for (let i = 0; i < PROBE_CREATES && performance.now() < deadline; i++) {
      await timed(w.create, 'POST', p.create, agentObject(`${p.createPrefix}${letters(i)}`, '@say hi', true));
      await sleep(CREATE_GAP_MS);
    }
  })();
  const loops = [loop(w.get, GET_GAP_MS, p.get), loop(w.table, TABLE_GAP_MS, p.table, TABLE_ACCEPT)];
  await creates;
  while (!until() && performance.now() < deadline) await sleep(250);
  stop = true;
  await Promise.all(loops);
  const after = await scrape(p.metrics);
  if (typeof before === 'string' || typeof after === 'string') w.loopNote = typeof after === 'string' ? after : (before as string);
  else {
    const p50 = loopQuantile(before, after, 0.5);
    const p99 = loopQuantile(before, after, 0.99);
    if (p50 !== undefined && p99 !== undefined) w.loop = { p50, p99 };
    else w.loopNote = 'no observations in the window';
  }
  w.seconds = (performance.now() - t0) / 1000;
  w.loadavg[1] = loadavg()[0];
  return w;
}

/** Agent names take no digits: 0 -> "a", 25 -> "z", 26 -> "ba". */
export const letters = (n: number): string => {
  let s = '';
  do {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26);
  } while (n > 0);
  return s;
};

const q = (ms: number[], p: number): number | undefined =>
  ms.length
    ? percentile(
        [...ms].sort((a, b) => a - b),
        p,
      )
    : undefined;
const f2 = (n: number | undefined): string => (n === undefined ? 'n/a' : fmt(n, 2));

interface Figure {
  label: string;
  quiet: { p50?: number; p99?: number; n: number };
  load: { p50?: number; p99?: number; n: number };
  goal: string;
  met?: (quiet99: number, load99: number) => boolean;
}

/** The rows of the quiet-vs-load table; `tableOf` names the Table's size. */
export function probeRows(quiet: Window, load: Window, tableOf: number, extra: Figure[] = []): string[][] {
  const fig = (label: string, a: number[], b: number[], goal: string, met?: Figure['met']): Figure => ({
    label,
    quiet: { p50: q(a, 50), p99: q(a, 99), n: a.length },
    load: { p50: q(b, 50), p99: q(b, 99), n: b.length },
    goal,
    ...(met ? { met } : {}),
  });
  const figures: Figure[] = [
    fig('agent GET', quiet.get, load.get, 'p99 <= 50 ms and <= 5x quiet', (a, b) => b <= 50 && b <= 5 * a),
    fig(`create, no task (${PROBE_CREATES}, 1/s)`, quiet.create, load.create, 'p99 <= 200 ms', (_a, b) => b <= 200),
    fig(`Table of ${tableOf}`, quiet.table, load.table, 'p99 <= 100 ms', (_a, b) => b <= 100),
    {
      label: 'event-loop delay (metric)',
      quiet: { ...quiet.loop, n: 0 },
      load: { ...load.loop, n: 0 },
      goal: 'p99 <= 20 ms',
      met: (_a, b) => b <= 20,
    },
    ...extra,
  ];
  return figures.map((x) => {
    const ok = x.met && x.quiet.p99 !== undefined && x.load.p99 !== undefined ? x.met(x.quiet.p99, x.load.p99) : undefined;
    return [
      x.label,
      x.quiet.n ? String(x.quiet.n) : '',
      f2(x.quiet.p50),
      f2(x.quiet.p99),
      x.load.n ? String(x.load.n) : '',
      f2(x.load.p50),
      f2(x.load.p99),
      x.quiet.p99 !== undefined && x.load.p99 !== undefined ? `${fmt(x.load.p99 / x.quiet.p99, 1)}x` : 'n/a',
      x.goal,
      ok === undefined ? (x.met ? 'n/a' : '') : ok ? 'met' : 'NOT met',
    ];
  });
}

/** An info row (no goal): figures seen only under load, e.g. the load's own creates. */
export const infoFigure = (label: string, load: number[]): Figure => ({
  label,
  quiet: { n: 0 },
  load: { p50: q(load, 50), p99: q(load, 99), n: load.length },
  goal: '(the load itself)',
});

export const PROBE_HEADER = ['ms', 'n quiet', 'quiet p50', 'quiet p99', 'n load', 'load p50', 'load p99', 'p99 ratio', 'goal', ''];

export function printProbe(title: string, quiet: Window, load: Window, tableOf: number, extra: Figure[] = []): void {
  console.log(title);
  console.log(table(PROBE_HEADER, probeRows(quiet, load, tableOf, extra)));
  const errs = (w: Window): string => (w.errors.size ? [...w.errors].map(([s, n]) => `${n} x ${s || 'no answer'}`).join(', ') : 'none');
  const la = (w: Window): string => `${fmt(w.loadavg[0], 1)} -> ${fmt(w.loadavg[1], 1)}`;
  if (load.loopNote ?? quiet.loopNote) console.log(`event-loop delay n/a: ${load.loopNote ?? quiet.loopNote}`);
  console.log(
    `window: quiet ${fmt(quiet.seconds, 1)} s (load average ${la(quiet)}), under load ${fmt(load.seconds, 1)} s (load average ${la(load)}); ` +
      `answers not 2xx: quiet ${errs(quiet)}, under load ${errs(load)}`,
  );
}
