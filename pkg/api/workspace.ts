// A read-only view of an agent's workspace: GET /api/v1/agents/{name}/files?path= (embedded
// home with local workers; docs/dashboard.md "Workspace files").

/** At most this many bytes of a file are returned; `truncated` says there were more. */
export const WORKSPACE_FILE_MAX_BYTES = 1024 * 1024;
/** At most this many entries of a directory are returned (sorted by name); `truncated` says there were more. */
export const WORKSPACE_DIR_MAX_ENTRIES = 1000;

export type WorkspaceEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface WorkspaceDirEntry {
  name: string;
  type: WorkspaceEntryType;
  /** Bytes, for files. */
  size?: number;
}

export interface WorkspaceFilesResponse {
  agent: string;
  namespace: string;
  /** The path asked for, relative to the workspace ('' is the workspace itself). */
  path: string;
  type: 'file' | 'directory';
  /** Directory: its entries, sorted by name. */
  entries?: WorkspaceDirEntry[];
  /** File: its size in bytes. */
  size?: number;
  /** File: its text (UTF-8), empty when `binary`. */
  content?: string;
  /** File: it holds NUL bytes, so no text is returned. */
  binary?: boolean;
  /** More entries or bytes than returned. */
  truncated: boolean;
}

export const workspaceFilesResponseSchema = {
  $id: 'WorkspaceFilesResponse',
  type: 'object',
  required: ['agent', 'namespace', 'path', 'type', 'truncated'],
  properties: {
    agent: { type: 'string' },
    namespace: { type: 'string' },
    path: { type: 'string' },
    type: { type: 'string', enum: ['file', 'directory'] },
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'type'],
        properties: {
          name: { type: 'string' },
          type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'] },
          size: { type: 'integer', minimum: 0 },
        },
      },
    },
    size: { type: 'integer', minimum: 0 },
    content: { type: 'string' },
    binary: { type: 'boolean' },
    truncated: { type: 'boolean' },
  },
} as const;
