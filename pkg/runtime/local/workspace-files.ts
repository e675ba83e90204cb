// Read-only access to a local agent's workspace for GET /api/v1/agents/{name}/files. The agent
// writes its workspace and may plant symbolic links there (to the data directory, to /etc), so
// a path is resolved, every link followed, and the result must still lie inside the workspace;
// the opened descriptor is checked again, because the agent may swap a directory for a link
// between the check and the open.

import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { ApiError, badRequest } from '../../api/errors.js';
import { WORKSPACE_DIR_MAX_ENTRIES, WORKSPACE_FILE_MAX_BYTES, type WorkspaceDirEntry, type WorkspaceFilesResponse } from '../../api/workspace.js';

export type WorkspaceView = Omit<WorkspaceFilesResponse, 'agent' | 'namespace'>;

const PROC_FD = '/proc/self/fd';
const BINARY_SNIFF_BYTES = 8000;

/** `path` (relative to the workspace `root`; '' or '/' for the root itself), read-only. */
export function readWorkspacePath(root: string, path: string): WorkspaceView {
  const segments = segmentsOf(path);
  const shown = segments.join('/');
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
  } catch (err) {
    // No worker has run yet: an empty workspace.
    if (isMissing(err) && segments.length === 0) return { path: '', type: 'directory', entries: [], truncated: false };
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
    const st = fstatSync(fd);
    if (st.isDirectory()) {
      const dir = viaProc ? `${PROC_FD}/${fd}` : real;
      const names = readdirSync(dir).sort();
      const entries: WorkspaceDirEntry[] = [];
      for (const name of names.slice(0, WORKSPACE_DIR_MAX_ENTRIES)) entries.push(entryOf(dir, name));
      return { path: shown, type: 'directory', entries, truncated: names.length > WORKSPACE_DIR_MAX_ENTRIES };
    }
    if (!st.isFile()) throw badRequest(`"${shown}" is neither a regular file nor a directory`, { causes: [{ field: 'path', message: 'not a regular file or directory' }] });
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
