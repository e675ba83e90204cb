// Squad membership has one source of truth: the squads' member lists. The indexes here answer
// "which squad lists this agent" and "which agents does this squad claim" from the shared
// informers' caches, without listing storage.

import type { Agent } from '../../api/agent.js';
import { refKey, type ObjectRef } from '../../api/meta.js';
import { claimOf, memberName, type Squad } from '../../api/squad.js';
import type { Informer } from '../cache/informer.js';

/** The runtime group (pod) of a squad. */
export const groupName = (namespace: string, squad: string): string => `squad:${namespace}/${squad}`;

export const memberNames = (s: Squad): string[] => s.spec.members.map(memberName);

/** Squads by the agents they list ("namespace/agent"). */
const MEMBER_INDEX = 'members';
/** Agents by the squad that claims them ("namespace/squad"). */
const CLAIM_INDEX = 'claims';

/** Adds the membership indexes to the shared informers; once, at wiring. */
export function indexMembership(agents: Informer<Agent>, squads: Informer<Squad>): void {
  squads.addIndex(MEMBER_INDEX, (s) => memberNames(s).map((name) => refKey({ namespace: s.metadata.namespace, name })));
  agents.addIndex(CLAIM_INDEX, (a) => {
    const squad = claimOf(a);
    return squad ? [refKey({ namespace: a.metadata.namespace, name: squad })] : [];
  });
}

/** The squad that lists the agent, if any. */
export const squadListing = (squads: Informer<Squad>, agent: ObjectRef): Squad | undefined => squads.byIndex(MEMBER_INDEX, refKey(agent))[0];

/** The agents that carry the squad's claim. */
export const claimedBy = (agents: Informer<Agent>, squad: ObjectRef): Agent[] => agents.byIndex(CLAIM_INDEX, refKey(squad));
