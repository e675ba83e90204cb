// The tool sandbox of the local runtime: each worker (and so its engine and every tool the model
// runs) starts inside bubblewrap, in a root filesystem built for it: the host's system
// directories read-only, node and the project read-only, its own workspace read-write, nothing
// else of the host (no data directory, no home directories, no other workspace). It has its own
// PID, IPC, UTS, cgroup and network namespaces, no capabilities, no_new_privs and a seccomp filter
// (seccomp.ts), and runs as an unprivileged user whatever the server runs as. See
// docs/security.md "Tool sandbox".

import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../observability/logger.js';
import { currentSeccompArch, seccompProgram } from './seccomp.js';

export type SandboxMode = 'auto' | 'bwrap' | 'none';
export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'bwrap', 'none'];

/** What one worker's sandbox shows besides the system directories, node and the project. */
export interface SandboxView {
  /** The agent's own workspace: bound read-write at its usual path. */
  workspace: string;
  /** Squad peers' workspaces: bound read-only at their usual paths. */
  peers?: string[];
  /** The squad's directory of links to the peers' workspaces: bound read-only. */
  groupDir?: string;
  /** A Unix socket of the server's, bound at the same path (the worker's only way to it). */
  socket?: string;
}

/** A usable bubblewrap, or none: `wrap` turns a worker command into the command to spawn. */
export interface Sandbox {
  readonly kind: 'bwrap' | 'none';
  wrap(argv: string[], view: SandboxView): string[];
  /** Makes a directory the sandbox binds (a workspace, a squad's links) usable by its user. */
  prepare(dir: string): void;
}

/** The host user sandboxed processes run as when the server runs as root: nobody. */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

// The project (dist/, node_modules, package.json) must be visible wherever it is installed.
const PACKAGE_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
// The host's system directories: programs, libraries and configuration (DNS, certificates,
// users). Home directories, /root, /var, /srv, /mnt, /media and /opt are not shown.
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];
/** Where the worker's own copy of node is, inside the sandbox (see `prepareNode`). */
export const SANDBOX_NODE = '/run/agentplane/bin/node';
const SANDBOX_PATH = `${dirname(SANDBOX_NODE)}:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin`;

export const NO_SANDBOX: Sandbox = { kind: 'none', wrap: (argv) => argv, prepare: () => undefined };

const INSTALL_HINT = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';

/**
 * Resolves the serve flag to a sandbox, probing bubblewrap once. `bwrap` refuses to start when
 * it is unusable; so does `auto` when the server runs as root (tools would run as root, with its
 * capabilities); otherwise `auto` falls back to no sandbox with one warning.
 */
export function resolveSandbox(mode: SandboxMode, dataDir: string, logger: Logger, env: NodeJS.ProcessEnv = process.env): Sandbox {
  if (mode === 'none') {
    logger.warn(
      "--sandbox none: agent tools are NOT confined: they run as the server's user and can read the data directory (stored secrets included), other agents' workspaces and, as root, anything on the host",
    );
    return NO_SANDBOX;
  }
  const root = process.getuid?.() === 0;
  const found = probe(env, root, dataDir);
  if (typeof found === 'string') {
    if (mode === 'bwrap') throw new Error(`--sandbox bwrap: bubblewrap is not usable (${found}); ${INSTALL_HINT}, or choose --sandbox none`);
    if (root) {
      throw new Error(
        `--sandbox auto: the server runs as root and bubblewrap is not usable (${found}), so agent tools would run as root on this host; ${INSTALL_HINT}, or run the server as an unprivileged user, or pass --sandbox none to run tools unconfined anyway`,
      );
    }
    logger.warn(
      { reason: found },
      `bubblewrap is not usable, so agent tools are NOT confined: they can read the data directory (state, events, stored secrets) and other processes; ${INSTALL_HINT} to confine them`,
    );
    return NO_SANDBOX;
  }
  logger.info(
    { bwrap: found.bwrap, user: root ? `${SANDBOX_UID}:${SANDBOX_GID}` : "the server's, in a user namespace" },
    'agent tools are confined: each worker runs in a bubblewrap sandbox',
  );
  return bwrapSandbox(found);
}

interface Tools {
  bwrap: string;
  /** As root: util-linux's setpriv, which drops to the sandbox user inside the sandbox. */
  setpriv?: string;
  /** The seccomp program's file and the worker's node (`prepareNode`), under the data directory. */
  seccomp: string;
  node: string;
}

