// Redis-backed EventStore (several replicas share it): one Redis Stream per agent (per uid), its
// entry ids `<seq>-0`, so XRANGE/XREVRANGE answer `since` and `list` by seq directly. Appends run
// one Lua script (append-script.ts): seq from a per-name counter that outlives deleteStream, the
// entry, the task index, the trim to the cap. Live follow (follower.ts) reads the streams with
// XREAD BLOCK on a connection of its own.
//
// node-redis reconnects by itself; commands issued while it does wait in its offline queue (in
// order) so a short Redis restart delays appends instead of failing them. `ping` (readiness)
// fails at once while the connection is down.

import fs from 'node:fs';

import { createClient, type RedisClientOptions } from 'redis';

import type { AgentEvent, EventDraft } from '../../pkg/api/event.js';
import type { EventStore, ListOptions, Logger, StreamRef } from '../../pkg/plugin/types.js';
import { APPEND_SCRIPT } from './append-script.js';
import { idOf, type RawEntry, seqOf, toEvent } from './entries.js';
import { StreamFollower } from './follower.js';
import { checkKeyPrefix, streamKeys } from './keys.js';

export interface RedisConnection {
  /** redis://host:port[/db] or rediss://... (TLS). */
  url: string;
  username?: string;
  password?: string;
  /**
   * A file holding the password, read again at every (re)connection, so a rotated Secret
   * (a mounted file Kubernetes updates) takes effect on the next reconnect. Wins over `password`.
   */
  passwordFile?: string;
  /** TLS: PEM CA bundle that signs Redis's certificate (implies TLS). */
  ca?: string | Buffer;
  /** TLS client certificate and key (PEM), when Redis asks for one. */
  cert?: string | Buffer;
  key?: string | Buffer;
}

/** Where the store reports its latency and reconnects (metrics.ts). */
export interface StoreObserver {
  operation(op: string, seconds: number, ok: boolean): void;
  reconnect(connection: 'commands' | 'follow'): void;
}

export interface RedisEventStoreOptions {
  connection: RedisConnection;
  /** Events kept per stream (the newest); unbounded when absent. */
  maxEventsPerStream?: number;
  /** Prefix of every key (default "agentplane"). */
  keyPrefix?: string;
  observer?: StoreObserver;
  logger?: Logger;
}

/** Pages of XRANGE while looking for a trimmed task's first kept event. */
const SCAN_PAGE = 500;
/** How long a readiness ping may take (ms). */
const PING_TIMEOUT_MS = 2000;

type Client = ReturnType<typeof createClient>;

export class RedisEventStore implements EventStore {
  private readonly commands: Client;
  private readonly reader: Client;
  private readonly follower: StreamFollower;
  private readonly prefix: string;
  private readonly max: number | undefined;
  private readonly observer: StoreObserver | undefined;
  private readonly logger: Logger | undefined;
  private scriptSha: string | undefined;
  private lastError: string | undefined;
  private closed = false;
  private readonly connected: Promise<unknown>;

  constructor(opts: RedisEventStoreOptions) {
    const max = opts.maxEventsPerStream;
    if (max !== undefined && !(Number.isInteger(max) && max >= 1)) throw new Error(`maxEventsPerStream must be a positive integer, got ${max}`);
    this.max = max;
    this.prefix = checkKeyPrefix(opts.keyPrefix ?? 'agentplane');
    this.observer = opts.observer;
    this.logger = opts.logger;
    this.commands = createClient(clientOptions(opts.connection));
    this.reader = this.commands.duplicate();
    this.watch(this.commands, 'commands');
    this.watch(this.reader, 'follow');
    this.reader.on('ready', () => this.follower?.readerReconnected());
    this.follower = new StreamFollower(this.commands, this.reader, this.logger);
    // Not awaited by the constructor: a server starts (not ready) while Redis is unreachable.
    this.connected = Promise.all([this.commands.connect(), this.reader.connect()]);
    this.connected.catch((err: unknown) => this.noteError(err));
  }

