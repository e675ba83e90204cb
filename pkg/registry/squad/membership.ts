// Squad membership has one source of truth: the squads' member lists. These helpers answer
// "which squad is this agent in" from it.

import { memberName, type Squad } from '../../api/squad.js';
import type { Registry } from '../registry.js';

/** The runtime group (pod) of a squad. */
export const groupName = (namespace: string, squad: string): string => `squad:${namespace}/${squad}`;

export const groupOf = (s: Squad): string => groupName(s.metadata.namespace, s.metadata.name);

export const memberNames = (s: Squad): string[] => s.spec.members.map(memberName);

export async function squadOf(squads: Registry<Squad>, namespace: string, agent: string): Promise<Squad | undefined> {
  const { items } = await squads.list({ namespace });
  return items.find((s) => memberNames(s).includes(agent));
}
