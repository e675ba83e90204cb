// The event log: durable append through the configured EventStore, then live fan-out to
// subscribers (WebSocket clients, metrics). Subscribers see every event after it is stored.
// A store that several processes share (one with `follow`) delivers live events itself, so a
// subscriber sees the appends of every replica, in seq order; `onAppend` hooks see this
// process's appends only.

import type { AgentEvent, EventDraft } from '../api/event.js';
import type { EventStore, ListOptions, StreamRef } from './events.js';

type Listener = (ev: AgentEvent) => void;

export class EventLog {
  private readonly subs = new Map<string, Set<Listener>>();
  private readonly appendHooks: Listener[] = [];

  constructor(private readonly store: EventStore) {}

  async append(stream: StreamRef, draft: EventDraft): Promise<AgentEvent> {
    const ev = await this.store.append(stream, draft);
    for (const fn of this.appendHooks) fn(ev);
    for (const fn of this.subs.get(stream.uid) ?? []) fn(ev);
    return ev;
  }

  list(stream: StreamRef, opts: ListOptions): Promise<AgentEvent[]> {
    return this.store.list(stream, opts);
  }

  since(stream: StreamRef, after: number, max?: number): Promise<AgentEvent[]> {
    return this.store.since(stream, after, max);
  }

  taskStart(stream: StreamRef, task: number): Promise<number | undefined> {
    return this.store.taskStart(stream, task);
  }

  lastSeq(stream: StreamRef): Promise<number> {
    return this.store.lastSeq(stream);
  }

  async deleteStream(stream: StreamRef): Promise<void> {
    await this.store.deleteStream(stream);
  }

  /** Live events of one stream; returns an unsubscribe function. */
  subscribe(stream: StreamRef, fn: Listener): () => void {
    if (this.store.follow) return this.store.follow(stream, (events) => events.forEach(fn));
    let set = this.subs.get(stream.uid);
    if (!set) this.subs.set(stream.uid, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.subs.delete(stream.uid);
    };
  }

  /** Resolves while the store is reachable (readiness); stores without a check always are. */
  async ping(): Promise<void> {
    await this.store.ping?.();
  }

  /** Every appended event of every stream (metrics, status). */
  onAppend(fn: Listener): void {
    this.appendHooks.push(fn);
  }
}
