// An in-memory index of squad membership, kept from one watch of the squads (an informer, in
// controller-runtime's terms). Controllers ask it "which squad is this agent in" on every event
// without listing squads from storage, which in the Kubernetes home is an API call.
//
// It may lag storage by a watch delivery; every change it applies is announced with the agents
// it touched, so level-triggered readers reconcile again. Checks that must be exact (joining a
// squad) read storage under the squad service's lock instead.

import { refKey } from '../../api/meta.js';
import type { Squad } from '../../api/squad.js';
import type { Registry } from '../registry.js';
import type { WatchEvent } from '../store.js';
import { memberNames } from './membership.js';

/** A squad's membership changed; `touched` are its members before and after. */
export type MembershipListener = (namespace: string, squad: string, touched: string[]) => void;

export class SquadIndex {
  /** namespace/squad -> member names */
  private readonly members = new Map<string, string[]>();
  private readonly listeners: MembershipListener[] = [];
  private unsubscribe?: () => void;

  constructor(private readonly squads: Registry<Squad>) {}

  /** Watches first, then lists, so no change falls between the two. */
  async start(): Promise<void> {
    const seen = new Set<string>();
    this.unsubscribe = this.squads.watch((ev) => {
      seen.add(refKey(ev.object.metadata));
      this.apply(ev);
    });
    for (const s of (await this.squads.list()).items) {
      // The watch already delivered something newer for this squad.
      if (!seen.has(refKey(s.metadata))) this.apply({ type: 'ADDED', object: s });
    }
  }

  stop(): void {
    this.unsubscribe?.();
  }

  onChange(fn: MembershipListener): void {
    this.listeners.push(fn);
  }

  /** The squad the agent is a member of, if any. */
  squadOf(namespace: string, agent: string): string | undefined {
    const prefix = `${namespace}/`;
    for (const [key, names] of this.members) {
      if (key.startsWith(prefix) && names.includes(agent)) return key.slice(prefix.length);
    }
    return undefined;
  }

  membersOf(namespace: string, squad: string): string[] {
    return this.members.get(`${namespace}/${squad}`) ?? [];
  }

  private apply(ev: WatchEvent<Squad>): void {
    const { namespace, name } = ev.object.metadata;
    const key = refKey(ev.object.metadata);
    const before = this.members.get(key) ?? [];
    const now = ev.type === 'DELETED' ? [] : memberNames(ev.object);
    if (ev.type === 'DELETED') this.members.delete(key);
    else this.members.set(key, now);
    const touched = [...new Set([...before, ...now])];
    for (const fn of this.listeners) fn(namespace, name, touched);
  }
}
