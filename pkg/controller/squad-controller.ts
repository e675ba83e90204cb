// The squad reconciler. Level-triggered over squads and their member agents:
//  - embedded member specs become agents, and the entries become refs;
//  - members whose agent is gone leave the list;
//  - one member left: the squad dissolves (record removed; the agent controller moves the last
//    agent to a solo worker); none left: Orphaned, and the record goes after orphanTTL;
//  - marked for break-up and every member asleep: the record goes, members are solo;
//  - phase: Sleeping when every member sleeps (group removed), Running when the group's awake
//    members are connected, Pending otherwise.
// Membership writes share the squad service's per-namespace lock.

import { type Agent, agentFromRequest } from '../api/agent.js';
import { ApiError } from '../api/errors.js';
import { refKey } from '../api/meta.js';
import { memberName, parseDuration, type Squad, type SquadMember, type SquadPhase } from '../api/squad.js';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../registry/registry.js';
import { isBusy } from '../registry/agent/strategy.js';
import type { KeyedSerializer } from '../registry/serializer.js';
import type { SquadIndex } from '../registry/squad/index.js';
import { memberNames } from '../registry/squad/membership.js';
import { WorkQueue } from './framework/workqueue.js';

/** Changes that arrive together (members deleted at once) are judged together. */
const SETTLE_MS = 150;

export interface SquadControllerDeps {
  squads: Registry<Squad>;
  /** Squad membership kept from a watch, for the agent events that concern a squad. */
  index: SquadIndex;
  agents: Registry<Agent>;
  membership: KeyedSerializer;
  logger: Logger;
}

export class SquadController {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: (() => void)[] = [];
  /** One pending reconcile per squad: the reconcile reads the latest state, so one is enough. */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();

  constructor(private readonly d: SquadControllerDeps) {
    this.queue = new WorkQueue((k) => this.reconcile(k), d.logger);
  }

  async start(): Promise<void> {
    this.unsubscribe.push(
      this.d.squads.watch((ev) => {
        if (ev.type !== 'DELETED') this.later(refKey(ev.object.metadata), SETTLE_MS);
      }),
      this.d.agents.watch((ev) => {
        const { namespace, name } = ev.object.metadata;
        const squad = this.d.index.squadOf(namespace, name);
        if (squad) this.later(refKey({ namespace, name: squad }), SETTLE_MS);
      }),
    );
    for (const s of (await this.d.squads.list()).items) this.queue.add(refKey(s.metadata));
  }

  stop(): void {
    this.queue.close();
    this.timers.forEach((t) => clearTimeout(t.timer));
    this.unsubscribe.forEach((fn) => fn());
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private later(key: string, ms: number): void {
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return; // an earlier pass will see this change too
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.queue.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { timer, at });
  }

  private async reconcile(key: string): Promise<void> {
    const i = key.indexOf('/');
    const namespace = key.slice(0, i);
    const name = key.slice(i + 1);
    const log = this.d.logger.child({ namespace, squad: name });
    const done = await this.d.membership.run(namespace, () => this.reconcileMembership(namespace, name, log));
    if (done) await this.updatePhase(namespace, name);
  }

  /** Returns false when the squad record is gone (dissolved, broken up, expired). */
  private async reconcileMembership(namespace: string, name: string, log: Logger): Promise<boolean> {
    const { squads, agents } = this.d;
    let squad = await squads.get(namespace, name);
    if (!squad) return false;

    // Embedded specs become agents, then refs.
    for (const m of squad.spec.members) {
      if (!('spec' in m) || (await agents.get(namespace, m.name))) continue;
      await agents.create(agentFromRequest({ name: m.name, ...m.spec }, namespace)).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
      });
      log.info({ agent: m.name }, 'created member agent');
    }
    const present = await Promise.all(
      memberNames(squad).map(async (n) => {
        const a = await agents.get(namespace, n);
        return a && !a.metadata.deletionTimestamp ? n : undefined;
      }),
    );
    const keep = new Set(present.filter((n): n is string => n !== undefined));
    const refs: SquadMember[] = squad.spec.members.filter((m) => keep.has(memberName(m))).map((m) => ({ ref: { name: memberName(m) } }));
    if (JSON.stringify(refs) !== JSON.stringify(squad.spec.members)) {
      squad = await squads.update(namespace, name, (s) => {
        s.spec.members = refs;
      });
    }

    const count = squad.spec.members.length;
    if (count === 1) {
      await squads.delete(namespace, name);
      log.info({ agent: memberName(squad.spec.members[0]!) }, 'squad dissolved: one member left, now solo');
      return false;
    }
    if (count === 0) return this.orphaned(squad, log);
    if (squad.status.orphanedSince) {
      await squads.updateStatus(namespace, name, (s) => {
        delete s.orphanedSince;
      });
    }
    if (squad.spec.breakUp) {
      const members = await Promise.all(memberNames(squad).map((n) => agents.get(namespace, n)));
      if (members.every((a) => a?.status.status === 'Sleeping')) {
        await squads.delete(namespace, name);
        log.info('squad broken up: every member asleep, members are solo');
        return false;
      }
      // Breaking up winds the squad down: a member that is awake (or was woken by a task) goes
      // back to sleep once idle, so the break-up completes.
      for (const a of members) {
        if (!a || a.spec.lifecycle === 'Sleep' || isBusy(a) || a.status.status === 'Sleeping') continue;
        await agents.update(namespace, a.metadata.name, (cur) => {
          if (!isBusy(cur)) cur.spec.lifecycle = 'Sleep';
        });
        log.info({ agent: a.metadata.name }, 'squad breaking up: idle member put back to sleep');
      }
    }
    return true;
  }

  private async orphaned(squad: Squad, log: Logger): Promise<boolean> {
    const { namespace, name } = squad.metadata;
    const since = squad.status.orphanedSince ?? new Date().toISOString();
    const expires = Date.parse(since) + parseDuration(squad.spec.orphanTTL);
    if (Date.now() >= expires) {
      await this.d.squads.delete(namespace, name);
      log.info({ orphanTTL: squad.spec.orphanTTL }, 'orphaned squad deleted after its orphanTTL');
      return false;
    }
    if (squad.status.phase !== 'Orphaned' || !squad.status.orphanedSince) {
      await this.d.squads.updateStatus(namespace, name, (s) => {
        s.phase = 'Orphaned';
        s.orphanedSince = since;
      });
      log.info({ orphanTTL: squad.spec.orphanTTL }, 'squad orphaned: no members left');
    }
    this.later(refKey(squad.metadata), expires - Date.now() + 10);
    return false;
  }

  private async updatePhase(namespace: string, name: string): Promise<void> {
    const squad = await this.d.squads.get(namespace, name);
    if (!squad) return;
    const members = await Promise.all(memberNames(squad).map((n) => this.d.agents.get(namespace, n)));
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
