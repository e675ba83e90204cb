// Squads in the local runtime: one group supervisor process (group-main.ts) per squad, leading
// the squad's process group and running a worker per member. This keeps the supervisors, tells
// them over IPC which members to start and stop, and removes one (and its directory of links)
// with its last member.

import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ObjectRef } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import type { GroupCommand, GroupReport, StartMember } from './group-protocol.js';
import { noteStarted } from './process-group.js';
import { killGroup } from './process-kill.js';
import { niceSession } from './session-niceness.js';
import { niced } from './worker-env.js';

const GROUP_MAIN = fileURLToPath(new URL('./group-main.js', import.meta.url));

/** A squad member's worker, run by its group's supervisor. */
export interface Member {
  kind: 'member';
  ref: ObjectRef;
  group: string;
  /** Known once the supervisor reported the worker started. */
  pid?: number;
}

/** A squad's group supervisor and the members it runs. */
interface Group {
  child: ChildProcess;
  members: Map<string, Member>;
  /** Resolvers waiting for a member's requested stop. */
  stopping: Map<string, () => void>;
}

export interface SquadGroupsOptions {
  logger: Logger;
  stopGraceMs: number;
  niceness: number;
  /** Relays the supervisor's output (its members' log lines) to the service's. */
  forwardLogs(child: ChildProcess, fields: Record<string, string>): void;
  /** A member's worker ended without being asked to (its supervisor too, perhaps). */
  ended(key: string, member: Member, code: number | null, signal: string | null): void;
  /** The squad's directory of links (workspaces.ts), removed with the group. */
  groupDir(group: string): string;
}

export class SquadGroups {
  private readonly groups = new Map<string, Group>();

  constructor(private readonly o: SquadGroupsOptions) {}

  /** Groups that are up (have a supervisor process). */
  names(): string[] {
    return [...this.groups.keys()];
  }

  /** Starts the member's worker in its group, starting the group's supervisor first if needed. */
  start(key: string, member: Member, namespace: string, run: Omit<StartMember, 'op' | 'member'>): void {
    const group = this.groups.get(member.group) ?? this.startGroup(member.group, namespace);
    group.members.set(key, member);
    send(group, { op: 'start', member: key, ...run });
  }

  /** Stops the member's worker; the group goes with its last member. */
  async stop(member: Member, key: string): Promise<void> {
    const name = member.group;
    const group = this.groups.get(name);
    if (!group) return;
    group.members.delete(key);
    const stopped = new Promise<void>((resolve) => group.stopping.set(key, resolve));
    send(group, { op: 'stop', member: key });
    const grace = this.o.stopGraceMs + 1000;
    await Promise.race([stopped, new Promise((r) => setTimeout(r, grace).unref())]);
    group.stopping.delete(key);
    if (group.members.size === 0 && this.groups.get(name) === group) {
      this.groups.delete(name);
      await killGroup(group.child, this.o.stopGraceMs);
      rmSync(this.o.groupDir(name), { recursive: true, force: true });
      this.o.logger.info({ group: name }, 'group removed');
    }
  }

  /** Stops every group's supervisor and its members. */
  async close(): Promise<void> {
    const groups = [...this.groups.values()];
    this.groups.clear();
    await Promise.all(groups.map((g) => killGroup(g.child, this.o.stopGraceMs)));
  }

  private startGroup(name: string, namespace: string): Group {
    const [cmd, ...args] = niced([process.execPath, GROUP_MAIN], this.o.niceness);
    const child = spawn(cmd, args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
    });
    noteStarted(child);
    void niceSession(child.pid, this.o.niceness);
    const group: Group = { child, members: new Map(), stopping: new Map() };
    this.groups.set(name, group);
    this.o.forwardLogs(child, { namespace, group: name });
    child.on('message', (r: GroupReport) => this.onReport(group, r));
    child.on('exit', (code, signal) => {
      if (this.groups.get(name) !== group) return; // stopped on purpose
      this.groups.delete(name);
      for (const [key, m] of group.members) this.o.ended(key, m, code, signal);
    });
    this.o.logger.info({ namespace, group: name, pid: child.pid }, 'group started');
    return group;
  }

  private onReport(group: Group, r: GroupReport): void {
    const m = group.members.get(r.member);
    if (r.op === 'started') {
      if (m) m.pid = r.pid;
      return;
    }
    const done = group.stopping.get(r.member);
    if (done) return done();
    if (!m) return;
    group.members.delete(r.member);
    this.o.ended(r.member, m, r.code, r.signal);
  }
}

function send(group: Group, cmd: GroupCommand): void {
  if (group.child.connected) group.child.send(cmd);
}
