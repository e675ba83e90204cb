// Live follow across processes: one blocking connection per store reads every followed stream
// with a single XREAD BLOCK, so a replica delivers events any replica appended, in seq order.
//
// Each follower (a WebSocket, a log stream) has its own cursor. It is fixed by a read of the
// stream's tail on the *command* connection, issued before follow() returns: Redis answers one
// connection's commands in order, so any read the caller issues afterwards (its replay) sees at
// least up to that cursor, and replay plus live leave no gap. The XREAD asks each stream from the
// lowest cursor of its followers; each follower gets only what is above its own cursor.
//
// A new follower or a lower cursor interrupts the blocked read (CLIENT UNBLOCK) so it takes effect
// at once; the BLOCK timeout is a backstop for an unblock that overtakes the XREAD it meant.
// A dropped connection costs nothing: the cursors stay, the read resumes once node-redis has
// reconnected, and what Redis kept meanwhile is delivered then.

import type { AgentEvent } from '../../pkg/api/event.js';
import type { Logger, StreamRef } from '../../pkg/plugin/types.js';
import { idOf, type RawEntry, seqOf, toEvent } from './entries.js';

/** The slice of a node-redis client the follower uses. */
export interface CommandClient {
  sendCommand<T = unknown>(args: string[]): Promise<T>;
}

interface Listener {
  /** Highest seq delivered (or below the start); undefined until the tail read answers. */
  cursor?: number;
  fn: (events: AgentEvent[]) => void;
}

interface Followed {
  stream: StreamRef;
  listeners: Set<Listener>;
}

/** XREAD's answer: null on timeout; per stream its entries, as pairs or (a RESP3 map) keyed by stream. */
type XReadReply = null | [string, RawEntry[]][] | Map<string, RawEntry[]> | Record<string, RawEntry[]>;

function streamsOf(reply: XReadReply): [string, RawEntry[]][] {
  if (!reply) return [];
  if (Array.isArray(reply)) return reply;
  if (reply instanceof Map) return [...reply.entries()];
  return Object.entries(reply);
}

/** Entries per stream per XREAD. */
const READ_COUNT = 500;
/** How long one XREAD blocks when nothing is appended (ms). */
const BLOCK_MS = 1000;
/** Wait after a failed read before the next, while node-redis reconnects (ms). */
const RETRY_MS = 200;

export class StreamFollower {
  private readonly followed = new Map<string, Followed>();
  private readerId: string | undefined;
  private reading = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private readonly loop: Promise<void>;

  constructor(
    private readonly commands: CommandClient,
    private readonly reader: CommandClient,
    private readonly logger?: Logger,
  ) {
    this.loop = this.run();
  }

  /** The reader connection was re-established: its client id changed. */
  readerReconnected(): void {
    this.readerId = undefined;
  }

  follow(key: string, stream: StreamRef, fn: (events: AgentEvent[]) => void): () => void {
    let f = this.followed.get(key);
    if (!f) this.followed.set(key, (f = { stream, listeners: new Set() }));
    const listener: Listener = { fn };
    f.listeners.add(listener);
    // Issued now, on the command connection: ordered before the caller's later reads (see top).
    this.commands
      .sendCommand<RawEntry[]>(['XREVRANGE', key, '+', '-', 'COUNT', '1'])
      .then(
        (tail) => {
          listener.cursor = tail.length ? seqOf(tail[0][0]) : 0;
        },
        (err: unknown) => {
          // Unknown start: from the beginning of what is kept; the caller drops what it has seen.
          this.logger?.warn(
            { err: String(err), stream: key },
            'redis event store: could not read the stream tail to follow; following from its oldest kept event',
          );
          listener.cursor = 0;
        },
      )
      .finally(() => this.interrupt());
    const followed = f;
    return () => {
      followed.listeners.delete(listener);
      if (followed.listeners.size === 0 && this.followed.get(key) === followed) this.followed.delete(key);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.loop.catch(() => undefined);
  }

  /** Makes the read loop take changed followers into account now. */
  private interrupt(): void {
    if (this.wake) return this.wake();
    if (this.reading && this.readerId !== undefined) {
      this.commands.sendCommand(['CLIENT', 'UNBLOCK', this.readerId]).catch(() => undefined);
    }
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const keys: string[] = [];
      const ids: string[] = [];
      const from = new Map<string, number>();
      for (const [key, f] of this.followed) {
        let min: number | undefined;
        for (const l of f.listeners) if (l.cursor !== undefined) min = min === undefined ? l.cursor : Math.min(min, l.cursor);
        if (min === undefined) continue;
        keys.push(key);
        ids.push(idOf(min));
        from.set(key, min);
      }
      if (keys.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      let reply: XReadReply;
      try {
        this.readerId ??= String(await this.reader.sendCommand<number>(['CLIENT', 'ID']));
        this.reading = true;
        reply = await this.reader.sendCommand<XReadReply>(['XREAD', 'COUNT', String(READ_COUNT), 'BLOCK', String(BLOCK_MS), 'STREAMS', ...keys, ...ids]);
      } catch (err) {
        if (this.closed) break;
        this.readerId = undefined;
        this.logger?.debug({ err: String(err) }, 'redis event store: follow read failed; retrying');
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      } finally {
        this.reading = false;
      }
      for (const [key, entries] of streamsOf(reply)) if (from.has(key)) this.deliver(key, from.get(key)!, entries);
    }
  }

  /** Hands each listener what is above its cursor, if the read started at or below it. */
  private deliver(key: string, from: number, entries: RawEntry[]): void {
    const f = this.followed.get(key);
    if (!f || entries.length === 0) return;
    const events = entries.map((e) => toEvent(f.stream, e));
    for (const l of f.listeners) {
      // Armed below this read's start meanwhile: the next read starts low enough for it.
      if (l.cursor === undefined || l.cursor < from) continue;
      const after = l.cursor;
      const mine = events.filter((e) => e.seq > after);
      if (mine.length === 0) continue;
      l.cursor = mine[mine.length - 1].seq;
      try {
        l.fn(mine);
      } catch (err) {
        this.logger?.warn({ err: String(err), stream: key }, 'redis event store: a follower failed on delivered events');
      }
    }
  }
}
