// Latency figures: how long a client waits between sending a task and seeing it happen.
// Each function returns named sample sets (ms); run.ts prints them as one table.

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminal } from '../pkg/api/event.js';
import type { BenchServer } from './support.js';

/**
 * Pause after the agent reports idle before the next round. The worker closes the engine's query
 * after task_completed is sent (~50 ms here) and queues a task that arrives meanwhile, so without
 * the pause the figure would include that close rather than an idle agent's dispatch.
 */
export const IDLE_PAUSE_MS = Number(process.env.BENCH_IDLE_PAUSE_MS ?? 250);

export interface LatencySamples {
  label: string;
  ms: number[];
}

/** Creates the agent with a first task (which also starts its worker) and waits until it is idle. */
export async function warmUp(b: BenchServer, name: string): Promise<void> {
  await b.sendTask(name, '@say warm-up');
  const ws = await b.connect(name); // without `since`: replays the current task from its start
  try {
    const end = await ws.until((e) => isTerminal(e.type), 60_000);
    if (end.value.type !== 'task_completed') throw new Error(`warm-up task ended with ${end.value.type}`);
  } finally {
    ws.close();
  }
  await b.waitIdle(name);
  await sleep(IDLE_PAUSE_MS);
}

/**
 * POST a task to an idle (running, warm) agent, `rounds` times. The WebSocket is opened live
 * before t0, so the figure is POST → task_started as a client sees it.
 */
export async function idleTaskLatency(b: BenchServer, name: string, rounds: number): Promise<LatencySamples[]> {
  const response: number[] = [];
  const started: number[] = [];
  const completed: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    const ws = await b.connect(name, await b.lastSeq(name));
    try {
      const waits = Promise.all([ws.until((e) => e.type === 'task_started', 10_000), ws.until((e) => isTerminal(e.type))]);
      const t0 = performance.now();
      await b.sendTask(name, `@say ${i}`);
      response.push(performance.now() - t0);
      const [start, end] = await waits;
      if (end.value.type !== 'task_completed') throw new Error(`round ${i} ended with ${end.value.type}`);
      started.push(start.at - t0);
      completed.push(end.at - t0);
    } finally {
      ws.close();
    }
    await b.waitIdle(name); // the terminal event is sent before the status write lands
    await sleep(IDLE_PAUSE_MS);
  }
  return [
    { label: 'POST → HTTP response', ms: response },
    { label: 'POST → task_started', ms: started },
    { label: 'POST → task_completed', ms: completed },
  ];
}

/**
 * POST a task to a sleeping agent (lifecycle Sleep, worker stopped), `rounds` times: the figure
 * includes waking it, starting its worker process and the control-channel handshake. The task
 * wakes the agent for good, so it is put back to sleep before each round.
 */
export async function wakeLatency(b: BenchServer, name: string, rounds: number): Promise<LatencySamples[]> {
  await warmUp(b, name);
  const started: number[] = [];
  const completed: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    await b.setLifecycle(name, 'Sleep');
    await b.waitAsleep(name);
    const ws = await b.connect(name, await b.lastSeq(name));
    try {
      const waits = Promise.all([ws.until((e) => e.type === 'task_started', 30_000), ws.until((e) => isTerminal(e.type))]);
      const t0 = performance.now();
      await b.sendTask(name, `@say woke ${i}`);
      const [start, end] = await waits;
      if (end.value.type !== 'task_completed') throw new Error(`wake round ${i} ended with ${end.value.type}`);
      started.push(start.at - t0);
      completed.push(end.at - t0);
    } finally {
      ws.close();
    }
  }
  return [
    { label: 'POST (asleep) → task_started', ms: started },
    { label: 'POST (asleep) → task_completed', ms: completed },
  ];
}
