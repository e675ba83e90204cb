// Waiting for an agent to reach a state, as the REST operations that answer once something
// happened (cancel, delete, steering, compaction) do.

import type { Agent } from '../../api/agent.js';
import type { ObjectRef } from '../../api/meta.js';
import type { Registry } from '../../registry/registry.js';

/**
 * Waits until `done` holds for the agent (undefined once it is gone), or `timeoutMs` passes.
 * It follows the registry's watch rather than polling storage, which in the Kubernetes home
 * would be an API call each time. Returns the last state seen of the agent (`known` at first).
 */
export async function waitForAgent(
  agents: Registry<Agent>,
  ref: ObjectRef,
  done: (a: Agent | undefined) => boolean,
  known: Agent,
  timeoutMs: number,
): Promise<{ agent: Agent; settled: boolean }> {
  const { namespace, name } = ref;
  let current: Agent | undefined = known;
  let lastSeen = known;
  let finish!: (settled: boolean) => void;
  const finished = new Promise<boolean>((resolve) => (finish = resolve));
  const see = (a: Agent | undefined): void => {
    current = a;
    if (a) lastSeen = a;
    if (done(a)) finish(true);
  };
  // Subscribe before reading, so no change falls between the read and the watch.
  const unsubscribe = agents.watch((ev) => {
    const m = ev.object.metadata;
    if (m.namespace === namespace && m.name === name) see(ev.type === 'DELETED' ? undefined : ev.object);
  });
  const timer = setTimeout(() => finish(done(current)), timeoutMs);
  try {
    see(await agents.get(namespace, name));
    const settled = await finished;
    return { agent: current ?? lastSeen, settled };
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}
