// Events at wire speed, over the real path: a worker process (test/support/firehose-worker.ts, the
// control-channel protocol without an engine) -> control channel -> agent controller -> SQLite
// event store (group commit) -> EventLog -> the agent's WebSocket -> a client. The baseline, in the
// same run: the same producer process, equally niced, sending the same messages to a bare `ws`
// relay that parses each one, numbers it and sends it on to a client: the least any relay does.
// Figures: throughput (as fast as the producer may send) and latency at a fixed rate.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AgentEvent } from '../pkg/api/event.js';
import type { TaskMessage, WorkerMessage } from '../pkg/api/worker-protocol.js';
import { WORKER_NICENESS } from '../pkg/runtime/local/local-runtime.js';
import { FIREHOSE_CHANNEL_LIMITS, type FirehoseSpec, firehoseTask } from '../test/support/firehose.js';
import { type BenchServer, LiveSocket, startBenchServer } from './support.js';

const FIREHOSE_MAIN = fileURLToPath(new URL('../test/support/firehose-worker.js', import.meta.url));
const AGENT = 'firehose';
const TIMEOUT_MS = 120_000;

export interface WireRun {
  label: string;
  /** Text events received. */
  events: number;
  bytes: number;
  /** First text event sent (producer clock) -> last one received. */
  seconds: number;
  /** Per text event: sent -> received, ms. */
  latencies: number[];
  /** CPU time of this process (server or relay, and the client) per event, µs. */
  cpuMicros: number;
}

export const eventsPerSecond = (r: WireRun): number => r.events / r.seconds;

/** Reads one firehose task's events from `socket` until its task_completed. */
function collect(label: string, socket: LiveSocket, spec: FirehoseSpec, timed: boolean): Promise<WireRun> {
  let first: number | undefined;
  let last = 0;
  let events = 0;
  let bytes = 0;
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const stampOf = (ev: AgentEvent<'text'>): number => Number(ev.payload.content.slice(0, ev.payload.content.indexOf(' ')));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: ${events} of ${spec.count} events after ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    socket.onMessage((data, at) => {
      const wall = performance.timeOrigin + at;
      // Only the first and last are parsed when timing throughput: the client measures transport.
      const parse = timed || first === undefined || events >= spec.count - 1 || data.length < 200;
      if (!parse) {
        events++;
        bytes += data.length;
        last = wall;
        return;
      }
      const ev = JSON.parse(String(data)) as AgentEvent;
      if (ev.type === 'text') {
        const stamp = stampOf(ev as AgentEvent<'text'>);
        first ??= stamp;
        events++;
        bytes += data.length;
        last = wall;
        if (timed) latencies.push(wall - stamp);
      } else if (ev.type === 'task_completed') {
        clearTimeout(timer);
        if (events !== spec.count) return reject(new Error(`${label}: ${events} of ${spec.count} events before task_completed`));
        const cpu = process.cpuUsage(cpu0);
        resolve({ label, events, bytes, seconds: (last - first!) / 1000, latencies, cpuMicros: (cpu.user + cpu.system) / events });
      }
    });
  });
}

/** The agentplane path: a running server whose local runtime starts the firehose worker. */
export class AgentplaneWire {
  private constructor(private readonly b: BenchServer) {}

  static async start(): Promise<AgentplaneWire> {
    const b = await startBenchServer({ workerMain: FIREHOSE_MAIN, workerChannelLimits: FIREHOSE_CHANNEL_LIMITS });
    try {
      await b.sendTask(AGENT, 'warm up'); // starts the worker; the task completes at once
      await b.waitIdle(AGENT);
    } catch (err) {
      await b.close();
      throw err;
    }
    return new AgentplaneWire(b);
  }

  async run(spec: FirehoseSpec, timed: boolean): Promise<WireRun> {
    const ws = await this.b.connect(AGENT, await this.b.lastSeq(AGENT));
    try {
      const done = collect('agentplane', ws, spec, timed);
      await this.b.sendTask(AGENT, firehoseTask(spec));
      const run = await done;
      await this.b.waitIdle(AGENT);
      return run;
    } finally {
      ws.close();
    }
  }

  close(): Promise<void> {
    return this.b.close();
  }
}

/** The baseline: the same producer process, dialing a relay that only numbers and forwards. */
export class BareRelay {
  private seq = 0;
  private taskId = 0;
  private readonly subscribers = new Set<WebSocket>();

  private constructor(
    private readonly wss: WebSocketServer,
    private readonly producer: WebSocket,
    private readonly child: ChildProcess,
  ) {
    producer.on('message', (data) => {
      const msg = JSON.parse((data as Buffer).toString()) as WorkerMessage;
      if (msg.type !== 'event') return;
      const ev = { seq: ++this.seq, agentName: AGENT, namespace: 'default', task: msg.taskId, timestamp: new Date().toISOString(), ...msg.event };
      const json = JSON.stringify(ev);
      for (const s of this.subscribers) s.send(json);
    });
  }

  static async start(): Promise<BareRelay> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    const producer = new Promise<WebSocket>((resolve) =>
      wss.on('connection', (ws, req) => {
        if (req.url === '/produce') resolve(ws);
      }),
    );
    // As the local runtime starts workers: niced, so the comparison is like for like.
    const child = spawn('nice', ['-n', String(WORKER_NICENESS), process.execPath, FIREHOSE_MAIN, '--bare', `${url}/produce`], { stdio: 'inherit' });
    const relay = new BareRelay(wss, await producer, child);
    wss.on('connection', (ws, req) => {
      if (req.url !== '/subscribe') return;
      relay.subscribers.add(ws);
      ws.on('close', () => relay.subscribers.delete(ws));
    });
    return relay;
  }

  async run(spec: FirehoseSpec, timed: boolean): Promise<WireRun> {
    const ws = new LiveSocket(`ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/subscribe`);
    try {
      await ws.opened();
      while (this.subscribers.size === 0) await new Promise((r) => setImmediate(r));
      const done = collect('bare ws relay', ws, spec, timed);
      const task: TaskMessage = { type: 'task', taskId: ++this.taskId, instructions: firehoseTask(spec), model: 'none', role: 'worker', mcpServers: [] };
      this.producer.send(JSON.stringify(task));
      return await done;
    } finally {
      ws.close();
    }
  }

  async close(): Promise<void> {
    const exited = this.child.exitCode === null ? once(this.child, 'exit') : Promise.resolve();
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.child.kill();
    await exited;
  }
}

/** Throughput and latency of both paths, interleaved so machine noise hits both alike. */
export async function wireFigures(opts: {
  throughput: FirehoseSpec;
  latency: FirehoseSpec;
  rounds: number;
}): Promise<{ throughput: WireRun[][]; latency: WireRun[][] }> {
  const ap = await AgentplaneWire.start();
  let bare: BareRelay | undefined;
  try {
    bare = await BareRelay.start();
    const throughput: WireRun[][] = [];
    const latency: WireRun[][] = [];
    // One latency run of each path first, not counted: the client (in this process, beside the
    // server) parses every event only in latency runs, and the first one would otherwise pay
    // for compiling that code inside whichever path runs first.
    await ap.run(opts.latency, true);
    await bare.run(opts.latency, true);
    for (let i = 0; i < opts.rounds; i++) {
      throughput.push([await ap.run(opts.throughput, false), await bare.run(opts.throughput, false)]);
      latency.push([await ap.run(opts.latency, true), await bare.run(opts.latency, true)]);
    }
    return { throughput, latency };
  } finally {
    await bare?.close();
    await ap.close();
  }
}
