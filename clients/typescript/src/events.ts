// The live event stream of one agent, /api/v1/agents/{name}/ws, as an async iterator of typed
// events. Written by hand: OpenAPI has no WebSockets. What it follows (README.md, docs/cli.md):
// - a replay, then live events, each once, in `seq` order; `since=<seq>` starts after that seq
//   (without it, at the current task's first event);
// - the server pings every 30 s (ws answers with pongs); a connection silent for `idleTimeoutMs`
//   is taken for dead;
// - close codes: 4008 "fell behind, resume with since=<seq>" and a dropped connection are resumed
//   from the last seq received; 4410 agent deleted, 4401 token revoked or expired, 4404 agent
//   not found and 4429 too many subscribers end the stream with an EventStreamError, and so does
//   a refused handshake (its HTTP status and the body's `reason`).

import WebSocket from 'ws';
import type { components } from './schema.js';

export type AgentEvent = components['schemas']['Event'];

export const CLOSE_CODES = { fellBehind: 4008, tokenRevoked: 4401, agentNotFound: 4404, agentDeleted: 4410, tooManySubscribers: 4429 } as const;

export interface FollowOptions {
  /** The server, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  agent: string;
  namespace?: string;
  /** Start after this seq (resume); default: the current task's first event. */
  since?: number;
  token?: string;
  /** Stops following: the iterator ends. */
  signal?: AbortSignal;
  /** Reconnects in a row before giving up on a dropped connection; default 5. */
  retries?: number;
  /** Silence (no event, no ping) after which the connection is dropped; default 75 s. */
  idleTimeoutMs?: number;
}

/** Why a stream ended: a close code (`code`) or a refused handshake (`status`), and the reason. */
export class EventStreamError extends Error {
  readonly code: number | undefined;
  readonly status: number | undefined;
  readonly reason: string;
  constructor(reason: string, at: { code?: number; status?: number }) {
    super(at.status !== undefined ? `event stream refused: ${at.status} ${reason}` : `event stream closed: ${at.code} ${reason}`);
    this.name = 'EventStreamError';
    this.reason = reason;
    this.code = at.code;
    this.status = at.status;
  }
}

type Item = { event: AgentEvent } | { closed: number; reason: string } | { failed: Error };

/** Follows an agent's events until `signal` aborts, the caller stops iterating, or the stream ends. */
export async function* followEvents(opts: FollowOptions): AsyncGenerator<AgentEvent, void, undefined> {
  let since = opts.since;
  let dropped = 0;
  while (!opts.signal?.aborted) {
    const conn = new Connection(streamUrl(opts, since), opts);
    let item: Exclude<Item, { event: AgentEvent }>;
    try {
      for (let next = await conn.next(); ; next = await conn.next()) {
        if (!('event' in next)) {
          item = next;
          break;
        }
        since = next.event.seq;
        dropped = 0;
        yield next.event;
      }
    } finally {
      conn.close();
    }
    if (opts.signal?.aborted) return;
    if ('failed' in item) {
      if (item.failed instanceof EventStreamError) throw item.failed;
      if (++dropped > (opts.retries ?? 5)) throw item.failed;
    } else if (item.closed === CLOSE_CODES.fellBehind) {
      since = Number(/since=(\d+)/.exec(item.reason)?.[1] ?? since);
    } else if (item.closed === 1000 || (item.closed >= 4000 && item.closed !== CLOSE_CODES.fellBehind)) {
      throw new EventStreamError(item.reason, { code: item.closed });
    } else if (++dropped > (opts.retries ?? 5)) {
      throw new EventStreamError(item.reason || 'connection dropped', { code: item.closed });
    }
    await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** dropped, 5000)));
  }
}

function streamUrl(opts: FollowOptions, since: number | undefined): string {
  const url = new URL(`/api/v1/agents/${encodeURIComponent(opts.agent)}/ws`, opts.baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (opts.namespace) url.searchParams.set('namespace', opts.namespace);
  if (since !== undefined) url.searchParams.set('since', String(since));
  return url.toString();
}

/** One WebSocket, read as a queue of items; its end is the last item. */
class Connection {
  private readonly ws: WebSocket;
  private readonly queue: Item[] = [];
  private wake: (() => void) | undefined;
  private done = false;
  private idle: NodeJS.Timeout | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly onAbort = (): void => this.end({ closed: 1000, reason: 'aborted' });

  constructor(url: string, opts: FollowOptions) {
    this.ws = new WebSocket(url, { headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {} });
    const idleMs = opts.idleTimeoutMs ?? 75_000;
    const alive = (): void => {
      clearTimeout(this.idle);
      this.idle = setTimeout(() => this.end({ failed: new Error(`no event or ping for ${idleMs} ms`) }), idleMs);
    };
    alive();
    this.ws.on('ping', alive);
    // binaryType is ws's default, 'nodebuffer': every message arrives as one Buffer.
    this.ws.on('message', (data) => {
      alive();
      this.push({ event: JSON.parse((data as Buffer).toString()) as AgentEvent });
    });
    this.ws.on('close', (code, reason) => this.end({ closed: code, reason: reason.toString() }));
    this.ws.on('error', (err) => this.end({ failed: err }));
    this.ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => this.end({ failed: new EventStreamError(reasonOf(body, res.statusMessage), { status: res.statusCode ?? 0 }) }));
    });
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.signal = opts.signal;
  }

  async next(): Promise<Item> {
    while (this.queue.length === 0) await new Promise<void>((r) => (this.wake = r));
    return this.queue.shift()!;
  }

  close(): void {
    clearTimeout(this.idle);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.ws.removeAllListeners('message');
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }

  private push(item: Item): void {
    if (this.done) return;
    this.queue.push(item);
    this.wake?.();
  }

  private end(item: Item): void {
    this.push(item);
    this.done = true;
    clearTimeout(this.idle);
  }
}

function reasonOf(body: string, fallback: string | undefined): string {
  try {
    const parsed = JSON.parse(body) as { reason?: unknown };
    if (typeof parsed.reason === 'string') return parsed.reason;
  } catch {
    // not JSON: the status text says it
  }
  return fallback ?? 'refused';
}
