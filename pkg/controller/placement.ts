// Where an agent's worker should run, read from the informers: the reconciler's wanted state for
// the worker (agent-reconciler.ts). A pure function of the cache, so nothing is kept.

import { type Agent, isBusy, WORKER_READY, WORKER_RELEASED } from '../api/agent.js';
import { findCondition } from '../api/condition.js';
import type { Squad } from '../api/squad.js';
import type { Informer } from '../registry/cache/informer.js';
import { groupName, memberNames, squadListing } from '../registry/squad/membership.js';
import type { WorkerStatus } from '../runtime/runtime.js';

export interface Placement {
  wanted: boolean;
  /** Not wanted because the idle worker was released (WorkerReady says so already). */
  released?: boolean;
  group?: string;
  peers?: string[];
}

/** The worker runs where it should not: not wanted, or in another group than wanted. */
export const mustStop = (place: Placement, worker: WorkerStatus): boolean =>
  worker.phase !== 'Absent' && (!place.wanted || worker.group !== (place.group ?? null));

/**
 * Asleep, or about to be: an idle agent whose lifecycle is Sleep sleeps (the sleep-wake plugin
 * marks it so a moment later). Reading the lifecycle too means an agent created asleep never
 * starts a worker: one started in that moment was stopped again while it dialed in, and the wake
 * that followed waited 3 s for that worker to give up before starting another.
 */
const asleep = (a: Agent): boolean => a.status.status === 'Sleeping' || (a.spec.lifecycle === 'Sleep' && !isBusy(a));

/**
 * Where the agent's worker should run. A failed agent runs nowhere until a new task asks to
 * retry. A solo agent runs while awake. A squad member runs in
 * its squad's group while any member is awake (asleep members idle there); when all members
 * sleep, the group goes away.
 */
export function placementFor(informers: { agents: Informer<Agent>; squads: Informer<Squad> }, agent: Agent): Placement {
  const { namespace, name } = agent.metadata;
  if (agent.status.status === 'Failed') return { wanted: false };
  const squad = squadListing(informers.squads, agent.metadata);
  if (!squad) {
    // Released while idle: no worker until a task comes (a pending one, or one running on a
    // worker that is still there, e.g. a pod that outlived a restart).
    const released = findCondition(agent.status.conditions, WORKER_READY)?.reason === WORKER_RELEASED && !isBusy(agent);
    if (released) return { wanted: false, released: true };
    return { wanted: !asleep(agent) };
  }
  const members = memberNames(squad);
  const awake = members.some((m) => {
    const a = m === name ? agent : informers.agents.get(namespace, m);
    return a && !a.metadata.deletionTimestamp && !asleep(a);
  });
  return { wanted: awake, group: groupName(namespace, squad.metadata.name), peers: members };
}