  /** Resolves once both connections are up (tests, start-up logs). */
  async ready(): Promise<void> {
    await this.connected;
  }

  async append(stream: StreamRef, draft: EventDraft): Promise<AgentEvent> {
    const k = streamKeys(this.prefix, stream);
    const timestamp = draft.timestamp ?? new Date().toISOString();
    // The service sets the task; a draft without one is stored as task 0 (no task).
    const task = draft.task ?? 0;
    const seq = await this.timed('append', () =>
      this.script([k.counter, k.events, k.taskFirst, k.taskLast], [String(this.max ?? 0), String(task), draft.type, timestamp, JSON.stringify(draft.payload)]),
    );
    return { seq: Number(seq), agentName: stream.name, namespace: stream.namespace, task, type: draft.type, timestamp, payload: draft.payload };
  }

  async list(stream: StreamRef, opts: ListOptions): Promise<AgentEvent[]> {
    const limit = Math.max(0, Math.floor(opts.limit));
    if (limit === 0) return [];
    if (opts.before !== undefined && opts.before <= 1) return [];
    const end = opts.before === undefined ? '+' : idOf(opts.before - 1);
    const raw = await this.timed('list', () =>
      this.commands.sendCommand<RawEntry[]>(['XREVRANGE', streamKeys(this.prefix, stream).events, end, '-', 'COUNT', String(limit)]),
    );
    return raw.reverse().map((e) => toEvent(stream, e));
  }

  async since(stream: StreamRef, after: number, max?: number): Promise<AgentEvent[]> {
    const count = max === undefined ? [] : ['COUNT', String(Math.max(0, Math.floor(max)))];
    if (max !== undefined && count[1] === '0') return [];
    const raw = await this.timed('since', () =>
      this.commands.sendCommand<RawEntry[]>(['XRANGE', streamKeys(this.prefix, stream).events, idOf(Math.max(0, Math.floor(after)) + 1), '+', ...count]),
    );
    return raw.map((e) => toEvent(stream, e));
  }

  async taskStart(stream: StreamRef, task: number): Promise<number | undefined> {
    const k = streamKeys(this.prefix, stream);
    return this.timed('taskStart', async () => {
      const [first, last, oldest] = await Promise.all([
        this.commands.sendCommand<string | null>(['HGET', k.taskFirst, String(task)]),
        this.commands.sendCommand<string | null>(['ZSCORE', k.taskLast, String(task)]),
        this.commands.sendCommand<RawEntry[]>(['XRANGE', k.events, '-', '+', 'COUNT', '1']),
      ]);
      if (first === null || last === null || oldest.length === 0) return undefined;
      const keptFrom = seqOf(oldest[0][0]);
      if (Number(first) >= keptFrom) return Number(first);
      // The task's first events were trimmed: its first kept one, at most up to its last.
      let from = keptFrom;
      for (;;) {
        const page = await this.commands.sendCommand<RawEntry[]>(['XRANGE', k.events, idOf(from), idOf(Number(last)), 'COUNT', String(SCAN_PAGE)]);
        const hit = page.find((e) => toEvent(stream, e).task === task);
        if (hit) return seqOf(hit[0]);
        if (page.length < SCAN_PAGE) return undefined;
        from = seqOf(page[page.length - 1][0]) + 1;
      }
    });
  }

  async lastSeq(stream: StreamRef): Promise<number> {
    const tail = await this.timed('lastSeq', () =>
      this.commands.sendCommand<RawEntry[]>(['XREVRANGE', streamKeys(this.prefix, stream).events, '+', '-', 'COUNT', '1']),
    );
    return tail.length ? seqOf(tail[0][0]) : 0;
  }

  async deleteStream(stream: StreamRef): Promise<void> {
    const k = streamKeys(this.prefix, stream);
    await this.timed('deleteStream', () => this.commands.sendCommand(['DEL', k.events, k.taskFirst, k.taskLast]));
  }

