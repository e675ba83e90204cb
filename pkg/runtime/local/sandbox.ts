// The tool sandbox of the local runtime: each worker (and so its engine and every tool the model
// runs) starts inside bubblewrap with its own PID namespace and a read-only view of the host in
// which the data directory is an empty tmpfs and only the agent's own workspace is writable.
// See docs/security.md "Tool sandbox".

import { spawnSync } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../observability/logger.js';

export type SandboxMode = 'auto' | 'bwrap' | 'none';
export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'bwrap', 'none'];

/** What one worker's sandbox shows besides the read-only host. */
export interface SandboxView {
  /** The agent's own workspace: bound read-write at its usual path. */
  workspace: string;
  /** Squad peers' workspaces: bound read-only at their usual paths. */
  peers?: string[];
  /** The squad's directory of links to the peers' workspaces: bound read-only. */
  groupDir?: string;
}

/** A usable bubblewrap, or none: `wrap` turns a worker command into the command to spawn. */
export interface Sandbox {
  readonly kind: 'bwrap' | 'none';
  wrap(argv: string[], view: SandboxView): string[];
}

// The project (dist/ and node_modules) and node must stay visible wherever they are installed.
const PACKAGE_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export const NO_SANDBOX: Sandbox = { kind: 'none', wrap: (argv) => argv };

const INSTALL_HINT = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';

/**
 * Resolves the serve flag to a sandbox, probing bubblewrap once. `bwrap` refuses to start when
 * it is unusable; `auto` falls back to no sandbox with one warning.
 */
export function resolveSandbox(
  mode: SandboxMode,
  dataDir: string,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Sandbox {
  if (mode === 'none') {
    logger.warn('--sandbox none: agent tools are not confined and can read the data directory, including stored secrets');
    return NO_SANDBOX;
  }
  const problem = probe(env);
  if (typeof problem === 'string') {
    if (mode === 'bwrap') throw new Error(`--sandbox bwrap: bubblewrap is not usable (${problem}); ${INSTALL_HINT}, or choose --sandbox auto or none`);
    logger.warn(
      { reason: problem },
      `bubblewrap is not usable, so agent tools are NOT confined: they can read the data directory (state, events, stored secrets) and other processes; ${INSTALL_HINT} to confine them`,
    );
    return NO_SANDBOX;
  }
  logger.info({ bwrap: problem.path }, 'agent tools are confined: each worker runs in a bubblewrap sandbox');
  return bwrapSandbox(problem.path, dataDir);
}

/** Runs a trivial sandbox once; returns bwrap's path or why it cannot be used. */
function probe(env: NodeJS.ProcessEnv): { path: string } | string {
  const path = findExecutable('bwrap', env.PATH ?? '');
  if (!path) return 'bwrap not found on PATH';
  const r = spawnSync(path, [...baseArgs(), '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000, env: { PATH: env.PATH ?? '' } });
  if (r.error) return `${path}: ${r.error.message}`;
  if (r.status !== 0) return `${path} exited ${r.status ?? r.signal}: ${String(r.stderr).trim().slice(0, 300)}`;
  return { path };
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

function baseArgs(): string[] {
  // Its own PID namespace (fresh /proc: no other process's environment or command line), a
  // minimal /dev, a private /tmp; the network stays shared (workers dial the server).
  return ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-pid', '--die-with-parent'];
}

export function bwrapSandbox(bwrap: string, dataDir: string): Sandbox {
  const keep = [process.execPath, PACKAGE_ROOT, join(PACKAGE_ROOT, 'node_modules')].map(real);
  return {
    kind: 'bwrap',
    wrap(argv, view) {
      const args = baseArgs();
      // Hide, then show again what the worker needs that lives under what was hidden.
      args.push(...restore(keep, '/tmp'));
      args.push('--tmpfs', dataDir, ...restore(keep, dataDir));
      args.push('--bind', view.workspace, view.workspace);
      for (const p of view.peers ?? []) if (p !== view.workspace) args.push('--ro-bind', p, p);
      if (view.groupDir) args.push('--ro-bind', view.groupDir, view.groupDir);
      args.push('--chdir', view.workspace, '--');
      // The bwrap processes ignore SIGTERM (an ignored signal survives exec) so that stopping the
      // process group reaches the worker, which shuts down gracefully; bwrap follows when it exits.
      // SIGKILL, or the death of bwrap's parent, ends the whole namespace, tools included.
      return ['/bin/sh', '-c', 'trap "" TERM; exec "$@"', 'sandbox', bwrap, ...args, ...argv];
    },
  };
}

function restore(paths: string[], hidden: string): string[] {
  const out: string[] = [];
  for (const p of paths) if (inside(p, hidden)) out.push('--ro-bind', p, p);
  return out;
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
