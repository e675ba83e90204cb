// `node dist/bench/loop-profile.js`: where the API process's event loop spends its time while
// agents start (issue 31). One embedded server (`serve --demo`, real workers, loopback) run under
// `node --cpu-prof`; LOOP_AGENTS (default 50) agents are created in a row, each with a task, while
// a GET of one quiet agent runs every 10 ms; once every task has ended the server gets SIGTERM
// (which writes the profile). Prints the create and GET latencies, the server's
// agentplane_event_loop_delay_seconds over the burst, and the profile's self time during the
// burst by where the code is and by the project part or package it ran for.
//
// LOOP_AGENTS (default 50), LOOP_PROF_DIR (default a temporary folder, kept), LOOP_TIMEOUT_S
// (default 300), LOOP_MAIN (the server's main.js; default this build's). `node dist/bench/loop-profile.js <file.cpuprofile>` summarizes a profile only.

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startDemoServer } from './api-probe.js';
import { fmt, percentile, table } from './stats.js';

const AGENTS = Number(process.env.LOOP_AGENTS ?? 50);
const TIMEOUT_MS = Number(process.env.LOOP_TIMEOUT_S ?? 300) * 1000;
const TASK = (i: number): string => `@bash echo loop-${i}\n@say done ${i}`;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code is: a V8 state, a Node.js module, a package, or a part of the project. */
function where(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native/V8 builtin)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return `npm ${parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const m = /\/dist\/((?:pkg|cmd|plugins)\/[^/]+(?:\/[^/]+)?)/.exec(url);
  if (m) return m[1].replace(/\.js$/, '');
  return url;
}

/** A category that is the project's or a package's own (not Node.js, V8 or a builtin). */
const owned = (c: string): boolean => !c.startsWith('(') && !c.startsWith('node:');

export interface ProfileSummary {
  /** Milliseconds of the window, and of them on the CPU (neither idle nor outside JS). */
  windowMs: number;
  busyMs: number;
  byWhere: [string, number][];
  /** Node.js and builtin frames counted for the nearest project or package frame above them. */
  byOwner: [string, number][];
  functions: [string, number][];
}

/**
 * Self time per category over a window given in ms before the profile's end: from `fromEndMs`
 * before it to `toEndMs` before it (the whole profile without a window).
 */
export function summarizeProfile(p: CpuProfile, window?: { fromEndMs: number; toEndMs: number }): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ownerOf = new Map<number, string>();
  const owner = (id: number): string => {
    const known = ownerOf.get(id);
    if (known) return known;
    const n = byId.get(id)!;
    const c = where(n.callFrame.url, n.callFrame.functionName);
    const up = parent.get(id);
    const o = owned(c) || up === undefined ? c : owner(up);
    ownerOf.set(id, o);
    return o;
  };
  const from = window ? p.endTime - window.fromEndMs * 1000 : p.startTime;
  const to = window ? p.endTime - window.toEndMs * 1000 : p.endTime;
  const w = new Map<string, number>();
  const o = new Map<string, number>();
  const f = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  let t = p.startTime;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    // A sample's time is the delta to the next one.
    const us = p.timeDeltas[i + 1] ?? 0;
    if (t < from || t > to) continue;
    total += us;
    const n = byId.get(p.samples[i])!;
    const { functionName, url, lineNumber } = n.callFrame;
    const c = where(url, functionName);
    add(w, c, us);
    if (c !== '(idle)') add(o, owner(n.id), us);
    add(f, `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim(), us);
  }
  const sorted = (m: Map<string, number>): [string, number][] => [...m].map(([k, v]): [string, number] => [k, v / 1000]).sort((a, b) => b[1] - a[1]);
  const idle = (w.get('(idle)') ?? 0) / 1000;
  return { windowMs: total / 1000, busyMs: total / 1000 - idle, byWhere: sorted(w), byOwner: sorted(o), functions: sorted(f).filter(([k]) => k !== '(idle)') };
}

