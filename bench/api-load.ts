// The API under load (issue 31; `make bench`, the "api under load" section; BENCH_ONLY=api-load):
// does the API stay responsive while many agents start? In each home, the same figures quiet and
// then while N agents, each with a task, start: GETs of one settled agent, creates without a task
// (no worker), a Table of a namespace of N agents asleep, and the server's event-loop delay (its
// `agentplane_event_loop_delay_seconds` histogram on /metrics, "n/a" when the build has none).
//
// - embedded home: `agentplane serve --demo` (SQLite, the scripted model in the server, workers as
//   local processes) in its own process on loopback, as `make load` runs it; GETs and the load's
//   creates through the REST mirror, the rest through the aggregated API it serves too.
// - cluster home: the API-only control plane of bench/native.ts (etcd, kube-apiserver, agentplane
//   registered as the aggregated API, workers as local processes beside it); every request goes
//   through kube-apiserver's aggregator (the Table is what `kubectl get agents` asks for), /metrics
//   straight to agentplane.
//
// The servers get the admission flags of bench/api-probe.ts (ADMISSION_FLAGS). Prints figures;
// asserts nothing. BENCH_API_LOAD_AGENTS (default 200): N. BENCH_API_LOAD_TIMEOUT_S (default 600):
// the bound of each home's load window (the figures are printed with what had ended by then).
// BENCH_API_LOAD_HOMES (default "embedded,cluster").

import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { controlPlaneUp, REPO } from '../test/support/control-plane.js';
import {
  type Admission,
  admission,
  agentObject,
  aggregated,
  type Client,
  describeAdmission,
  fetchClient,
  infoFigure,
  isQueued,
  letters,
  listStates,
  prepareProbe,
  printProbe,
  type ProbePaths,
  probeWindow,
  startDemoServer,
  taskEnded,
  type Window,
} from './api-probe.js';
import { client as kubeClient } from './native.js';
import { fmt } from './stats.js';
import { forEachConcurrently } from './support.js';

const run = promisify(execFile);

export const API_LOAD_AGENTS = Number(process.env.BENCH_API_LOAD_AGENTS ?? 200);
const TIMEOUT_MS = Number(process.env.BENCH_API_LOAD_TIMEOUT_S ?? 600) * 1000;
const HOMES = (process.env.BENCH_API_LOAD_HOMES ?? 'embedded,cluster').split(',');
/** The section's bound: each home's load window, plus setting up (N asleep agents, a control plane) and the quiet window. */
export const apiLoadBudgetMs = (): number => HOMES.length * (TIMEOUT_MS + 300_000);
const SUBMIT_CONCURRENCY = 16;
const POLL_MS = 2_000;

/** How the N agents' tasks went, from lists of their namespace every 2 s. */
export interface Progress {
  agents: number;
  /** Seconds from the first submit: all submitted, all started (a task status and not Queued), all ended (Complete, Error or Cancelled). */
  submittedS?: number;
  startedS?: number;
  endedS?: number;
  started: number;
  ended: number;
  failed: number;
  /** Agents seen Queued at once, at most, and the largest queue position seen (when the server shows them). */
  maxQueued: number;
  maxPosition?: number;
  /** Submits answered other than 2xx (0: no answer), by status. */
  refused: Map<number, number>;
}

export interface HomeFigures {
  home: string;
  quiet: Window;
  load: Window;
  /** The load's own creates (each with a task), ms. */
  submits: number[];
  progress: Progress;
  /** Cluster home: kube-apiserver's requests for agent records over the load window, by verb. */
  storage?: Map<string, number>;
}

export interface ApiLoadFigures {
  agents: number;
  admission: Admission;
  homes: HomeFigures[];
}

/** How one home is reached: the client, where the probe's requests go, and how one load agent is submitted. */
interface Home {
  name: string;
  client: Client;
  paths: (prefix: string) => ProbePaths;
  /** Submits one agent of the load with its task. */
  submit: (name: string) => Promise<{ status: number; body: string }>;
  /** The list of the load's namespace. */
  loadList: string;
  /** Where the storage's requests are counted (the cluster home: kube-apiserver's /metrics). */
  storageCounts?: () => Promise<Map<string, number>>;
}

/** kube-apiserver's request count for agent records (the cluster home's storage), by verb. */
export function recordRequests(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('resource="agentrecords"')) continue;
    const verb = /verb="(\w+)"/.exec(line)?.[1];
    const n = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (verb && Number.isFinite(n)) out.set(verb, (out.get(verb) ?? 0) + n);
  }
  return out;
}

