// Event storage: an ordered, durable, per-agent stream. Implementations are plugins
// (event-store-sqlite, event-store-redis); core code sees only this interface.

import type { AgentEvent, EventDraft } from '../api/event.js';

/** Events kept per agent stream unless configured otherwise (--events-per-agent). */
export const DEFAULT_EVENTS_PER_AGENT = 10_000;

/** Identifies one agent's stream. `uid` keeps a re-created agent of the same name apart. */
export interface StreamRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface ListOptions {
  /** At most this many events (the most recent ones, returned oldest first). */
  limit: number;
  /** Only events with seq < before. */
  before?: number;
}

export interface EventStore {
  /**
   * Appends and assigns the next seq: 1, 2, 3... for a new name. A seq never repeats for a
   * (namespace, name): the store keeps the highest seq it ever assigned to the name, also after
   * `deleteStream`, and a later stream of that name (a re-created agent, a new uid) continues
   * above it. So a client's `since=N` cursor from a deleted agent reads the new agent's events.
   *
   * A store made with a cap on events per stream (DEFAULT_EVENTS_PER_AGENT by default) removes
   * the stream's oldest events in the same step once it holds more: afterwards `list`, `since`
   * and `taskStart` see only what is kept (a `since` older than the oldest kept event gets all
   * that is left), while `lastSeq` and the seq numbering are unaffected.
   */
  append(stream: StreamRef, draft: EventDraft): Promise<AgentEvent>;
  /** The most recent events (optionally before a seq), oldest first. */
  list(stream: StreamRef, opts: ListOptions): Promise<AgentEvent[]>;
  /** Every event with seq > after, oldest first, at most `max` (default unbounded). */
  since(stream: StreamRef, after: number, max?: number): Promise<AgentEvent[]>;
  /** Lowest seq of the given task's events, undefined when it has none yet. */
  taskStart(stream: StreamRef, task: number): Promise<number | undefined>;
  /** Highest seq of the stream, 0 when empty. */
  lastSeq(stream: StreamRef): Promise<number>;
  /** Removes the whole stream (agent deletion); the name's highest seq is kept (see append). */
  deleteStream(stream: StreamRef): Promise<void>;
  close(): Promise<void>;
  /**
   * Optional, for a store several processes share: live events of the stream appended by any of
   * them, in seq order, each once, in batches. The start is the stream's last seq as read by a
   * command issued before `follow` returns and answered before any read issued on the store
   * afterwards, so a replay read after this call overlaps the live events and leaves no gap.
   * Returns a function that stops it. Without it, EventLog fans out its own appends in-process.
   */
  follow?(stream: StreamRef, onEvents: (events: AgentEvent[]) => void): () => void;
  /**
   * Optional: rejects, saying why, while the store cannot serve (its server unreachable, say): the
   * replica's /readyz fails, so the Service sends requests to replicas that can. A store inside
   * the process (SQLite) need not implement it.
   */
  ping?(): Promise<void>;
}
