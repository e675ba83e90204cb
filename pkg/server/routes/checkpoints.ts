// REST mirror of checkpoints: an agent's at /api/v1/agents/:name/checkpoints, a squad's (one per
// member, at one moment) by POST /api/v1/squads/:name/checkpoints (docs/checkpoints.md).

import type { FastifyInstance } from 'fastify';
import { checkpointShortName, type SquadCheckpointResponse, toCheckpointResponse } from '../../api/checkpoint.js';
import type { CheckpointService } from '../services/checkpoint-service.js';
import { jsonBody } from '../body.js';
import { namespaceOf, type Query } from '../params.js';

interface NameParams {
  name: string;
}

export function checkpointRoutes(checkpoints: CheckpointService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post<{ Params: NameParams }>('/api/v1/agents/:name/checkpoints', async (req, reply) => {
      const { code, checkpoint } = await checkpoints.create(namespaceOf(req.query as Query), req.params.name, jsonBody(req));
      return reply.status(code).send(toCheckpointResponse(checkpoint));
    });

    app.post<{ Params: NameParams }>('/api/v1/squads/:name/checkpoints', async (req, reply) => {
      const namespace = namespaceOf(req.query as Query);
      const { code, checkpoints: items } = await checkpoints.createForSquad(namespace, req.params.name, jsonBody(req));
      const name = items[0] ? checkpointShortName(items[0]) : '';
      return reply
        .status(code)
        .send({ squad: req.params.name, name, namespace, checkpoints: items.map(toCheckpointResponse) } satisfies SquadCheckpointResponse);
    });

    app.get<{ Params: NameParams }>('/api/v1/agents/:name/checkpoints', async (req) => {
      const items = await checkpoints.list(namespaceOf(req.query as Query), req.params.name);
      return { checkpoints: items.map(toCheckpointResponse) };
    });

    app.get<{ Params: NameParams & { checkpoint: string } }>('/api/v1/agents/:name/checkpoints/:checkpoint', async (req) => {
      return toCheckpointResponse(await checkpoints.get(namespaceOf(req.query as Query), req.params.name, req.params.checkpoint));
    });

    app.delete<{ Params: NameParams & { checkpoint: string } }>('/api/v1/agents/:name/checkpoints/:checkpoint', async (req) => {
      return toCheckpointResponse(await checkpoints.delete(namespaceOf(req.query as Query), req.params.name, req.params.checkpoint));
    });
  };
}