export function printProfile(s: ProfileSummary, top = 20): void {
  const pct = (ms: number): string => `${fmt((100 * ms) / s.windowMs, 1)} %`;
  console.log(`profile window ${fmt(s.windowMs / 1000, 1)} s, on the CPU ${fmt(s.busyMs / 1000, 1)} s (${pct(s.busyMs)})`);
  const rows = (l: [string, number][]) => l.slice(0, top).map(([k, ms]) => [k, fmt(ms, 0), pct(ms)]);
  console.log(table(['self time by where the code is', 'ms', 'of window'], rows(s.byWhere)));
  console.log(table(['self time by part it ran for (Node.js and builtins to their caller)', 'ms', 'of window'], rows(s.byOwner)));
  console.log(table(['top functions (self)', 'ms', 'of window'], rows(s.functions)));
}

/** agentplane_event_loop_delay_seconds buckets from a /metrics text: le -> cumulative count. */
function loopBuckets(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const b = /^agentplane_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)/.exec(line);
    if (b) m.set(b[1], Number(b[2]));
  }
  return m;
}

/** An upper bound of the p-th percentile from the difference of two cumulative bucket readings. */
function bucketPercentile(before: Map<string, number>, after: Map<string, number>, p: number): string {
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  for (const [le, n] of after) if (n - (before.get(le) ?? 0) >= (p / 100) * total) return le === '+Inf' ? '> 2 s' : `<= ${Number(le) * 1000} ms`;
  return '-';
}

