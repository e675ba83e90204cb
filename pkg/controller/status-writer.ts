// Coalesced status writes from an agent's events. A status write is a read and a write of the
// agent (and a watch event to every informer), far dearer than appending the event, so it is not
// done per event: the events that arrive while a write is in flight, or within `intervalMs` of the
// last one, are applied together in the next write, in seq order (applyEvent folds them, so the
// result is the same as one write each). Events that change the task's state (task_started and
// the terminal ones) are written as soon as the write before them is done; the rest (`note`) only
// move `lastTaskMessage`, which may lag by up to `intervalMs`: a noted event still waiting is
// replaced by the next one, whose message supersedes it, so a fast stream keeps one event per
// agent here, not every event of the interval.

import type { Agent } from '../api/agent.js';
import type { AgentEvent } from '../api/event.js';
import type { ObjectRef } from '../api/meta.js';

/** One agent incarnation: a re-created agent of the same name is another. */
export type AgentRef = ObjectRef & { uid: string };

/**
 * How long `lastTaskMessage` may lag the newest event while events stream in. A status write
 * holds the event loop for about 0.7 ms (read, validation, SQLite commit, watch fan-out), and
 * every event arriving meanwhile waits behind it: once a second per streaming agent keeps that
 * off all but one event in a thousand at 1,000 events/s, and a summary column a second old still
 * reads as live.
 */
export const STATUS_WRITE_INTERVAL_MS = 1000;

/** Applies the events, in order, to the agent's stored status in one write; returns the agent. */
export type StatusWrite = (ref: AgentRef, events: readonly AgentEvent[]) => Promise<Agent>;

interface Backlog {
  ref: AgentRef;
  events: AgentEvent[];
  waiters: { resolve: (a: Agent) => void; reject: (err: unknown) => void }[];
  urgent: boolean;
  /** The newest waiting event was noted (only moves the message): the next note replaces it. */
  noted: boolean;
  writing: boolean;
  lastWriteAt: number;
  timer?: NodeJS.Timeout;
}

export class StatusWriter {
  private readonly backlogs = new Map<string, Backlog>();

  /** `failed`: told of a write that fails with no one waiting for it (only `note`d events). */
  constructor(
    private readonly write: StatusWrite,
    private readonly failed: (ref: AgentRef, err: unknown) => void,
    private readonly intervalMs = STATUS_WRITE_INTERVAL_MS,
  ) {}

  /**
   * Queues an event that changes the task's state (events of one agent in seq order): written as
   * soon as the write in flight is done. Resolves with the agent as that write left it.
   */
  add(ref: AgentRef, ev: AgentEvent): Promise<Agent> {
    const b = this.queue(ref, ev, false);
    b.urgent = true;
    const done = new Promise<Agent>((resolve, reject) => b.waiters.push({ resolve, reject }));
    this.schedule(ref.uid, b);
    return done;
  }

  /**
   * Queues an event that only moves the message (the caller's promise: task-status.ts `movesMessage`):
   * written with the next write, within `intervalMs`, unless a later note replaces it first.
   */
  note(ref: AgentRef, ev: AgentEvent): void {
    this.schedule(ref.uid, this.queue(ref, ev, true));
  }

  private queue(ref: AgentRef, ev: AgentEvent, noted: boolean): Backlog {
    const key = ref.uid;
    let b = this.backlogs.get(key);
    if (!b) this.backlogs.set(key, (b = { ref, events: [], waiters: [], urgent: false, noted: false, writing: false, lastWriteAt: 0 }));
    if (noted && b.noted) b.events[b.events.length - 1] = ev;
    else b.events.push(ev);
    b.noted = noted;
    return b;
  }

  /** Drops pending timers (shutdown); queued events stay unwritten. */
  stop(): void {
    for (const b of this.backlogs.values()) clearTimeout(b.timer);
    this.backlogs.clear();
  }

  private schedule(key: string, b: Backlog): void {
    if (b.writing || b.events.length === 0) return;
    const wait = b.urgent ? 0 : b.lastWriteAt + this.intervalMs - Date.now();
    if (wait <= 0) {
      clearTimeout(b.timer);
      b.timer = undefined;
      void this.flush(key, b);
    } else {
      b.timer ??= setTimeout(() => this.expire(key, b), wait).unref();
    }
  }

  private expire(key: string, b: Backlog): void {
    b.timer = undefined;
    if (b.events.length > 0) this.schedule(key, b);
    else if (!b.writing && this.backlogs.get(key) === b) this.backlogs.delete(key);
  }

  private async flush(key: string, b: Backlog): Promise<void> {
    const events = b.events.splice(0);
    const waiters = b.waiters.splice(0);
    b.urgent = false;
    b.noted = false;
    b.writing = true;
    try {
      const agent = await this.write(b.ref, events);
      waiters.forEach((w) => w.resolve(agent));
    } catch (err) {
      if (waiters.length === 0) this.failed(b.ref, err);
      waiters.forEach((w) => w.reject(err));
    } finally {
      b.writing = false;
      b.lastWriteAt = Date.now();
      if (b.events.length > 0) this.schedule(key, b);
      // Kept for one interval, so an event arriving in it waits for the next write's turn.
      else b.timer ??= setTimeout(() => this.expire(key, b), this.intervalMs).unref();
    }
  }
}
