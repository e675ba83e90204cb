// Replay-then-live reading of one agent's event stream, shared by the WebSocket
// (/api/v1/agents/:name/ws) and the aggregated API's log subresource (agents/<name>/log).
// Subscribe first, then replay history, then go live, dropping anything already sent, so a
// reader never misses an event nor sees one twice. Without `since`, the replay starts at the
// current task's first event: a reader that connects right after the task was sent sees it all.

import type { Agent } from '../api/agent.js';
import type { AgentEvent } from '../api/event.js';
import { streamOf } from '../controller/agent-controller.js';
import type { EventLog } from '../registry/event-log.js';

const REPLAY_PAGE = 500;

export interface FollowOptions {
  /** Replay every event with a greater seq (0: everything); default: the current task's first. */
  since?: number;
  /** Keep delivering live events after the replay (default true); false stops after it. */
  follow?: boolean;
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
  const deliver = (ev: AgentEvent): void => {
    if (stopped || ev.seq <= lastSent) return;
    lastSent = ev.seq;
    send(ev);
  };
  const unsubscribe = opts.follow === false ? () => undefined : events.subscribe(stream, (ev) => (live ? deliver(ev) : pending.push(ev)));
  const stop = (): void => {
    stopped = true;
    unsubscribe();
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