/** Time the process's main thread ran on a CPU and waited runnable for one, in ns. */
function schedstat(pid: number): { cpu: number; wait: number } {
  const [cpu, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { cpu, wait };
}

/** agentplane_http_requests_total by route and method (status codes summed). */
function routeCounts(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const r = /^agentplane_http_requests_total\{(.*)\} (\d+)/.exec(line);
    if (!r) continue;
    const labels = Object.fromEntries([...r[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const k = `${labels.route} ${labels.method}`;
    m.set(k, (m.get(k) ?? 0) + Number(r[2]));
  }
  return m;
}

async function main(): Promise<void> {
  if (process.argv[2]) {
    printProfile(summarizeProfile(JSON.parse(readFileSync(process.argv[2], 'utf8')) as CpuProfile));
    return;
  }
  const profDir = process.env.LOOP_PROF_DIR ?? mkdtempSync(join(tmpdir(), 'agentplane-prof-'));
  let started: { child: ChildProcess } | undefined;
  const watchdog = setTimeout(() => {
    console.error('loop-profile: watchdog fired');
    started?.child.kill('SIGKILL');
    process.exit(2);
  }, TIMEOUT_MS * 2);
  const { url, child, dir } = (started = await startDemoServer([], {
    prefix: 'agentplane-loop-',
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`],
    ...(process.env.LOOP_MAIN ? { main: process.env.LOOP_MAIN } : {}),
    env: { AGENTPLANE_RATE_LIMIT: '0' },
  }));
  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${url}${path}`, { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return path === '/metrics' ? text : JSON.parse(text);
  };
  const timed = async (method: string, path: string, body?: unknown): Promise<number> => {
    const t = performance.now();
    await api(method, path, body);
    return performance.now() - t;
  };
  const settled = async (names: string[]): Promise<void> => {
    const deadline = Date.now() + TIMEOUT_MS;
    for (let pending = names; pending.length; await sleep(500)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pending.length} agents`);
      const states = await Promise.all(pending.map((n) => api('GET', `/api/v1/agents/${n}`)));
      pending = pending.filter((_, i) => states[i].taskStatus === 'InProgress' || states[i].taskStatus === '');
    }
  };
  try {
    console.log(`agentplane loop-profile: ${AGENTS} agents with a task, created in a row, one embedded server (--demo) under --cpu-prof`);
    await api('POST', '/api/v1/agents', { name: 'probe', instructions: '@say ready' });
    await settled(['probe']);
    await sleep(2000);
    const quiet: number[] = [];
    for (let i = 0; i < 100; i++) {
      quiet.push(await timed('GET', '/api/v1/agents/probe'));
      await sleep(10);
    }
    const loopBefore = loopBuckets(await api('GET', '/metrics'));
    const t0 = performance.now();
    const names = Array.from({ length: AGENTS }, (_, i) => `loop-${i}`);
    const creates: number[] = [];
    let done = false;
    const sched0 = schedstat(child.pid!);
    const requests0 = routeCounts(await api('GET', '/metrics'));
    const creating = (async () => {
      for (const [i, name] of names.entries()) creates.push(await timed('POST', '/api/v1/agents', { name, instructions: TASK(i) }));
    })();
    // GETs every 10 ms until every task has ended (the workers start long after their create).
    void creating.then(() => settled(names)).finally(() => (done = true));
    const gets: number[] = [];
    const getting = (async () => {
      while (!done) {
        gets.push(await timed('GET', '/api/v1/agents/probe'));
        await sleep(10);
      }
    })();
    await creating;
    await getting;
    await settled(names);
    const burstSeconds = (performance.now() - t0) / 1000;
    const sched1 = schedstat(child.pid!);
    const metricsAfter = await api('GET', '/metrics');
    const loopAfter = loopBuckets(metricsAfter);
    const requests1 = routeCounts(metricsAfter);
    const sorted = (a: number[]) => [...a].sort((x, y) => x - y);
    const [q, g, c] = [sorted(quiet), sorted(gets), sorted(creates)];
    console.log(
      table(
        ['ms', 'n', 'p50', 'p99', 'max'],
        [
          ['GET one agent, quiet', String(q.length), fmt(percentile(q, 50), 2), fmt(percentile(q, 99), 2), fmt(q.at(-1)!, 2)],
          [`GET one agent while ${AGENTS} are created`, String(g.length), fmt(percentile(g, 50), 2), fmt(percentile(g, 99), 2), fmt(g.at(-1)!, 2)],
          [`${AGENTS} creates in a row`, String(c.length), fmt(percentile(c, 50), 2), fmt(percentile(c, 99), 2), fmt(c.at(-1)!, 2)],
        ],
      ),
    );
    const n = (loopAfter.get('+Inf') ?? 0) - (loopBefore.get('+Inf') ?? 0);
    console.log(
      `event-loop delay over the burst (${n} samples): p50 ${bucketPercentile(loopBefore, loopAfter, 50)}, p90 ${bucketPercentile(loopBefore, loopAfter, 90)}, p99 ${bucketPercentile(loopBefore, loopAfter, 99)}`,
    );
    console.log(`every task ended ${fmt(burstSeconds, 1)} s after the first create`);
    console.log(
      `the server's main thread over the burst: ${fmt((sched1.cpu - sched0.cpu) / 1e9, 1)} s on a CPU, ${fmt((sched1.wait - sched0.wait) / 1e9, 1)} s runnable but waiting for one (/proc/<pid>/schedstat)`,
    );
    const byRoute = [...requests1]
      .map(([k, n]): [string, number] => [k, n - (requests0.get(k) ?? 0)])
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    console.log(
      table(
        ['HTTP requests served during the burst (route, method)', 'n'],
        byRoute.slice(0, 12).map(([k, n]) => [k, String(n)]),
      ),
    );
    const tStop = performance.now();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    // The profile ends when the server has stopped: the burst is before that stop.
    const stopMs = performance.now() - tStop;
    const file = readdirSync(profDir).find((f) => f.includes(`.${child.pid}.`) && f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile of ${child.pid} in ${profDir}`);
    console.log(`profile: ${join(profDir, file)} (the burst: ${fmt((tStop - t0) / 1000, 1)} s before SIGTERM; the stop took ${fmt(stopMs / 1000, 1)} s)`);
    const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile;
    printProfile(summarizeProfile(profile, { fromEndMs: stopMs + tStop - t0, toEndMs: stopMs }));
  } finally {
    clearTimeout(watchdog);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
