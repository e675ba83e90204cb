// Read-only access to a local agent's workspace for GET /api/v1/agents/{name}/files. The agent
// writes its workspace and may plant symbolic links there (to the data directory, to /etc), so
// a path is resolved, every link followed, and the result must still lie inside the workspace;
// the opened descriptor is checked again, because the agent may swap a directory for a link
// between the check and the open.

import {
  closeSync,
  constants,
  createReadStream,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import type { Readable } from 'node:stream';
import { join, sep } from 'node:path';
import { ApiError, badRequest } from '../../api/errors.js';
import { WORKSPACE_DIR_MAX_ENTRIES, WORKSPACE_FILE_MAX_BYTES, type WorkspaceDirEntry, type WorkspaceFilesResponse } from '../../api/workspace.js';

export type WorkspaceView = Omit<WorkspaceFilesResponse, 'agent' | 'namespace'>;

const PROC_FD = '/proc/self/fd';
const BINARY_SNIFF_BYTES = 8000;

/** `path` (relative to the workspace `root`; '' or '/' for the root itself), read-only. */
export function readWorkspacePath(root: string, path: string): WorkspaceView {
  const opened = openConfined(root, path);
  if ('empty' in opened) return { path: '', type: 'directory', entries: [], truncated: false };
  const { fd, st, shown, dir } = opened;
  try {
    if (st.isDirectory()) {
      const names = readdirSync(dir).sort();
      const entries: WorkspaceDirEntry[] = [];
      for (const name of names.slice(0, WORKSPACE_DIR_MAX_ENTRIES)) entries.push(entryOf(dir, name));
      return { path: shown, type: 'directory', entries, truncated: names.length > WORKSPACE_DIR_MAX_ENTRIES };
    }
    if (!st.isFile()) throw notAFile(shown);
    const buf = Buffer.alloc(Math.min(st.size, WORKSPACE_FILE_MAX_BYTES));
    let read = 0;
    while (read < buf.length) {
      const n = readSync(fd, buf, read, buf.length - read, read);
      if (n === 0) break;
      read += n;
    }
    const body = buf.subarray(0, read);
    const binary = body.subarray(0, BINARY_SNIFF_BYTES).includes(0);
    return { path: shown, type: 'file', size: st.size, content: binary ? '' : body.toString('utf8'), binary, truncated: st.size > read };
  } finally {
    closeSync(fd);
  }
}

/** A workspace file to send as it is (a download): its bytes as a stream, which closes the file. */
export interface WorkspaceFile {
  path: string;
  /** The file's own name (the path's last segment). */
  name: string;
  size: number;
  stream: Readable;
}

/**
 * Opens the regular file at `path` for a download, with the confinement of `readWorkspacePath`:
 * a directory or anything else that is no regular file is 400, one outside the workspace too.
 */
export function openWorkspaceFile(root: string, path: string): WorkspaceFile {
  const opened = openConfined(root, path);
  if ('empty' in opened) throw notDownloadable('', true);
  const { fd, st, shown } = opened;
  if (!st.isFile()) {
    closeSync(fd);
    throw notDownloadable(shown, st.isDirectory());
  }
  // The descriptor checked above is the one read: a swap of the path after the check changes nothing.
  return { path: shown, name: shown.split('/').at(-1) ?? shown, size: st.size, stream: createReadStream('', { fd, autoClose: true }) };
}

/**
 * Resolves `path` inside the workspace and opens it, checked twice (before and after the open);
 * the caller closes `fd`. `empty` when no worker has made the workspace yet and the root is asked.
 */
function openConfined(root: string, path: string): { fd: number; st: Stats; shown: string; dir: string } | { empty: true } {
  const segments = segmentsOf(path);
  const shown = segments.join('/');
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
  } catch (err) {
    // No worker has run yet: an empty workspace.
    if (isMissing(err) && segments.length === 0) return { empty: true };
    throw missing(shown, err);
  }
  let real: string;
  try {
    real = realpathSync(join(rootReal, ...segments));
  } catch (err) {
    throw missing(shown, err);
  }
  if (!inside(rootReal, real)) throw outside(shown);

  let fd: number;
  try {
    // O_NONBLOCK: a FIFO the agent made must not hang the request on open.
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw outside(shown);
    throw missing(shown, err);
  }
  try {
    const viaProc = existsSync(PROC_FD);
    if (viaProc && !inside(rootReal, readlinkSync(`${PROC_FD}/${fd}`))) throw outside(shown);
    return { fd, st: fstatSync(fd), shown, dir: viaProc ? `${PROC_FD}/${fd}` : real };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

const notAFile = (shown: string): ApiError =>
  badRequest(`"${shown}" is neither a regular file nor a directory`, { causes: [{ field: 'path', message: 'not a regular file or directory' }] });

/** Why `path` cannot be downloaded: a directory (or the workspace itself), or no regular file. */
const notDownloadable = (shown: string, directory: boolean): ApiError =>
  directory
    ? badRequest(`"${shown || '/'}" is a directory: only a regular file can be downloaded (list a directory with GET .../files?path=)`, {
        causes: [{ field: 'path', message: 'is a directory' }],
      })
    : badRequest(`"${shown}" is not a regular file: only a regular file can be downloaded`, { causes: [{ field: 'path', message: 'not a regular file' }] });

/** The path's segments; `..` is refused outright rather than resolved. */
function segmentsOf(path: string): string[] {
  if (path.includes('\0')) throw badRequest('path must not contain NUL bytes', { causes: [{ field: 'path', message: 'must not contain NUL bytes' }] });
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    throw badRequest(`path "${path}" must stay inside the workspace: ".." is not allowed`, { causes: [{ field: 'path', message: 'must not contain ".."' }] });
  }
  return segments;
}

function entryOf(dir: string, name: string): WorkspaceDirEntry {
  try {
    const st = lstatSync(join(dir, name));
    if (st.isFile()) return { name, type: 'file', size: st.size };
    return { name, type: st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other' };
  } catch {
    return { name, type: 'other' };
  }
}

const inside = (root: string, p: string): boolean => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

const isMissing = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/** A failed resolve or open as the client's answer; anything unexpected stays a 500. */
function missing(path: string, err: unknown): ApiError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENAMETOOLONG') return badRequest(`path "${path.slice(0, 100)}…" is too long`, { causes: [{ field: 'path', message: 'is too long' }] });
  if (code === 'ELOOP') return badRequest(`path "${path}" goes through a loop of symbolic links`, { causes: [{ field: 'path', message: 'loops' }] });
  if (!isMissing(err) && code !== 'EACCES') throw err;
  return new ApiError('NotFound', 404, `no file or directory "${path}" in the workspace`, { kind: 'file', name: path });
}

const outside = (path: string): ApiError =>
  badRequest(`path "${path}" leads outside the workspace (through a symbolic link); only the workspace can be read`, {
    causes: [{ field: 'path', message: 'leads outside the workspace' }],
  });
