// GET /api/v1/agents/{name}/files?path=: the agent's workspace, read-only (a directory's entries
// or a file's text). Only where the server can see workspaces (local workers); with agents in
// pods it answers 501 NotImplemented (docs/dashboard.md "Workspace files").

import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '../../api/errors.js';
import type { ObjectRef } from '../../api/meta.js';
import type { WorkspaceFilesResponse } from '../../api/workspace.js';
import type { AgentService } from '../rest/agent-service.js';
import { namespaceOf, type Query } from '../params.js';

/** Reads `path` in the agent's workspace; absent when workspaces are out of the server's reach. */
export type WorkspaceReader = (ref: ObjectRef, path: string) => Omit<WorkspaceFilesResponse, 'agent' | 'namespace'>;

export function agentFileRoutes(service: Pick<AgentService, 'get'>, read: WorkspaceReader | undefined) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Params: { name: string } }>('/api/v1/agents/:name/files', async (req): Promise<WorkspaceFilesResponse> => {
      const q = req.query as Query;
      const namespace = namespaceOf(q);
      const raw = q.path;
      if (Array.isArray(raw)) throw badRequest('give path once', { causes: [{ field: 'path', message: 'given more than once' }] });
      // 404 for an agent that does not exist, before anything is read.
      await service.get(namespace, req.params.name);
      if (!read) {
        throw new ApiError(
          'NotImplemented',
          501,
          'workspace files can only be read when agents run as local worker processes (the embedded home); agents in pods keep their workspace in a volume this server does not mount: use `kubectl exec` into the agent\'s pod',
        );
      }
      return { agent: req.params.name, namespace, ...read({ namespace, name: req.params.name }, raw ?? '') };
    });
  };
}