/** Finds the tools, writes the sandbox's files, runs a trivial sandbox once; or says why not. */
function probe(env: NodeJS.ProcessEnv, root: boolean, dataDir: string): Tools | string {
  const path = env.PATH ?? '';
  const bwrap = findExecutable('bwrap', path);
  if (!bwrap) return 'bwrap not found on PATH';
  const setpriv = root ? findExecutable('setpriv', path) : undefined;
  if (root && !setpriv) return 'setpriv (util-linux) not found on PATH; it drops root inside the sandbox';
  const arch = currentSeccompArch();
  if (!arch) return `no seccomp filter for the ${process.arch} architecture`;
  let tools: Tools;
  try {
    const dir = join(dataDir, 'sandbox');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const seccomp = join(dir, `seccomp-${arch}.bpf`);
    writeFileSync(seccomp, seccompProgram(arch), { mode: 0o600 });
    tools = { bwrap, ...(setpriv ? { setpriv } : {}), seccomp, node: prepareNode(nodeDir(env) ?? dir) };
  } catch (err) {
    return `cannot prepare the sandbox's files under ${dataDir}: ${(err as Error).message}`;
  }
  const argv = build(tools, ['true'], { workspace: undefined });
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000, env: { PATH: path }, cwd: '/' });
  if (r.error) return `${bwrap}: ${r.error.message}`;
  if (r.status !== 0) return `${bwrap} exited ${r.status ?? r.signal}: ${String(r.stderr).trim().slice(0, 300)}`;
  return tools;
}

/**
 * Where the worker's node is kept: the user's cache (one copy for every data directory, and none
 * in a small one), or undefined to keep it in the data directory.
 */
function nodeDir(env: NodeJS.ProcessEnv): string | undefined {
  const cache = env.XDG_CACHE_HOME || (env.HOME ? join(env.HOME, '.cache') : undefined);
  if (!cache) return undefined;
  const dir = join(cache, 'agentplane', 'sandbox');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK);
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * The worker's node: a copy of the server's that nobody may read, only execute. A process started
 * from a file it cannot read is not dumpable, so the tools it starts (same user) cannot read its
 * memory, environment or descriptors under /proc, nor trace it: the worker's control token and
 * model credential stay its own. Copied again when the server's node changes.
 */
function prepareNode(dir: string): string {
  const source = realpathSync(process.execPath);
  const target = join(dir, `node-${process.version}`);
  const src = statSync(source);
  try {
    const t = statSync(target);
    if (t.size === src.size && t.mtimeMs === src.mtimeMs && (t.mode & 0o777) === 0o111) return target;
  } catch {
    // not there yet
  }
  const tmp = `${target}.${process.pid}.tmp`;
  copyFileSync(source, tmp);
  chmodSync(tmp, 0o111);
  utimesSync(tmp, src.atime, src.mtime);
  renameSync(tmp, target);
  return target;
}

