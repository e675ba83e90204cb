// The squad reconciler. Level-triggered over squads and their member agents, reading the shared
// informers' caches:
//  - embedded member specs become agents (claimed by the squad), and the entries become refs;
//  - members whose agent is gone, or that another squad claims, leave the list;
//  - an agent the squad claims but no longer lists was removed: its task is cancelled and the
//    claim released (a deleted squad releases every claim);
//  - one member left: the squad dissolves (record removed; the agent controller moves the last
//    agent to a solo worker); none left: Orphaned, and the record goes after orphanTTL;
//  - marked for break-up and every member asleep: the record goes, members are solo;
//  - phase: Sleeping when every member sleeps (group removed), Running when the group's awake
//    members are connected, Pending otherwise.
// Claims make membership safe across replicas without a lock: see SQUAD_LABEL in pkg/api/squad.ts.

import { type Agent, agentFromRequest, isBusy, onlyMessageMoved } from '../api/agent.js';
import { ApiError } from '../api/errors.js';
import type { ObjectRef } from '../api/meta.js';
import { claimOf, memberName, parseDuration, type Squad, SQUAD_LABEL, type SquadMember, type SquadPhase } from '../api/squad.js';
import type { Logger } from '../observability/logger.js';
import { release } from '../registry/admission/squad-membership.js';
import type { Informer } from '../registry/cache/informer.js';
import type { Registry } from '../registry/registry.js';
import { claimedBy, memberNames, squadListing } from '../registry/squad/membership.js';
import { Controller, type Result } from './framework/controller.js';

/** How long agent changes settle before their squad is judged. */
const SETTLE_MS = 150;

export interface SquadControllerDeps {
  squads: Registry<Squad>;
  agents: Registry<Agent>;
  informers: { agents: Informer<Agent>; squads: Informer<Squad> };
  /** Asks for an agent's running task to be cancelled. */
  cancel: (namespace: string, name: string, reason: string) => Promise<void>;
  logger: Logger;
}

export class SquadController {
  readonly controller: Controller;

  constructor(private readonly d: SquadControllerDeps) {
    this.controller = new Controller({ name: 'squad', logger: d.logger, reconcile: (ref) => this.reconcile(ref) });
    this.controller.watch(d.informers.squads);
    // An agent's change concerns the squad that lists it and the one that claims it. Changes
    // that arrive together (members deleted at once) are judged together.
    this.controller.watch(
      d.informers.agents,
      (a) => {
        const { namespace } = a.metadata;
        const refs: ObjectRef[] = [];
        const listing = squadListing(d.informers.squads, a.metadata);
        if (listing) refs.push(listing.metadata);
        const claim = claimOf(a);
        if (claim && claim !== listing?.metadata.name) refs.push({ namespace, name: claim });
        return refs;
      },
      { settleMs: SETTLE_MS, ignoreUpdate: onlyMessageMoved },
    );
  }

  private async reconcile(ref: ObjectRef): Promise<Result | void> {
    const log = this.d.logger.child({ namespace: ref.namespace, squad: ref.name });
    const squad = this.d.informers.squads.get(ref.namespace, ref.name);
    if (!squad) {
      // Claims are written before their squad, so a squad the cache lacks may be one being
      // created: storage decides whether it is gone.
      if (await this.d.squads.get(ref.namespace, ref.name)) return;
      for (const a of claimedBy(this.d.informers.agents, ref)) await release(this.d.agents, ref.namespace, a.metadata.name, ref.name);
      return;
    }
    const current = await this.reconcileMembers(squad, log);
    if (!current) return;
    const count = current.spec.members.length;
    if (count === 1) {
      await this.d.squads.delete(ref.namespace, ref.name);
      log.info({ agent: memberName(current.spec.members[0]) }, 'squad dissolved: one member left, now solo');
      return;
    }
    if (count === 0) return this.orphaned(current, log);
    if (current.status.orphanedSince) {
      await this.d.squads.updateStatus(ref.namespace, ref.name, (s) => {
        delete s.orphanedSince;
      });
    }
    if (current.spec.breakUp && (await this.breakUp(current, log))) return;
    await this.updatePhase(current);
  }