export async function apiLoadFigures(log: (s: string) => void): Promise<ApiLoadFigures> {
  const adm = admission();
  log(describeAdmission(adm));
  const homes: HomeFigures[] = [];
  if (HOMES.includes('embedded')) homes.push(await embedded(adm, log));
  if (HOMES.includes('cluster')) homes.push(await cluster(adm, log));
  return { agents: API_LOAD_AGENTS, admission: adm, homes };
}

async function embedded(adm: Admission, log: (s: string) => void): Promise<HomeFigures> {
  log('embedded home: serve --demo');
  const srv = await startDemoServer(adm.args, { prefix: 'agentplane-api-load-' });
  const c = fetchClient(srv.url);
  try {
    return await measureHome(
      {
        name: 'embedded',
        client: c,
        paths: (prefix) => ({
          get: '/api/v1/agents/probe?namespace=bench-get',
          table: aggregated('bench-table'),
          create: aggregated('bench-create'),
          createPrefix: prefix,
          metrics: { client: c, path: '/metrics' },
        }),
        submit: (name) => c.call('POST', '/api/v1/agents?namespace=bench-load', { name, instructions: '@say hi' }),
        loadList: '/api/v1/agents?namespace=bench-load',
      },
      log,
    );
  } finally {
    srv.child.kill('SIGTERM');
    await Promise.race([new Promise((r) => srv.child.once('exit', r)), sleep(30_000)]);
    srv.killTree();
    rmSync(srv.dir, { recursive: true, force: true });
  }
}

async function cluster(adm: Admission, log: (s: string) => void): Promise<HomeFigures> {
  log('cluster home: API-only control plane, agentplane registered as the aggregated API');
  const cp = await controlPlaneUp();
  try {
    // The per-user rate limit is off (as in bench/native.ts): this measures latency.
    const env = { ...process.env, AGENTPLANE_CP_DIR: cp.dir, AGENTPLANE_RATE_LIMIT: '0', ...adm.env };
    const reg = await run('bash', [join(REPO, 'hack/control-plane.sh'), 'register'], { env, timeout: 5 * 60_000 });
    const url = reg.stdout.trim().split('\n').at(-1)!;
    const c = await kubeClient(cp.kubeconfig);
    // The load is another client, with connections of its own (one per request at once), as
    // another user's kubectl would be: the probes never wait for a socket behind its requests.
    const loader = await kubeClient(cp.kubeconfig, undefined, SUBMIT_CONCURRENCY);
    const direct = await kubeClient(cp.kubeconfig, { url, ca: readFileSync(join(cp.dir, 'pki/serving-ca.crt')) });
    try {
      for (const ns of ['bench-get', 'bench-table', 'bench-create', 'bench-load']) await cp.kubectl(['create', 'namespace', ns]);
      return await measureHome(
        {
          name: 'cluster',
          client: c,
          paths: (prefix) => ({
            get: `${aggregated('bench-get')}/probe`,
            table: aggregated('bench-table'),
            create: aggregated('bench-create'),
            createPrefix: prefix,
            metrics: { client: direct, path: '/metrics' },
          }),
          submit: (name) => loader.call('POST', aggregated('bench-load'), agentObject(name, '@say hi', false)),
          loadList: aggregated('bench-load'),
          storageCounts: async () => recordRequests((await c.call('GET', '/metrics', undefined, 'text/plain')).body),
        },
        log,
      );
    } finally {
      c.close();
      loader.close();
      direct.close();
    }
  } finally {
    await cp.down();
  }
}