function findExecutable(name: string, pathVar: string): string | undefined {
  for (const dir of pathVar.split(delimiter).filter(Boolean)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

function bwrapSandbox(tools: Tools): Sandbox {
  const owner = tools.setpriv ? { uid: SANDBOX_UID, gid: SANDBOX_GID } : undefined;
  return {
    kind: 'bwrap',
    wrap: (argv, view) => build(tools, argv, view),
    prepare(dir) {
      if (owner) chownTree(dir, owner.uid, owner.gid);
    },
  };
}

/** The command that runs `argv` in a sandbox showing `view`. */
function build(tools: Tools, argv: string[], view: Partial<SandboxView> & { workspace: string | undefined }): string[] {
  const args = [
    // Namespaces: no other process, IPC object or hostname of the host is visible.
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--die-with-parent',
  ];
  // With the server's socket, a network of its own: loopback only, so the host's ports (the
  // server's API among them) are out of reach and the socket is the one way out.
  if (view.socket) args.push('--unshare-net');
  // Without root, bubblewrap needs a user namespace: the sandbox user is the server's, and no
  // namespace can be made inside. As root it sets up as root (every path is readable to it) and
  // the worker's user namespace is made inside, after setpriv dropped to nobody (below).
  if (!tools.setpriv) args.push('--unshare-user', '--disable-userns');
  for (const dir of SYSTEM_DIRS) args.push(...systemDir(dir));
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp', '--perms', '0755', '--tmpfs', '/run');
  const binds: [string, string, 'ro' | 'rw'][] = [];
  binds.push([tools.node, SANDBOX_NODE, 'ro']);
  for (const p of ['dist', 'node_modules', 'package.json']) binds.push([real(join(PACKAGE_ROOT, p)), real(join(PACKAGE_ROOT, p)), 'ro']);
  if (view.workspace) binds.push([view.workspace, view.workspace, 'rw']);
  for (const p of view.peers ?? []) if (p !== view.workspace) binds.push([p, p, 'ro']);
  if (view.groupDir) binds.push([view.groupDir, view.groupDir, 'ro']);
  if (view.socket) binds.push([view.socket, view.socket, 'ro']);
  const made = new Set<string>(['/', '/tmp', '/run', ...SYSTEM_DIRS]);
  for (const [src, dest, how] of binds) {
    // Parents bubblewrap would make copy the host's modes (a 0700 /root); make them walkable.
    for (const parent of ancestors(dest)) {
      if (made.has(parent) || SYSTEM_DIRS.some((s) => inside(parent, s))) continue;
      made.add(parent);
      args.push('--perms', '0755', '--dir', parent);
    }
    args.push(how === 'rw' ? '--bind' : '--ro-bind', src, dest);
    made.add(dest);
  }
  // Host PATH entries outside the sandbox do not exist in it; node is the worker's own copy.
  args.push('--setenv', 'PATH', SANDBOX_PATH, '--chdir', view.workspace ?? '/');
  const worker = argv[0] === process.execPath ? [SANDBOX_NODE, ...argv.slice(1)] : argv;
  // As root: drop to nobody (no capability, no bounding set), then a second bubblewrap, now
  // unprivileged, puts the worker in a user namespace that maps nobody alone and forbids nested
  // ones, and loads the filter (which would refuse it that namespace if loaded before). It shows
  // the sandbox as it is: --dev-bind, since --bind would make the minimal /dev's nodes unusable.
  const seccomp = ['--seccomp', '9'];
  const command = tools.setpriv
    ? [
        '--',
        tools.setpriv,
        `--reuid=${SANDBOX_UID}`,
        `--regid=${SANDBOX_GID}`,
        '--clear-groups',
        '--inh-caps=-all',
        '--bounding-set=-all',
        '--',
        tools.bwrap,
        '--unshare-user',
        '--disable-userns',
        '--uid',
        String(SANDBOX_UID),
        '--gid',
        String(SANDBOX_GID),
        '--dev-bind',
        '/',
        '/',
        '--die-with-parent',
        ...seccomp,
        '--',
        ...worker,
      ]
    : [...seccomp, '--', ...worker];
  // The seccomp program reaches bubblewrap on descriptor 9 (dash knows single digits only). The
  // bwrap processes ignore SIGTERM (an ignored signal survives exec) so that stopping the process group reaches the worker,
  // which shuts down gracefully; bwrap follows when it exits. SIGKILL, or the death of bwrap's
  // parent, ends the whole namespace, tools included.
  return ['/bin/sh', '-c', 'f=$1; shift; trap "" TERM; exec "$@" 9<"$f"', 'sandbox', tools.seccomp, tools.bwrap, ...args, ...command];
}

/** A system directory as the host has it: a read-only bind, or the same symlink (merged /usr). */
function systemDir(dir: string): string[] {
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) return ['--symlink', readlinkSync(dir), dir];
    if (st.isDirectory()) return ['--ro-bind', dir, dir];
  } catch {
    // not on this host
  }
  return [];
}

function ancestors(p: string): string[] {
  const out: string[] = [];
  for (let d = dirname(p); d !== '/' && d !== '.'; d = dirname(d)) out.unshift(d);
  return out;
}

/** Gives a tree to the sandbox user (as root, workspaces written before this version are root's). */
function chownTree(dir: string, uid: number, gid: number): void {
  const st = lstatSync(dir);
  if (st.uid === uid && st.gid === gid) return;
  const walk = (p: string): void => {
    const s = lstatSync(p);
    if (s.uid !== uid || s.gid !== gid) lchownSync(p, uid, gid); // a link itself, never its target
    if (s.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(dir);
}

function inside(p: string, dir: string): boolean {
  const rel = relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
