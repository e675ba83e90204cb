// The local runtime's directories under its data directory: agents' workspaces
// (workspaces/<namespace>/<name>), warm-pool slots' directories (pool/), and squads' shared
// directories of links to their members' workspaces (groups/<group>/).

import { lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { ObjectRef } from '../../api/meta.js';
import type { Sandbox } from './sandbox.js';

export class Workspaces {
  constructor(
    private readonly dataDir: string,
    private readonly sandbox: () => Sandbox,
  ) {}

  /** The agent's workspace directory. */
  workspace(ref: ObjectRef): string {
    return join(this.dataDir, 'workspaces', ref.namespace, ref.name);
  }

  /** Where warm-pool slots' directories are. */
  get poolDir(): string {
    return join(this.dataDir, 'pool');
  }

  /** The squad's directory of links to its members' workspaces. */
  groupDir(group: string): string {
    return join(this.dataDir, 'groups', group.replace(/[^a-z0-9-]+/g, '_'));
  }

  /**
   * The directory a cold-started worker of the agent runs in: its workspace, or where its
   * workspace links to when it claimed a warm-pool slot once (its engine's session files are
   * keyed by that path, so a later engine finds them only there).
   */
  workspaceDir(ref: ObjectRef): string {
    const path = this.workspace(ref);
    const target = this.slotDirOf(path);
    if (target) return target;
    if (isLink(path)) rmSync(path, { force: true }); // a link to a slot directory that is gone
    mkdirSync(path, { recursive: true, mode: 0o700 });
    this.sandbox().prepare(path);
    return path;
  }

  /** The warm-pool directory `workspace` links to, if it is such a link. */
  slotDirOf(workspace: string): string | undefined {
    if (!isLink(workspace)) return undefined;
    try {
      const target = realpathSync(workspace);
      return target.startsWith(realpathSync(this.poolDir) + sep) ? target : undefined;
    } catch {
      return undefined;
    }
  }

  /** Slot directories agents claimed: their workspaces' link targets. */
  claimedSlotDirs(): Set<string> {
    const out = new Set<string>();
    const root = join(this.dataDir, 'workspaces');
    for (const ns of safeReaddir(root)) {
      for (const name of safeReaddir(join(root, ns))) {
        const dir = this.slotDirOf(join(root, ns, name));
        if (dir) out.add(join(this.poolDir, dir.slice(dir.lastIndexOf(sep) + 1)));
      }
    }
    return out;
  }

  /**
   * Members of a group read each other's workspaces through one shared directory of links,
   * <dataDir>/groups/<group>/<member> -> that member's workspace (as a squad's pod mounts its
   * members' volumes in the cluster home). Links are only links: removing them never touches a
   * workspace.
   */
  linkPeers(group: string, namespace: string, peers: string[]): string {
    const dir = this.groupDir(group);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.sandbox().prepare(dir);
    const existing = new Set(readdirSync(dir));
    for (const name of existing) if (!peers.includes(name)) rmSync(join(dir, name), { force: true });
    for (const name of peers) {
      if (existing.has(name)) continue;
      const target = this.workspace({ namespace, name });
      mkdirSync(target, { recursive: true, mode: 0o700 });
      this.sandbox().prepare(target);
      symlinkSync(target, join(dir, name));
    }
    return dir;
  }
}

export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