async function measureHome(h: Home, log: (s: string) => void): Promise<HomeFigures> {
  const c = h.client;
  const n = API_LOAD_AGENTS;
  log(`${h.name}: one agent to GET (its task settles), ${n} agents asleep for the Table`);
  await prepareProbe(c, h.paths('').get, n);

  log(`${h.name}: quiet window`);
  const quiet = await probeWindow(c, h.paths('q'), () => true, performance.now() + TIMEOUT_MS);

  log(`${h.name}: ${n} agents each with a task start`);
  const storageBefore = await h.storageCounts?.();
  const t0 = performance.now();
  const deadline = t0 + TIMEOUT_MS;
  const progress: Progress = { agents: n, started: 0, ended: 0, failed: 0, maxQueued: 0, refused: new Map() };
  const submits: number[] = [];
  const submitting = forEachConcurrently(n, SUBMIT_CONCURRENCY, async (i) => {
    const t = performance.now();
    const res = await h.submit(letters(i)).catch(() => ({ status: 0, body: '' }));
    if (res.status >= 300 || res.status === 0) progress.refused.set(res.status, (progress.refused.get(res.status) ?? 0) + 1);
    else submits.push(performance.now() - t);
  }).then(() => (progress.submittedS = (performance.now() - t0) / 1000));
  let done = false;
  let nextLog = 0;
  const watching = (async () => {
    while (!done && performance.now() < deadline) {
      await sleep(POLL_MS);
      const states = await listStates(c, h.loadList).catch(() => undefined);
      if (!states) continue;
      const s = (performance.now() - t0) / 1000;
      progress.started = states.filter((x) => x.taskStatus !== '' && !isQueued(x)).length;
      progress.ended = states.filter(taskEnded).length;
      progress.failed = states.filter((x) => x.taskStatus === 'Error').length;
      progress.maxQueued = Math.max(progress.maxQueued, states.filter(isQueued).length);
      for (const x of states) if (x.position !== undefined) progress.maxPosition = Math.max(progress.maxPosition ?? 0, x.position);
      if (progress.started >= n) progress.startedS ??= s;
      if (progress.ended >= n) {
        progress.endedS ??= s;
        done = true;
      }
      if (s >= nextLog || done) log(`${h.name}: ${progress.started} started, ${progress.ended} ended of ${n} (${fmt(s, 0)} s)`);
      if (s >= nextLog) nextLog = s + 15;
    }
  })();
  const load = await probeWindow(c, h.paths('l'), () => done, deadline);
  done = true;
  await Promise.all([submitting, watching]);
  const storageAfter = await h.storageCounts?.();
  const storage = storageBefore && storageAfter ? new Map([...storageAfter].map(([verb, k]) => [verb, k - (storageBefore.get(verb) ?? 0)])) : undefined;
  return { home: h.name, quiet, load, submits: submits.sort((a, b) => a - b), progress, ...(storage ? { storage } : {}) };
}

export const progressLine = (p: Progress): string =>
  `${p.agents} agents: all submitted in ${p.submittedS === undefined ? '-' : `${fmt(p.submittedS, 1)} s`}, ` +
  `${p.started} started${p.startedS === undefined ? '' : ` (all by ${fmt(p.startedS, 1)} s)`}, ` +
  `${p.ended} ended${p.endedS === undefined ? ' (NOT all before the timeout)' : ` (all by ${fmt(p.endedS, 1)} s)`}, ${p.failed} failed; ` +
  `submits refused: ${p.refused.size ? [...p.refused].map(([st, k]) => `${k} x ${st || 'no answer'}`).join(', ') : 'none'}; most seen Queued at once: ${p.maxQueued}${p.maxPosition === undefined ? ' (queue positions: n/a)' : `, largest queue position ${p.maxPosition}`}`;

export const storageLine = (counts: Map<string, number>, agents: number): string => {
  const verbs = [...counts].filter(([, k]) => k > 0).sort(([a], [b]) => (a < b ? -1 : 1));
  const writes = verbs.filter(([v]) => v !== 'GET' && v !== 'LIST' && v !== 'WATCH').reduce((sum, [, k]) => sum + k, 0);
  return `kube-apiserver requests for agent records over the load window: ${verbs.map(([v, k]) => `${v} ${k}`).join(', ') || 'none'}; writes per agent of the load (the probes' 20 creates included): ${fmt(writes / agents, 1)}`;
};

export function printApiLoad(f: ApiLoadFigures): void {
  console.log(`API under load (issue 31): the same requests quiet, then while ${f.agents} agents each with a task start; ${describeAdmission(f.admission)}`);
  for (const h of f.homes) {
    const where =
      h.home === 'embedded'
        ? 'embedded home (serve --demo in its own process; GET via the REST mirror, creates and Table via the aggregated API)'
        : 'cluster home (API-only control plane; everything through kube-apiserver, Table as kubectl get agents asks)';
    printProbe(`\n${where}`, h.quiet, h.load, f.agents, [infoFigure(`create with a task (the load's ${f.agents})`, h.submits)]);
    console.log(progressLine(h.progress));
    if (h.storage) console.log(storageLine(h.storage, h.progress.agents));
  }
  console.log('');
}
