// Replay-then-live reading of one agent's event stream, shared by the WebSocket
// (/api/v1/agents/:name/ws) and the aggregated API's log subresource (agents/<name>/log).
// Subscribe first, then replay history, then go live, dropping anything already sent, so a
// reader never misses an event nor sees one twice. Without `since`, the replay starts at the
// current task's first event: a reader that connects right after the task was sent sees it all.
// A live reader ends with its agent (`watchAgentGone`): the WebSocket closes with
// AGENT_DELETED_CLOSE, the log stream ends.
//
// Back-pressure (`flow`): a reader that does not keep up never slows the agent or other readers.
// The replay goes page by page as fast as the reader takes it; live, an event is handed over only
// while the bytes waiting for the reader are under `maxBuffered`, and live events held during the
// replay are capped at MAX_HELD. Past either bound the reader has fallen behind: delivery stops
// and `flow.behind(lastSeq)` tells the caller (the WebSocket closes with FELL_BEHIND_CLOSE_CODE), and
// the reader resumes with since=<the last seq it got>, read from the store.

import { setTimeout as sleep } from 'node:timers/promises';

import type { Agent } from '../api/agent.js';
import type { AgentEvent } from '../api/event.js';
import { streamOf } from '../controller/agent-controller.js';
import type { EventLog } from '../registry/event-log.js';
import type { Registry } from '../registry/registry.js';
import { onAgentChange } from './agent-changes.js';

const REPLAY_PAGE = 500;
/** Live events held for a reader while its replay runs; one more and it has fallen behind. */
export const MAX_HELD = 1000;
/** How often a replay looks whether its reader took the last page. */
const DRAIN_POLL_MS = 5;

/** How a reader's connection tells the follower how far behind it is. */
export interface FlowControl {
  /** Bytes handed to the reader's connection that it has not taken yet. */
  buffered(): number;
  /** Past this many buffered bytes, the reader has fallen behind (one event may overshoot it). */
  maxBuffered: number;
  /** The reader fell behind; nothing more is delivered. `lastSeq`: the last event handed over. */
  behind(lastSeq: number): void;
}

export interface FollowOptions {
  /** Replay every event with a greater seq (0: everything); default: the current task's first. */
  since?: number;
  /** Keep delivering live events after the replay (default true); false stops after it. */
  follow?: boolean;
  /** Back-pressure from the reader's connection; without it every event is handed over at once. */
  flow?: FlowControl;
}

export interface Following {
  /** Settles when the replay is done (live from then on when following); rejects if it failed. */
  readonly replayed: Promise<void>;
  /** Stops delivering; safe at any time, also before the replay is done. */
  stop(): void;
}

/** Delivers the agent's events to `send` in seq order, each once. */
export function followEvents(events: EventLog, agent: Agent, send: (ev: AgentEvent) => void, opts: FollowOptions = {}): Following {
  const stream = streamOf(agent);
  let lastSent = 0;
  let live = false;
  let stopped = false;
  const pending: AgentEvent[] = [];
  const { flow } = opts;
  const deliver = (ev: AgentEvent): void => {
    if (stopped || ev.seq <= lastSent) return;
    if (live && flow && flow.buffered() > flow.maxBuffered) return fellBehind();
    lastSent = ev.seq;
    send(ev);
  };
  const hold = (ev: AgentEvent): void => {
    if (flow && pending.length >= MAX_HELD) return fellBehind();
    pending.push(ev);
  };
  const unsubscribe = opts.follow === false ? () => undefined : events.subscribe(stream, (ev) => (live ? deliver(ev) : hold(ev)));
  const stop = (): void => {
    stopped = true;
    unsubscribe();
  };
  const fellBehind = (): void => {
    if (stopped) return;
    stop();
    pending.length = 0;
    flow!.behind(lastSent);
  };
  /** Waits until the reader took what it was given (or delivery stopped). */
  const drained = async (): Promise<void> => {
    while (flow && !stopped && flow.buffered() > flow.maxBuffered) await sleep(DRAIN_POLL_MS);
  };

  const replay = async (): Promise<void> => {
    let from = opts.since;
    if (from === undefined) {
      const start = await events.taskStart(stream, agent.spec.task);
      from = start !== undefined ? start - 1 : await events.lastSeq(stream);
    }
    lastSent = from;
    for (;;) {
      const page = await events.since(stream, lastSent, REPLAY_PAGE);
      page.forEach(deliver);
      if (page.length < REPLAY_PAGE || stopped) break;
      await drained();
    }
    pending.splice(0).forEach(deliver);
    live = true;
  };
  const replayed = replay().catch((err: unknown) => {
    stop();
    throw err;
  });
  return { replayed, stop };
}

/**
 * The WebSocket close code a subscriber gets when it fell behind (FlowControl); the reason reads
 * "fell behind, resume with since=<seq>", the seq of the last event sent to it.
 */
export const FELL_BEHIND_CLOSE_CODE = 4008;
export const fellBehindReason = (lastSeq: number): string => `fell behind, resume with since=${lastSeq}`;

/** The WebSocket close code (and reason) a subscriber gets when its agent is deleted. */
export const AGENT_DELETED_CLOSE = { code: 4410, reason: 'agent deleted' } as const;

type AgentSource = Pick<Registry<Agent>, 'get' | 'watch'>;

const isGone = (a: Agent | undefined, uid: string): boolean => !a || a.metadata.uid !== uid || !!a.metadata.deletionTimestamp;

/**
 * Calls `gone` once when the agent is marked for deletion, deleted, or replaced by a new agent
 * of its name (another uid): its stream ends then, as no more of its events will come. Returns
 * a function that stops watching.
 */
export function watchAgentGone(agents: AgentSource, agent: Agent, gone: () => void): () => void {
  let done = false;
  const remove = onAgentChange(agents, agent.metadata, (a) => isGone(a, agent.metadata.uid) && fire());
  const stop = (): void => {
    done = true;
    remove();
  };
  const fire = (): void => {
    if (done) return;
    stop();
    gone();
  };
  // Deleted between the caller's read and the watch: look once more.
  agents.get(agent.metadata.namespace, agent.metadata.name).then(
    (a) => isGone(a, agent.metadata.uid) && fire(),
    () => undefined,
  );
  return stop;
}
