// Replay-then-live reading of one agent's event stream, shared by the WebSocket
// (/api/v1/agents/:name/ws) and the aggregated API's log subresource (agents/<name>/log).
// Subscribe first, then replay history, then go live, dropping anything already sent, so a
// reader never misses an event nor sees one twice. Without `since`, the replay starts at the
// current task's first event: a reader that connects right after the task was sent sees it all.
// A live reader ends with its agent (`watchAgentGone`): the WebSocket closes with
// AGENT_DELETED_CLOSE, the log stream ends.

import type { Agent } from '../api/agent.js';
import type { AgentEvent } from '../api/event.js';
import { streamOf } from '../controller/agent-controller.js';
import type { EventLog } from '../registry/event-log.js';
import type { Registry } from '../registry/registry.js';

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

/** The WebSocket close code (and reason) a subscriber gets when its agent is deleted. */
export const AGENT_DELETED_CLOSE = { code: 4410, reason: 'agent deleted' } as const;

/**
 * Calls `gone` once when the agent is marked for deletion, deleted, or replaced by a new agent
 * of its name (another uid): its stream ends then, as no more of its events will come. Returns
 * a function that stops watching.
 */
export function watchAgentGone(agents: Pick<Registry<Agent>, 'get' | 'watch'>, agent: Agent, gone: () => void): () => void {
  const { namespace, name, uid } = agent.metadata;
  const isGone = (a: Agent | undefined): boolean => !a || a.metadata.uid !== uid || !!a.metadata.deletionTimestamp;
  let done = false;
  let unwatch: () => void = () => undefined;
  const stop = (): void => {
    done = true;
    unwatch();
  };
  const fire = (): void => {
    if (done) return;
    stop();
    gone();
  };
  unwatch = agents.watch((ev) => {
    const m = ev.object.metadata;
    if (m.namespace === namespace && m.name === name && (ev.type === 'DELETED' || isGone(ev.object))) fire();
  });
  if (done) unwatch();
  // Deleted between the caller's read and the watch: look once more.
  agents.get(namespace, name).then(
    (a) => isGone(a) && fire(),
    () => undefined,
  );
  return stop;
}
