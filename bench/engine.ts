// Engine figures (issue 11): how soon a task reaches the model, what a trivial task costs in CPU,
// how many trivial tasks a second 8 agents get through, and what an idle agent holds. Each figure
// is printed beside a baseline measured in the same run: the engine started afresh for the task
// (a new engine process resuming the session, forced by switching the model each round, which is
// what every task cost before the engine stayed warm), or a released idle agent.

import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminal } from '../pkg/api/event.js';
import type { BenchServer } from './support.js';

/** Two model names the scripted model answers alike: switching between them restarts the engine. */
const MODELS = ['scripted-model-a', 'scripted-model-b'];
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Create and wake with the warm pool (--warm-pool), beside a server without one. */
export interface PoolFigures {
  size: number;
  create: { pool: number[]; plain: number[] };
  wake: { pool: number[]; plain: number[] };
  /** Creates that found a ready slot. */
  hits: number;
}

export interface EngineFigures {
  firstRequest: { warm: number[]; cold: number[]; released: number[] };
  cpuPerTask: { warm: number; cold: number };
  tasksPerSecond: { warm: number; cold: number; agents: number };
  memory: { warmAgents: number; warmMb: number; warmProcesses: number; releasedMb: number; releasedProcesses: number };
}

/** Sends a task and waits for its end; resolves with ms from POST to its first model request. */
async function timedTask(b: BenchServer, name: string, instructions: string): Promise<number> {
  const ws = await b.connect(name, await b.lastSeq(name));
  try {
    const end = ws.until((e) => isTerminal(e.type), 60_000);
    const t0 = Date.now();
    await b.sendTask(name, instructions);
    const ended = await end;
    if (ended.value.type !== 'task_completed') throw new Error(`${name}: task ended with ${ended.value.type}`);
    const first = b.model.requests.find((r) => r.hasTools && r.receivedAt >= t0 && r.lastUserText === instructions);
    if (!first) throw new Error(`${name}: no model request seen for "${instructions}"`);
    return first.receivedAt - t0;
  } finally {
    ws.close();
  }
}

