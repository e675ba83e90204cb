// Throughput figures: events/s through one agentplane WebSocket, and the same traffic over a bare
// `ws` server on this machine as the ceiling to compare against.

import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setImmediate as tick } from 'node:timers/promises';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AgentEvent } from '../pkg/api/event.js';
import { streamOf } from '../pkg/controller/agent-controller.js';
import { LiveSocket, type BenchServer } from './support.js';

/** Messages produced between yields to the event loop, on both paths alike. */
const BATCH = 100;
const TIMEOUT_MS = 60_000;

export interface Throughput {
  label: string;
  messages: number;
  bytes: number;
  seconds: number;
  /** When the producer finished sending (agentplane: the last append returned). */
  producerSeconds: number;
}

export const perSecond = (t: Throughput): number => t.messages / t.seconds;
export const mbPerSecond = (t: Throughput): number => t.bytes / 1e6 / t.seconds;

/**
 * Appends `count` text events to the agent's stream through the event log (store + fan-out) and
 * times first append → last event received by a live client. Returns one received event's JSON
 * as a sample for the bare comparison.
 */
export async function agentplaneThroughput(b: BenchServer, name: string, count: number): Promise<{ result: Throughput; sample: string }> {
  const agent = await b.agent(name);
  const stream = streamOf(agent);
  const draft = { type: 'text' as const, task: agent.spec.task, payload: { content: 'x'.repeat(100) } };
  const ws = await b.connect(name, await b.lastSeq(name));
  try {
    const received = ws.untilCount(count, TIMEOUT_MS);
    const t0 = performance.now();
    let last: AgentEvent | undefined;
    for (let sent = 0; sent < count; ) {
      const n = Math.min(BATCH, count - sent);
      const batch = await Promise.all(Array.from({ length: n }, () => b.server.events.append(stream, draft)));
      last = batch[batch.length - 1];
      sent += n;
      await tick();
    }
    const produced = performance.now();
    const { at } = await received;
    const sample = String(ws.last);
    const got = JSON.parse(sample) as AgentEvent;
    if (got.seq !== last?.seq) throw new Error(`last event received has seq ${got.seq}, expected ${last?.seq}`);
    const seconds = (at - t0) / 1000;
    const result = { label: 'agentplane', messages: ws.count, bytes: ws.bytes, seconds, producerSeconds: (produced - t0) / 1000 };
    return { result, sample };
  } finally {
    ws.close();
  }
}

/** Sends `count` copies of `message` from a plain ws server to a ws client, batched the same way. */
export async function bareThroughput(message: string, count: number): Promise<Throughput> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new LiveSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  try {
    await client.opened();
    const [socket] = await accepted;
    const received = client.untilCount(count, TIMEOUT_MS);
    const t0 = performance.now();
    for (let sent = 0; sent < count; ) {
      const n = Math.min(BATCH, count - sent);
      for (let i = 0; i < n; i++) socket.send(message);
      sent += n;
      await tick();
    }
    const produced = performance.now();
    const { at } = await received;
    const seconds = (at - t0) / 1000;
    return { label: 'bare ws', messages: client.count, bytes: client.bytes, seconds, producerSeconds: (produced - t0) / 1000 };
  } finally {
    client.close();
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  }
}