  follow(stream: StreamRef, onEvents: (events: AgentEvent[]) => void): () => void {
    return this.follower.follow(streamKeys(this.prefix, stream).events, stream, onEvents);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('the Redis event store is closed');
    if (!this.commands.isReady) throw new Error(`Redis is not connected${this.lastError ? `: ${this.lastError}` : ''}`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer PING within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
    });
    try {
      await this.timed('ping', () => Promise.race([this.commands.sendCommand(['PING']), timeout]));
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The follower's blocked XREAD ends with its connection.
    this.reader.destroy();
    await this.follower.close();
    // A connected client finishes what it was asked first; one still (re)connecting stops now.
    if (this.commands.isReady) await this.commands.close().catch(() => this.commands.destroy());
    else if (this.commands.isOpen) this.commands.destroy();
    await this.connected.catch(() => undefined);
  }

  private async script(keys: string[], args: string[]): Promise<unknown> {
    const n = String(keys.length);
    if (this.scriptSha) {
      try {
        return await this.commands.sendCommand(['EVALSHA', this.scriptSha, n, ...keys, ...args]);
      } catch (err) {
        if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      }
    }
    // First use, or Redis restarted without its script cache: EVAL caches it again.
    const result = await this.commands.sendCommand(['EVAL', APPEND_SCRIPT, n, ...keys, ...args]);
    this.scriptSha ??= await this.commands.sendCommand<string>(['SCRIPT', 'LOAD', APPEND_SCRIPT]);
    return result;
  }

  private async timed<T>(op: string, fn: () => Promise<T>): Promise<T> {
    const start = process.hrtime.bigint();
    let ok = false;
    try {
      const result = await fn();
      ok = true;
      return result;
    } finally {
      this.observer?.operation(op, Number(process.hrtime.bigint() - start) / 1e9, ok);
    }
  }

  private watch(client: Client, connection: 'commands' | 'follow'): void {
    // An 'error' listener is required (node-redis emits one per failed attempt); log once per outage.
    let down = false;
    client.on('error', (err: unknown) => {
      this.noteError(err);
      if (!down && !this.closed) this.logger?.warn({ connection, err: String(err) }, 'redis event store: connection error');
      down = true;
    });
    client.on('reconnecting', () => {
      if (!this.closed) this.observer?.reconnect(connection);
    });
    client.on('ready', () => {
      if (down) this.logger?.info({ connection }, 'redis event store: connected again');
      down = false;
      if (connection === 'commands') this.lastError = undefined;
    });
  }

  private noteError(err: unknown): void {
    this.lastError = err instanceof Error ? err.message || err.name : String(err);
  }
}

/** node-redis options: the URL, credentials, TLS, and a reconnect backoff capped at 2 s. */
function clientOptions(c: RedisConnection): RedisClientOptions {
  const tls = c.url.startsWith('rediss:') || c.ca !== undefined;
  return {
    url: c.url,
    ...(c.passwordFile !== undefined
      ? {
          credentialsProvider: {
            type: 'async-credentials-provider' as const,
            credentials: async () => ({ ...(c.username !== undefined ? { username: c.username } : {}), password: readPassword(c.passwordFile!) }),
          },
        }
      : {
          ...(c.username !== undefined ? { username: c.username } : {}),
          ...(c.password !== undefined ? { password: c.password } : {}),
        }),
    socket: {
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 6), 2000),
      connectTimeout: 5000,
      ...(tls
        ? {
            tls: true as const,
            ...(c.ca !== undefined ? { ca: c.ca } : {}),
            ...(c.cert !== undefined ? { cert: c.cert } : {}),
            ...(c.key !== undefined ? { key: c.key } : {}),
          }
        : {}),
    },
  };
}

/** The password in a file, one trailing newline dropped (as `echo` or a Secret's file leaves it). */
export function readPassword(file: string): string {
  return fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
}
