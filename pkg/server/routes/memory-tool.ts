// The agents' memory tools' endpoint on the worker-facing listener, beside the connector gateway
// (docs/skills-and-memories.md): GET and PUT <MEMORY_TOOL_PATH>/:name, authenticated by the
// agent's model credential (the worker's in-process `memory` MCP server sends it), not by the
// user auth filter. An agent reaches only the memories it has attached.

import type { FastifyInstance } from 'fastify';
import { ApiError, isApiError, toRestBody } from '../../api/errors.js';
import { MEMORY_TOOL_PATH } from '../../api/worker-protocol.js';
import { credentialOf } from '../../modelproxy/proxy.js';
import type { GrantAuthenticator } from '../../modelproxy/index.js';
import type { AgentMemories } from '../services/agent-memories.js';

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function memoryToolRoutes(memories: AgentMemories, credentials: GrantAuthenticator) {
  return async (app: FastifyInstance): Promise<void> => {
    const handle = async (
      req: { headers: Record<string, string | string[] | undefined>; params: { name: string } },
      act: (grant: NonNullable<ReturnType<GrantAuthenticator['authenticate']>>) => Promise<unknown>,
    ): Promise<{ code: number; body: unknown }> => {
      try {
        const grant = credentials.authenticate(credentialOf(req.headers));
        if (!grant) throw new ApiError('Unauthorized', 401, 'a valid agentplane model credential is required');
        if (!LABEL.test(req.params.name)) throw new ApiError('NotFound', 404, `no memory "${req.params.name}"`);
        return { code: 200, body: await act(grant) };
      } catch (err) {
        if (!isApiError(err)) throw err;
        return { code: err.code, body: toRestBody(err) };
      }
    };
    app.get<{ Params: { name: string } }>(`${MEMORY_TOOL_PATH}/:name`, async (req, reply) => {
      const out = await handle(req, (g) => memories.read(g, req.params.name));
      return reply.code(out.code).send(out.body);
    });
    app.put<{ Params: { name: string }; Body: unknown }>(`${MEMORY_TOOL_PATH}/:name`, { bodyLimit: 256 * 1024 }, async (req, reply) => {
      const body = req.body as { text?: unknown } | undefined;
      const out = await handle(req, (g) => memories.write(g, req.params.name, body?.text));
      return reply.code(out.code).send(out.body);
    });
  };
}
