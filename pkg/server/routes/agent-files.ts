// The agent's workspace, read-only: GET /api/v1/agents/{name}/files?path= (a directory's entries
// or a file's text), and a file's raw bytes, binary-safe, as a download: the same route with
// `download=1`, or GET /api/v1/agents/{name}/download/<path> (the path komputer-ai's clients
// use). Only where the server can see workspaces (local workers); with agents in pods it answers
// 501 NotImplemented (docs/dashboard.md "Workspace files").

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Readable } from 'node:stream';
import { ApiError, badRequest } from '../../api/errors.js';
import type { ObjectRef } from '../../api/meta.js';
import type { WorkspaceFilesResponse } from '../../api/workspace.js';
import type { AgentService } from '../services/agent-service.js';
import { namespaceOf, type Query } from '../params.js';

/** Reads `path` in the agent's workspace; absent when workspaces are out of the server's reach. */
export type WorkspaceReader = (ref: ObjectRef, path: string) => Omit<WorkspaceFilesResponse, 'agent' | 'namespace'>;

/** Opens the regular file at `path` in the agent's workspace for a download (same confinement as the reader). */
export type WorkspaceDownloader = (ref: ObjectRef, path: string) => { name: string; size: number; stream: Readable };

export interface WorkspaceAccess {
  read: WorkspaceReader;
  download: WorkspaceDownloader;
}

export function agentFileRoutes(service: Pick<AgentService, 'get'>, access: WorkspaceAccess | undefined) {
  /** The agent must exist (404 before anything is read), and its workspace be in reach (501). */
  const reachable = async (q: Query, name: string): Promise<WorkspaceAccess> => {
    await service.get(namespaceOf(q), name);
    if (!access) {
      throw new ApiError(
        'NotImplemented',
        501,
        "workspace files can only be read when agents run as local worker processes (the embedded home); agents in pods keep their workspace in a volume this server does not mount: use `kubectl exec` into the agent's pod",
      );
    }
    return access;
  };

  const send = async (reply: FastifyReply, q: Query, name: string, path: string): Promise<FastifyReply> => {
    const file = (await reachable(q, name)).download({ namespace: namespaceOf(q), name }, path);
    // The name is quoted for the header (RFC 6266): the ASCII fallback, and the exact name in UTF-8.
    const ascii = file.name.replace(/[^\x20-\x7e]|["\\]/g, '_');
    return reply
      .type('application/octet-stream')
      .header('content-length', String(file.size))
      .header('content-disposition', `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.name)}`)
      .header('x-content-type-options', 'nosniff')
      .send(file.stream);
  };

  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Params: { name: string } }>('/api/v1/agents/:name/files', async (req, reply) => {
      const q = req.query as Query;
      const raw = q.path;
      if (Array.isArray(raw)) throw badRequest('give path once', { causes: [{ field: 'path', message: 'given more than once' }] });
      if (downloadOf(q)) return send(reply, q, req.params.name, raw ?? '');
      const { read } = await reachable(q, req.params.name);
      const namespace = namespaceOf(q);
      return { agent: req.params.name, namespace, ...read({ namespace, name: req.params.name }, raw ?? '') } satisfies WorkspaceFilesResponse;
    });

    app.get<{ Params: { name: string; '*': string } }>('/api/v1/agents/:name/download/*', async (req, reply) => {
      return send(reply, req.query as Query, req.params.name, req.params['*']);
    });
  };
}

/** `download`: "1", "true" or "" (present) for the raw bytes; "0" or "false" (or absent) for the JSON view. */
function downloadOf(q: Query): boolean {
  const v = q.download;
  if (v === undefined) return false;
  if (Array.isArray(v)) throw badRequest('query parameter "download" is given more than once');
  if (v === '1' || v === 'true' || v === '') return true;
  if (v === '0' || v === 'false') return false;
  throw badRequest('query parameter "download" must be "1" (or "true") for the raw file, or "0"', {
    causes: [{ field: 'download', message: 'must be 1, true, 0 or false' }],
  });
}
