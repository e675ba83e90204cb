// Benchmark fixtures: a real agentplane server on loopback backed by the scripted model, a tiny
// REST helper, and a WebSocket client that timestamps what it receives.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { startServer, type RunningServer, type ServeOptions } from '../cmd/agentplane/serve.js';
import type { Agent, AgentResponse } from '../pkg/api/agent.js';
import type { AgentEvent } from '../pkg/api/event.js';
import { DEFAULT_NAMESPACE } from '../pkg/api/meta.js';
import { streamOf } from '../pkg/controller/agent-controller.js';
import { createLogger } from '../pkg/observability/logger.js';
import { DEFAULT_PLUGINS } from '../pkg/plugin/loader.js';
import { startScriptedModel, type ScriptedModel } from '../pkg/scriptedmodel/index.js';
import { opened } from '../test/support/waiting.js';

export const API_KEY = 'sk-ant-bench-0000000000000000';
const DEFAULT_TIMEOUT_MS = 30_000;

export interface BenchServer {
  server: RunningServer;
  model: ScriptedModel;
  dataDir: string;
  /** POST /api/v1/agents: creates the agent or gives an idle one a new task. */
  sendTask(name: string, instructions: string): Promise<number>;
  getAgent(name: string): Promise<AgentResponse>;
  /** The stored agent (spec.task, uid...), read directly from the registry. */
  agent(name: string): Promise<Agent>;
  /** Sequence number of the agent's newest event. */
  lastSeq(name: string): Promise<number>;
  /** Connects to the agent's event stream; with `since`, only events after that seq. */
  connect(name: string, since?: number): Promise<LiveSocket>;
  /** Polls until the agent has no task in progress. */
  waitIdle(name: string, timeoutMs?: number): Promise<void>;
  /** PATCH the agent's lifecycle (Sleep, Wake, ...). */
  setLifecycle(name: string, lifecycle: string): Promise<void>;
  /** Polls until the agent is asleep and its worker has stopped. */
  waitAsleep(name: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** `opts`: server options beside the defaults (the event benchmark's stand-in worker). */
export async function startBenchServer(opts: Partial<ServeOptions> = {}): Promise<BenchServer> {
  // Worker processes log to the service's stdout at this level (they inherit it); keep the table clean.
  process.env.AGENTPLANE_LOG_LEVEL ??= 'silent';
  const model = await startScriptedModel({ apiKey: API_KEY });
  const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-bench-'));
  let server: RunningServer;
  try {
    server = await startServer({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      plugins: DEFAULT_PLUGINS,
      model: { apiKey: API_KEY, baseUrl: model.url },
      logger: createLogger({ level: 'silent' }),
      ...opts,
    });
  } catch (err) {
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  const agentUrl = (name: string): string => `${server.url}/api/v1/agents/${encodeURIComponent(name)}`;
  const b: BenchServer = {
    server,
    model,
    dataDir,
    async sendTask(name, instructions) {
      const res = await fetch(`${server.url}/api/v1/agents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name, instructions }),
      });
      const text = await res.text();
      if (res.status !== 200 && res.status !== 201) throw new Error(`POST /agents: ${res.status} ${text}`);
      return res.status;
    },
    async getAgent(name) {
      const res = await fetch(agentUrl(name));
      if (res.status !== 200) throw new Error(`GET ${name}: ${res.status} ${await res.text()}`);
      return (await res.json()) as AgentResponse;
    },
    async agent(name) {
      const a = await server.agents.get(DEFAULT_NAMESPACE, name);
      if (!a) throw new Error(`agent ${name} not found`);
      return a;
    },
    async lastSeq(name) {
      return server.events.lastSeq(streamOf(await b.agent(name)));
    },
    async connect(name, since) {
      const ws = new LiveSocket(`${agentUrl(name)}/ws${since === undefined ? '' : `?since=${since}`}`.replace(/^http/, 'ws'));
      await ws.opened();
      return ws;
    },
    async waitIdle(name, timeoutMs = DEFAULT_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs;
      while ((await b.getAgent(name)).taskStatus === 'InProgress') {
        if (Date.now() > deadline) throw new Error(`agent ${name} still busy after ${timeoutMs} ms`);
        await sleep(10);
      }
    },
    async setLifecycle(name, lifecycle) {
      const res = await fetch(agentUrl(name), {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ lifecycle }),
      });
      if (res.status !== 200) throw new Error(`PATCH ${name}: ${res.status} ${await res.text()}`);
    },
    async waitAsleep(name, timeoutMs = DEFAULT_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs;
      const ref = { namespace: DEFAULT_NAMESPACE, name };
      while ((await b.getAgent(name)).status !== 'Sleeping' || server.local!.isRunning(ref)) {
        if (Date.now() > deadline) throw new Error(`agent ${name} still awake after ${timeoutMs} ms`);
        await sleep(10);
      }
    },
    async close() {
      await server.close();
      await model.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return b;
}

export interface Received<T> {
  value: T;
  /** performance.now() when the message arrived. */
  at: number;
}

/**
 * A WebSocket client that counts messages and bytes. Messages are only decoded when someone waits
 * on their content, so throughput runs measure transport, not client-side parsing.
 */
export class LiveSocket {
  count = 0;
  bytes = 0;
  /** The last message, kept raw. */
  last: Buffer | undefined;
  private readonly ws: WebSocket;
  private readonly listeners = new Set<(data: Buffer, at: number) => void>();
  private closed: Error | undefined;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (data: Buffer) => {
      const at = performance.now();
      this.count++;
      this.bytes += data.length;
      this.last = data;
      for (const fn of this.listeners) fn(data, at);
    });
    this.ws.on('close', (code, reason) => {
      this.closed = new Error(`socket closed: ${code} ${String(reason)}`);
    });
  }

  opened(): Promise<void> {
    return opened(this.ws);
  }

  /** Resolves with the first event (received from now on) that matches. */
  until(pred: (ev: AgentEvent) => boolean, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Received<AgentEvent>> {
    return this.wait((data, at) => {
      const ev = JSON.parse(String(data)) as AgentEvent;
      return pred(ev) ? { value: ev, at } : undefined;
    }, timeoutMs);
  }

  /** Resolves when `n` messages in total have arrived. */
  untilCount(n: number, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Received<number>> {
    if (this.count >= n) return Promise.resolve({ value: this.count, at: performance.now() });
    return this.wait((_data, at) => (this.count >= n ? { value: this.count, at } : undefined), timeoutMs);
  }

  /** Calls `fn` with every message from now on (raw, with its arrival time). */
  onMessage(fn: (data: Buffer, at: number) => void): void {
    this.listeners.add(fn);
  }

  close(): void {
    this.ws.close();
  }

  private wait<T>(check: (data: Buffer, at: number) => Received<T> | undefined, timeoutMs: number): Promise<Received<T>> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(this.closed);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(fn);
      };
      const fn = (data: Buffer, at: number): void => {
        const hit = check(data, at);
        if (hit) {
          done();
          resolve(hit);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms (${this.count} messages received)`));
      }, timeoutMs);
      this.listeners.add(fn);
    });
  }
}

/** Calls `fn(i)` for i in 0..n-1, `concurrency` at a time (creating many agents quickly). */
export async function forEachConcurrently(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }),
  );
}
