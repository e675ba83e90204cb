// One watch of the agents per registry for everyone in the HTTP layer who waits on one agent:
// live readers until it goes (event-follow.ts), REST operations until it reaches a state
// (services/agent-wait.ts). A watch each made every agent write cost a copy of the object per
// waiter (the store gives each watcher its own): with 1,000 WebSocket subscribers, a burst of
// 1,000 task submissions spent 40 s of the API's CPU copying (docs/performance.md "API under load").

import type { Agent } from '../api/agent.js';
import type { ObjectRef } from '../api/meta.js';
import type { Registry } from '../registry/registry.js';

/** The agent's new state, undefined once deleted. Shared by every waiter: never mutate it. */
export type AgentChanged = (agent: Agent | undefined) => void;

type Watchable = Pick<Registry<Agent>, 'watch'>;

class AgentChanges {
  private readonly waiters = new Map<string, Set<AgentChanged>>();
  private unwatch?: () => void;

  constructor(private readonly agents: Watchable) {}

  on(ref: ObjectRef, fn: AgentChanged): () => void {
    const key = `${ref.namespace}/${ref.name}`;
    let set = this.waiters.get(key);
    if (!set) this.waiters.set(key, (set = new Set()));
    const own = set;
    // A function added twice is two waiters: wrap it so each has its own entry.
    const entry: AgentChanged = (a) => fn(a);
    own.add(entry);
    this.unwatch ??= this.agents.watch((ev) => this.changed(ev.type === 'DELETED' ? undefined : ev.object, ev.object));
    return () => {
      own.delete(entry);
      if (!own.size && this.waiters.get(key) === own) this.waiters.delete(key);
      if (!this.waiters.size && this.unwatch) {
        this.unwatch();
        this.unwatch = undefined;
      }
    };
  }

  private changed(now: Agent | undefined, seen: Agent): void {
    const set = this.waiters.get(`${seen.metadata.namespace}/${seen.metadata.name}`);
    if (set) for (const fn of [...set]) fn(now);
  }
}

const hubs = new WeakMap<Watchable, AgentChanges>();

/** Calls `fn` with each change of one agent, through the registry's one shared watch; returns the unsubscribe. */
export function onAgentChange(agents: Watchable, ref: ObjectRef, fn: AgentChanged): () => void {
  let hub = hubs.get(agents);
  if (!hub) hubs.set(agents, (hub = new AgentChanges(agents)));
  return hub.on(ref, fn);
}
