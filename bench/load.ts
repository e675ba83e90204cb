// `make load` (node dist/bench/load.js): many agents running tasks at once, watched by many
// WebSocket subscribers, on one embedded server (`serve --demo`: the scripted model, real
// workers) in its own process on loopback. Checks that every subscriber got every event of its
// agent in order with nothing missing and that no request got a 5xx; prints delivery latency,
// 5xx count, memory (PSS of the server and its workers) and how long the workers take to end
// once the agents sleep, beside a baseline of one agent measured
// the same way in the same run. Asserts the correctness figures (exit 1 on a miss); bounded.
//
// LOAD_AGENTS (default 200), LOAD_SUBSCRIBERS (default 1000, spread over the agents),
// LOAD_TIMEOUT_S (default 600).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { fmt, percentile, table } from './stats.js';
import { processTree, treeMemory } from '../test/support/server-process.js';

const AGENTS = Number(process.env.LOAD_AGENTS ?? 200);
const SUBSCRIBERS = Number(process.env.LOAD_SUBSCRIBERS ?? 1000);
const TIMEOUT_MS = Number(process.env.LOAD_TIMEOUT_S ?? 600) * 1000;
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'cmd', 'agentplane', 'main.js');
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
}

async function startServer(): Promise<{ url: string; child: ChildProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-load-'));
  const child = spawn(process.execPath, [MAIN, 'serve', '--demo', '--host', '127.0.0.1', '--port', '0', '--data-dir', join(dir, 'data')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AGENTPLANE_LOG_LEVEL: 'info' },
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += String(d);
      const m = /"url":"(http:\/\/[^"]+)".*agentplane is serving/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}): ${out.slice(-2000)}`)));
  });
  child.stdout.resume();
  return { url, child, dir };
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

/** One run: `agents` sleeping agents each woken by a task, `subscribers` sockets; then asleep again. */
async function run(url: string, pid: number, prefix: string, agents: number, subscribers: number): Promise<Figures> {
  let fiveXx = 0;
  let staleRetries = 0;
  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    const init = { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) };
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, init);
    } catch (err) {
      // A pooled keep-alive connection the server closed as idle just as fetch reused it (the
      // client's expiry timer runs late on a saturated machine): a browser retries such a
      // request on a new connection; so do we, for the requests that are safe to repeat.
      if (method === 'POST' || (err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
      staleRetries++;
      res = await fetch(`${url}${path}`, init);
    }
    if (res.status >= 500) fiveXx++;
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const names = Array.from({ length: agents }, (_, i) => `${prefix}-${i}`);
  // The agents exist (asleep) before anyone subscribes, so subscribers see every event from seq 1.
  await Promise.all(names.map((name) => api('POST', '/api/v1/agents', { name, instructions: '@say ready' })));
  await waitAll(api, names, (a) => a.taskStatus !== 'InProgress');
  /** Puts every agent to sleep and waits for their workers to end; the seconds that took. */
  const sleepAll = async (): Promise<number> => {
    const t = Date.now();
    await Promise.all(names.map((name) => api('PATCH', `/api/v1/agents/${name}`, { lifecycle: 'Sleep' })));
    await waitAll(api, names, (a) => a.status === 'Sleeping');
    const deadline = Date.now() + TIMEOUT_MS;
    while (workerProcesses(pid) > 0) {
      if (Date.now() > deadline) throw new Error(`worker processes still run ${TIMEOUT_MS / 1000} s after every agent slept`);
      await sleep(250);
    }
    return (Date.now() - t) / 1000;
  };
  await sleepAll();
  const start = (await Promise.all(names.map((n) => api('GET', `/api/v1/agents/${n}/events?limit=200`)))).map((r) => r.events.at(-1)?.seq ?? 0);

  const memBefore = treeMemory(pid);
  let peak = memBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, treeMemory(pid))), 1000);
  const received: { agent: number; seqs: number[]; latencies: number[]; ws: WebSocket }[] = [];
  await Promise.all(
    Array.from({ length: subscribers }, (_, i) => {
      const agent = i % agents;
      const sub = {
        agent,
        seqs: [] as number[],
        latencies: [] as number[],
        ws: new WebSocket(`${url.replace('http', 'ws')}/api/v1/agents/${names[agent]}/ws?since=${start[agent]}`),
      };
      sub.ws.on('message', (d) => {
        const ev = JSON.parse((d as Buffer).toString()) as { seq: number; timestamp: string };
        sub.seqs.push(ev.seq);
        sub.latencies.push(Date.now() - Date.parse(ev.timestamp));
      });
      received.push(sub);
      return new Promise<void>((resolve, reject) => {
        sub.ws.once('open', () => resolve());
        sub.ws.once('unexpected-response', (_req, res) => {
          if ((res.statusCode ?? 0) >= 500) fiveXx++;
          reject(new Error(`subscriber ${i}: HTTP ${res.statusCode}`));
        });
        sub.ws.once('error', reject);
      });
    }),
  );
  const t0 = Date.now();
  await Promise.all(names.map((name, i) => api('POST', '/api/v1/agents', { name, instructions: TASK(i) })));
  await waitAll(api, names, (a) => a.taskStatus !== 'InProgress');
  const seconds = (Date.now() - t0) / 1000;
  // What each agent's history holds after the start: the truth every subscriber is held to.
  const truth = await Promise.all(
    names.map(async (n, i) =>
      ((await api('GET', `/api/v1/agents/${n}/events?limit=200`)).events as { seq: number }[]).map((e) => e.seq).filter((s) => s > start[i]!),
    ),
  );
  await sleep(500);
  clearInterval(sampler);
  let missing = 0;
  let outOfOrder = 0;
  let delivered = 0;
  let expected = 0;
  for (const sub of received) {
    sub.ws.close();
    const want = truth[sub.agent];
    delivered += sub.seqs.length;
    expected += want.length;
    missing += want.filter((s) => !sub.seqs.includes(s)).length;
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
    fiveXx,
    staleRetries,
    latencies: received.flatMap((s) => s.latencies).sort((a, b) => a - b),
    memory: { before: memBefore, peak, after: treeMemory(pid) },
    stopSeconds,
    seconds,
  };
}

async function waitAll(api: (m: string, p: string) => Promise<any>, names: string[], pred: (a: any) => boolean): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  let pending = names;
  while (pending.length) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pending.length} agents (${pending.slice(0, 5).join(', ')}...)`);
    const states = await Promise.all(pending.map((n) => api('GET', `/api/v1/agents/${n}`)));
    pending = pending.filter((_, i) => !pred(states[i]));
    if (pending.length) await sleep(250);
  }
}

async function main(): Promise<void> {
  const perAgent = Math.max(1, Math.round(SUBSCRIBERS / AGENTS));
  console.log(`agentplane load: ${AGENTS} agents, ${SUBSCRIBERS} WebSocket subscribers (${perAgent} per agent), one embedded server (--demo), loopback`);
  const { url, child, dir } = await startServer();
  const watchdog = setTimeout(() => {
    console.error('load: watchdog fired');
    child.kill('SIGKILL');
    process.exit(2);
  }, TIMEOUT_MS * 2);
  try {
    const base = await run(url, child.pid!, 'base', 1, perAgent);
    const load = await run(url, child.pid!, 'load', AGENTS, SUBSCRIBERS);
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
    const bad = [base, load].filter((x) => x.missing || x.outOfOrder || x.fiveXx || x.delivered !== x.expected);
    if (bad.length) {
      console.error('load: FAILED: a subscriber missed events, got them out of order, or a request got a 5xx');
      process.exitCode = 1;
    }
  } finally {
    clearTimeout(watchdog);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