/** Sets the agent's model (PATCH); the next task starts a new engine unless it already runs that model. */
async function setModel(b: BenchServer, name: string, model: string): Promise<void> {
  const res = await fetch(`${b.server.url}/api/v1/agents/${name}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model }),
  });
  if (res.status !== 200) throw new Error(`PATCH ${name}: ${res.status} ${await res.text()}`);
}

interface Proc {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in ticks: its own CPU and that of its reaped children. */
  ticks: number;
  rssKb: number;
  environ: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const status = readFileSync(`/proc/${d}/status`, 'utf8');
      const rss = /VmRSS:\s+(\d+)/.exec(status);
      let environ = '';
      try {
        environ = readFileSync(`/proc/${d}/environ`, 'utf8');
      } catch {
        // another user's process
      }
      out.push({
        pid: Number(d),
        ppid: Number(f[1]),
        ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
        rssKb: rss ? Number(rss[1]) : 0,
        environ,
      });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** The agent's worker and everything under it (its engine, the engine's tools). */
function agentTree(workspace: string): Proc[] {
  const all = processes();
  const roots = all.filter((p) => p.environ.includes(`\0AGENTPLANE_WORKSPACE=${workspace}\0`) || p.environ.startsWith(`AGENTPLANE_WORKSPACE=${workspace}\0`));
  const tree = new Set(roots.map((p) => p.pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => tree.has(p.pid));
}

const workspaceOf = (b: BenchServer, name: string): string => `${b.dataDir}/workspaces/default/${name}`;
const cpuTicks = (b: BenchServer, name: string): number => agentTree(workspaceOf(b, name)).reduce((n, p) => n + p.ticks, 0);

/** Warm agents on `warm` (idle timeout off); `short` releases idle workers after a few seconds. */
export async function engineFigures(warm: BenchServer, short: BenchServer, rounds: number, log: (s: string) => void): Promise<EngineFigures> {
  const name = 'engine';
  await warm.sendTask(name, '@say warm-up');
  await warm.waitIdle(name, 60_000);
  await setModel(warm, name, MODELS[0]);
  await timedTask(warm, name, '@say on model a');

  log('first model request: warm, then cold (model switched each round)');
  const firstRequest = { warm: [] as number[], cold: [] as number[], released: [] as number[] };
  let ticks = cpuTicks(warm, name);
  for (let i = 0; i < rounds; i++) firstRequest.warm.push(await timedTask(warm, name, `@say warm ${i}`));
  const warmTicks = cpuTicks(warm, name) - ticks;
  ticks = cpuTicks(warm, name);
  for (let i = 0; i < rounds; i++) {
    await setModel(warm, name, MODELS[(i + 1) % 2]);
    firstRequest.cold.push(await timedTask(warm, name, `@say cold ${i}`));
  }
  const coldTicks = cpuTicks(warm, name) - ticks;
  const cpuPerTask = { warm: (warmTicks / TICKS_PER_SECOND / rounds) * 1000, cold: (coldTicks / TICKS_PER_SECOND / rounds) * 1000 };

  log('8 agents at once');
  const agents = Array.from({ length: 8 }, (_, i) => `crowd-${i}`);
  await Promise.all(agents.map((a) => warm.sendTask(a, '@say warm-up')));
  await Promise.all(agents.map((a) => warm.waitIdle(a, 120_000)));
  await Promise.all(agents.map((a) => setModel(warm, a, MODELS[0])));
  await Promise.all(agents.map((a) => timedTask(warm, a, `@say ready ${a}`)));
  const burst = async (cold: boolean): Promise<number> => {
    const t0 = Date.now();
    for (let i = 0; i < rounds / 2; i++) {
      if (cold) await Promise.all(agents.map((a) => setModel(warm, a, MODELS[(i + 1) % 2])));
      await Promise.all(agents.map((a) => timedTask(warm, a, `@say ${cold ? 'cold' : 'warm'} burst ${i} ${a}`)));
    }
    return (agents.length * (rounds / 2)) / ((Date.now() - t0) / 1000);
  };
  const tasksPerSecond = { warm: await burst(false), cold: await burst(true), agents: agents.length };

  log('memory of idle agents, then released');
  const mb = (b: BenchServer, names: string[]): { mb: number; processes: number } => {
    const procs = names.flatMap((a) => agentTree(workspaceOf(b, a)));
    return { mb: procs.reduce((n, p) => n + p.rssKb, 0) / 1024, processes: procs.length };
  };
  const idle = mb(warm, agents);

  // The released baseline, and the first model request of a task that brings a released agent back.
  const sleepers = agents.map((a) => `napper-${a}`);
  await Promise.all(sleepers.map((a) => short.sendTask(a, '@say before the nap')));
  await Promise.all(sleepers.map((a) => short.waitIdle(a, 120_000)));
  const deadline = Date.now() + 60_000;
  while (mb(short, sleepers).processes > 0) {
    if (Date.now() > deadline) throw new Error('idle workers were not released');
    await sleep(200);
  }
  const released = mb(short, sleepers);
  for (const a of sleepers.slice(0, Math.min(sleepers.length, rounds))) {
    firstRequest.released.push(await timedTask(short, a, `@say back from the nap ${a}`));
  }
  return {
    firstRequest,
    cpuPerTask,
    tasksPerSecond,
    memory: {
      warmAgents: agents.length,
      warmMb: idle.mb / agents.length,
      warmProcesses: idle.processes,
      releasedMb: released.mb / sleepers.length,
      releasedProcesses: released.processes,
    },
  };
}

/** ms from POST of a new agent to its first model request; waits for the task to end. */
async function timedCreate(b: BenchServer, name: string, instructions: string): Promise<number> {
  const t0 = Date.now();
  await b.sendTask(name, instructions);
  const deadline = t0 + 120_000;
  let first: number | undefined;
  while (first === undefined) {
    if (Date.now() > deadline) throw new Error(`${name}: no model request seen for "${instructions}" (agent: ${JSON.stringify(await b.getAgent(name))})`);
    first = b.model.requests.find((r) => r.hasTools && r.receivedAt >= t0 && r.lastUserText === instructions)?.receivedAt;
    if (first === undefined) await sleep(2);
  }
  await b.waitIdle(name, 60_000);
  return first - t0;
}

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`bench: ${what} within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/**
 * Create -> first model request and wake (a released agent) -> first model request, on `pooled`
 * (a warm pool of `size`) and on `plain` (none), rounds interleaved. Both release idle workers
 * after a few seconds. Before each create the pool is full again, as it is when agents are
 * created less often than a slot starts.
 */
export async function poolFigures(pooled: BenchServer, plain: BenchServer, size: number, rounds: number, log: (s: string) => void): Promise<PoolFigures> {
  const local = pooled.server.local!;
  const f: PoolFigures = { size, create: { pool: [], plain: [] }, wake: { pool: [], plain: [] }, hits: 0 };
  const names = Array.from({ length: rounds }, (_, i) => `fresh-${i}`);
  log('create with and without the warm pool');
  for (const name of names) {
    await until('the warm pool is full', () => local.poolReady === size);
    const slots = local.poolPids();
    f.create.pool.push(await timedCreate(pooled, name, `@say hello ${name}`));
    if (slots.includes(local.pid({ namespace: 'default', name })!)) f.hits++;
    f.create.plain.push(await timedCreate(plain, name, `@say hello ${name}`));
  }
  log('wake released agents with and without the warm pool');
  const released = (b: BenchServer): boolean => names.every((name) => !b.server.local!.isRunning({ namespace: 'default', name }));
  await until('idle workers released', () => released(pooled) && released(plain));
  for (const name of names) {
    await until('the warm pool is full', () => local.poolReady === size);
    f.wake.pool.push(await timedTask(pooled, name, `@say back ${name}`));
    f.wake.plain.push(await timedTask(plain, name, `@say back ${name}`));
  }
  return f;
}
