// Integration harness: a real agentplane server (real plugins, SQLite, worker processes, engine)
// on loopback, pointed at the real scripted model server with a test key. Logs are captured so
// tests can prove the key never reaches them.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import WebSocket from 'ws';
import { startServer, type RunningServer, type ServeOptions } from '../../cmd/agentplane/serve.js';
import type { AgentEvent } from '../../pkg/api/event.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { DEFAULT_PLUGINS } from '../../pkg/plugin/loader.js';
import { Changes, opened } from './waiting.js';
import { startScriptedModel, type ScriptedModel } from '../../pkg/scriptedmodel/index.js';

export const TEST_API_KEY = 'sk-ant-test-4f1c9e7d2b8a6053';

export interface Harness {
  server: RunningServer;
  model: ScriptedModel;
  url: string;
  dataDir: string;
  /** Every log line the server (and its workers' stderr) wrote. */
  logs: string[];
  api<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  /** Restarts the server on the same data dir (and port), with `opts` changed if given, after `downtimeMs` stopped. */
  restart(opts?: Partial<ServeOptions>, downtimeMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface Reply<T> {
  status: number;
  body: T;
  text: string;
}

export async function startHarness(opts: Partial<ServeOptions> = {}): Promise<Harness> {
  const model = await startScriptedModel({ apiKey: TEST_API_KEY });
  const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-it-'));
  const logs: string[] = [];
  const sink = new PassThrough();
  sink.on('data', (chunk: Buffer) => logs.push(...String(chunk).split('\n').filter(Boolean)));
  const logger = createLogger({ level: 'info', destination: sink });
  const serve = (port: number, more: Partial<ServeOptions> = {}): Promise<RunningServer> =>
    startServer({
      host: '127.0.0.1',
      port,
      dataDir,
      plugins: DEFAULT_PLUGINS,
      model: { apiKey: TEST_API_KEY, baseUrl: model.url },
      logger,
      workerLogSink: (line) => logs.push(line),
      // The test MCP servers listen on loopback; a test passes false to see the default.
      allowPrivateConnectorUrls: true,
      ...opts,
      ...more,
    });
  let server: RunningServer;
  try {
    server = await serve(0);
  } catch (err) {
    // A server that refuses to start (a test of start-up checks) leaves nothing behind.
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  const h: Harness = {
    get server() {
      return server;
    },
    model,
    get url() {
      return server.url;
    },
    dataDir,
    logs,
    async api(method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${server.url}${path}`, init);
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON (metrics)
      }
      return { status: res.status, body: parsed as any, text };
    },
    async restart(more, downtimeMs = 0) {
      const port = server.port;
      await server.close();
      if (downtimeMs) await new Promise((resolve) => setTimeout(resolve, downtimeMs));
      server = await serve(port, more);
      // This process's fetch may still hold keep-alive sockets the old server closed; a request
      // on one fails ("other side closed") and is not retried. Use them up here.
      for (let i = 0; i < 5; i++) {
        try {
          if ((await fetch(`${server.url}/healthz`)).ok) break;
        } catch {
          // a stale socket; the next attempt takes another
        }
      }
    },
    async close() {
      await server.close();
      await model.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}

/** A WebSocket client that collects events; `until` waits for a predicate. */
export class EventClient {
  readonly events: AgentEvent[] = [];
  readonly raw: string[] = [];
  private readonly ws: WebSocket;
  private readonly changes = new Changes();
  closed?: { code: number; reason: string };

  constructor(url: string) {
    this.ws = new WebSocket(url.replace(/^http/, 'ws'));
    this.ws.on('message', (d) => {
      this.raw.push((d as Buffer).toString());
      this.events.push(JSON.parse((d as Buffer).toString()) as AgentEvent);
      this.changes.notify();
    });
    this.ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.changes.notify();
    });
  }

  opened(): Promise<void> {
    return opened(this.ws);
  }

  async until(pred: (evs: AgentEvent[]) => boolean, timeoutMs = 45_000): Promise<AgentEvent[]> {
    await this.changes.until(
      () => pred(this.events),
      timeoutMs,
      (why) =>
        why === 'broken'
          ? new Error(`socket closed (${this.closed!.code} ${this.closed!.reason}) before condition; got ${this.types()}`)
          : new Error(`timed out; events so far: ${this.types()}`),
      () => this.closed !== undefined,
    );
    return this.events;
  }

  /** Waits for the end of a task: task_completed, task_cancelled or error. */
  untilTaskEnd(task?: number): Promise<AgentEvent[]> {
    return this.until((evs) => evs.some((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type) && (task === undefined || e.task === task)));
  }

  types(): string {
    return this.events.map((e) => `${e.seq}:${e.type}`).join(', ');
  }

  close(): void {
    this.ws.close();
  }
}

/** Polls until `fn` returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A shell command that keeps a tool busy for `seconds`. The engine refuses a bare `sleep N` as a
 * tool call ("standalone sleep"), so tests wait the way real work does: a process that runs.
 */
export const busyFor = (seconds: number): string => `node -e "setTimeout(() => {}, ${seconds * 1000})"`;
