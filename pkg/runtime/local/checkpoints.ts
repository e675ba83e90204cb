// Checkpoints of the local runtime: a copy of the agent's workspace directory under
// <dataDir>/checkpoints/<namespace>/<checkpoint>/, reflinked where the filesystem offers it
// (btrfs, XFS: instant and shared until written), else copied. The engine keeps its session under
// the workspace (.claude/projects/<its working directory, escaped>/), so the copy holds the
// conversation too; a restore into another agent's workspace renames that directory for the new
// working directory, which is how the forked engine finds the session it resumes.
// `checkpoint.json`, written last, marks a complete copy (docs/checkpoints.md "Consistency").

import { constants } from 'node:fs';
import { cp, lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectRef } from '../../api/meta.js';
import type { CheckpointStorage } from '../runtime.js';
import type { Workspaces } from './workspaces.js';

interface Manifest {
  /** The directory the source agent's engine ran in: its session directory is named for it. */
  engineDir: string;
  bytes: number;
  takenAt: string;
  /** The engine session written last (a task's that ran while the copy was taken, too). */
  sessionId?: string;
}

const MANIFEST = 'checkpoint.json';

/** The engine's name for a working directory's session directory (every other character a dash). */
export const engineProjectDir = (dir: string): string => dir.replace(/[^a-zA-Z0-9]/g, '-');

export class LocalCheckpoints implements CheckpointStorage {
  constructor(
    private readonly root: string,
    private readonly dirs: Pick<Workspaces, 'workspace'>,
    /** Gives a restored workspace to the sandbox's user. */
    private readonly prepare: (dir: string) => void,
  ) {}

  async take(id: string, ref: ObjectRef): Promise<{ bytes: number; sessionId?: string }> {
    const dir = this.dir(id);
    const done = await readManifest(dir);
    if (done) return { bytes: done.bytes, ...(done.sessionId ? { sessionId: done.sessionId } : {}) };
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const workspace = this.dirs.workspace(ref);
    // A workspace taken from the warm pool is a link to the slot directory the engine ran in.
    const engineDir = await realpath(workspace).catch(() => workspace);
    const bytes = await copyLiveTree(engineDir, join(dir, 'workspace'));
    const sessionId = await newestSession(join(dir, 'workspace', '.claude', 'projects', engineProjectDir(engineDir)));
    const manifest: Manifest = { engineDir, bytes, takenAt: new Date().toISOString(), ...(sessionId ? { sessionId } : {}) };
    await writeFile(join(dir, `${MANIFEST}.tmp`), JSON.stringify(manifest));
    await rename(join(dir, `${MANIFEST}.tmp`), join(dir, MANIFEST));
    return { bytes, ...(sessionId ? { sessionId } : {}) };
  }

  async restore(id: string, to: ObjectRef): Promise<void> {
    const dir = this.dir(id);
    const manifest = await readManifest(dir);
    if (!manifest) throw new Error(`checkpoint ${id} is not complete`);
    const target = this.dirs.workspace(to);
    await rm(target, { recursive: true, force: true });
    await mkdir(join(target, '..'), { recursive: true, mode: 0o700 });
    await copyTree(join(dir, 'workspace'), target);
    const projects = join(target, '.claude', 'projects');
    const from = join(projects, engineProjectDir(manifest.engineDir));
    const into = join(projects, engineProjectDir(target));
    if (from !== into && (await exists(from))) {
      await rm(into, { recursive: true, force: true });
      await rename(from, into);
    }
    this.prepare(target);
  }

  async remove(id: string): Promise<void> {
    await rm(this.dir(id), { recursive: true, force: true });
  }

  async list(): Promise<string[]> {
    const out: string[] = [];
    for (const ns of await readdir(this.root).catch(() => [] as string[])) {
      for (const name of await readdir(join(this.root, ns)).catch(() => [] as string[])) out.push(`${ns}/${name}`);
    }
    return out;
  }

  private dir(id: string): string {
    const [namespace, name] = id.split('/');
    if (!namespace || !name || id.split('/').length !== 2 || name.startsWith('.')) throw new Error(`invalid checkpoint id "${id}"`);
    return join(this.root, namespace, name);
  }
}

/**
 * Copies a tree (reflinks where the filesystem can, else bytes), keeping modes, times and
 * symbolic links as they are; sockets and other special files are left out. Returns the bytes
 * of the files copied. A missing source is an empty tree: an agent that never ran has no files.
 */
async function copyTree(from: string, to: string): Promise<number> {
  let bytes = 0;
  if (!(await exists(from))) {
    await mkdir(to, { recursive: true, mode: 0o700 });
    return 0;
  }
  await cp(from, to, {
    recursive: true,
    mode: constants.COPYFILE_FICLONE,
    preserveTimestamps: true,
    verbatimSymlinks: true,
    filter: async (src) => {
      // The agent's skills and memories (read-only copies) are the next task's to write.
      if (src === join(from, '.agentplane')) return false;
      // A file gone since its directory was read (an engine's temporary file) is not in the copy.
      const st = await lstat(src).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
      if (!st) return false;
      if (st.isFile()) bytes += st.size;
      return st.isFile() || st.isDirectory() || st.isSymbolicLink();
    },
  });
  return bytes;
}

/**
 * A copy of a workspace a process may still write in (a worker between tasks, or one stopping):
 * a file that goes away while it is copied cuts the copy short, so it is taken again, at most
 * three times in all.
 */
async function copyLiveTree(from: string, to: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await copyTree(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 3) throw err;
      await rm(to, { recursive: true, force: true });
    }
  }
}

/** The engine session (a `<id>.jsonl` transcript) written last in a session directory. */
async function newestSession(dir: string): Promise<string | undefined> {
  let best: { id: string; mtime: number } | undefined;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.jsonl')) continue;
    const st = await lstat(join(dir, name)).catch(() => undefined);
    if (st?.isFile() && (!best || st.mtimeMs > best.mtime)) best = { id: name.slice(0, -'.jsonl'.length), mtime: st.mtimeMs };
  }
  return best?.id;
}

async function readManifest(dir: string): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