  /**
   * Makes the member list and the claims agree. Returns the squad as stored after, or undefined
   * when it is gone.
   */
  private async reconcileMembers(squad: Squad, log: Logger): Promise<Squad | undefined> {
    const { namespace, name } = squad.metadata;
    const { agents } = this.d;
    const cached = (n: string): Agent | undefined => this.d.informers.agents.get(namespace, n);

    // Embedded specs become agents, born claimed.
    for (const m of squad.spec.members) {
      if (!('spec' in m) || cached(m.name)) continue;
      const agent = agentFromRequest({ name: m.name, ...m.spec }, namespace);
      agent.metadata.labels = { [SQUAD_LABEL]: name };
      await agents.create(agent).then(
        () => log.info({ agent: m.name }, 'created member agent'),
        (err: unknown) => {
          if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
        },
      );
    }
    // Members stay while their agent exists and the squad claims it. An embedded member whose
    // agent someone else created meanwhile is not adopted: it never passed the rules of joining.
    // An unclaimed ref member (an older record, or a claim lost to a race) is claimed now.
    const keep: string[] = [];
    for (const m of squad.spec.members) {
      const n = memberName(m);
      const a = cached(n);
      if (!a || a.metadata.deletionTimestamp) continue;
      if (claimOf(a) === name || (!('spec' in m) && (await this.claim(namespace, n, name)))) keep.push(n);
      else log.info({ agent: n, claimedBy: claimOf(a) ?? null }, 'member not claimed by the squad: dropped');
    }
    const refs: SquadMember[] = keep.map((n) => ({ ref: { name: n } }));
    let current = squad;
    if (JSON.stringify(refs) !== JSON.stringify(squad.spec.members)) {
      current = await this.d.squads.update(namespace, name, (s) => {
        s.spec.members = refs;
      });
    }
    // Claimed but no longer listed: removed from the squad. The cache may not show a member
    // just added yet, so storage decides before a claim is released.
    const listed = new Set(memberNames(current));
    const removed = claimedBy(this.d.informers.agents, current.metadata).filter((a) => !listed.has(a.metadata.name));
    if (removed.length) {
      const stored = await this.d.squads.get(namespace, name);
      const storedMembers = new Set(stored ? memberNames(stored) : []);
      for (const a of removed.filter((r) => !storedMembers.has(r.metadata.name))) {
        if (isBusy(a)) await this.d.cancel(namespace, a.metadata.name, `removed from squad "${name}"`);
        await release(agents, namespace, a.metadata.name, name);
        log.info({ agent: a.metadata.name }, 'member removed: claim released');
      }
    }
    return current;
  }

  /** Claims an agent for the squad unless another squad has it; false when it does. */
  private async claim(namespace: string, agent: string, squad: string): Promise<boolean> {
    try {
      const a = await this.d.agents.update(namespace, agent, (cur) => {
        if (!claimOf(cur)) cur.metadata.labels = { ...cur.metadata.labels, [SQUAD_LABEL]: squad };
      });
      return claimOf(a) === squad;
    } catch (err) {
      if (err instanceof ApiError && err.reason === 'NotFound') return false;
      throw err;
    }
  }

  /** Breaking up winds the squad down; true when the record is gone. */
  private async breakUp(squad: Squad, log: Logger): Promise<boolean> {
    const { namespace, name } = squad.metadata;
    const members = memberNames(squad).map((n) => this.d.informers.agents.get(namespace, n));
    if (members.every((a) => a?.status.status === 'Sleeping')) {
      await this.d.squads.delete(namespace, name);
      log.info('squad broken up: every member asleep, members are solo');
      return true;
    }
    // A member that is awake (or was woken by a task) goes back to sleep once idle.
    for (const a of members) {
      if (!a || a.spec.lifecycle === 'Sleep' || isBusy(a) || a.status.status === 'Sleeping') continue;
      await this.d.agents.update(namespace, a.metadata.name, (cur) => {
        if (!isBusy(cur)) cur.spec.lifecycle = 'Sleep';
      });
      log.info({ agent: a.metadata.name }, 'squad breaking up: idle member put back to sleep');
    }
    return false;
  }

  private async orphaned(squad: Squad, log: Logger): Promise<Result | void> {
    const { namespace, name } = squad.metadata;
    const since = squad.status.orphanedSince ?? new Date().toISOString();
    const expires = Date.parse(since) + parseDuration(squad.spec.orphanTTL);
    if (Date.now() >= expires) {
      await this.d.squads.delete(namespace, name);
      log.info({ orphanTTL: squad.spec.orphanTTL }, 'orphaned squad deleted after its orphanTTL');
      return;
    }
    if (squad.status.phase !== 'Orphaned' || !squad.status.orphanedSince) {
      await this.d.squads.updateStatus(namespace, name, (s) => {
        s.phase = 'Orphaned';
        s.orphanedSince = since;
      });
      log.info({ orphanTTL: squad.spec.orphanTTL }, 'squad orphaned: no members left');
    }
    return { requeueAfter: expires - Date.now() + 10 };
  }

  private async updatePhase(squad: Squad): Promise<void> {
    const { namespace, name } = squad.metadata;
    const members = memberNames(squad).map((n) => this.d.informers.agents.get(namespace, n));
    const awake = members.filter((a): a is Agent => !!a && a.status.status !== 'Sleeping');
    let phase: SquadPhase = 'Pending';
    if (awake.length === 0) phase = 'Sleeping';
    else if (awake.every((a) => a.status.status === 'Running')) phase = 'Running';
    if (squad.status.phase !== phase) {
      await this.d.squads.updateStatus(namespace, name, (s) => {
        s.phase = phase;
      });
    }
  }
}
