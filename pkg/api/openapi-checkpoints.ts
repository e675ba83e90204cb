// The OpenAPI paths of an agent's checkpoints (/api/v1/agents/{name}/checkpoints), with their schemas.

import type { OpenAPIV3 } from 'openapi-types';
import { checkpointCreateRequestSchema, checkpointResponseSchema } from './checkpoint.js';
import { NAME_MAX_LENGTH, NAME_PATTERN } from './meta.js';
import { errors, json, nameParam, nsParam, ref, type Schema, toOpenApi } from './openapi-common.js';

const checkpointParam: OpenAPIV3.ParameterObject = {
  name: 'checkpoint',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: NAME_PATTERN, maxLength: NAME_MAX_LENGTH },
  description: "the checkpoint's name among the agent's checkpoints",
};

export function checkpointPaths(): OpenAPIV3.PathsObject {
  return {
    '/api/v1/agents/{name}/checkpoints': {
      post: {
        operationId: 'createCheckpoint',
        description:
          "Takes a checkpoint of the agent: a copy of its workspace and engine session between two of its tasks. 201 with the checkpoint once it is taken; 202 with it Pending while the agent's running task has not ended (it is taken then, and the agent's next task waits for the copy). " +
          'A new agent created with fromCheckpoint "<agent>/<checkpoint>" starts from it. 409 when the agent already has a checkpoint of that name.',
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json(ref('CheckpointCreateRequest')) },
        responses: {
          '201': { description: 'taken', content: json(ref('CheckpointResponse')) },
          '202': { description: 'to be taken once the running task ends', content: json(ref('CheckpointResponse')) },
          ...errors(400, 404, 409, 413, 415),
        },
      },
      get: {
        operationId: 'listCheckpoints',
        description: "The agent's checkpoints (also those of an agent deleted since: a checkpoint outlives its agent).",
        parameters: [nameParam, nsParam],
        responses: {
          '200': {
            description: 'checkpoints',
            content: json({ type: 'object', required: ['checkpoints'], properties: { checkpoints: { type: 'array', items: ref('CheckpointResponse') } } }),
          },
          ...errors(400),
        },
      },
    },
    '/api/v1/squads/{name}/checkpoints': {
      post: {
        operationId: 'createSquadCheckpoint',
        description:
          'Takes a checkpoint of every member of the squad at one moment: one AgentCheckpoint per member, named "<member>.<checkpoint>", taken together once no member runs a task. ' +
          '201 once taken; 202 while a member\'s task runs. A new squad whose members name fromCheckpoint "<member>/<checkpoint>" starts from it. 409 when a member already has a checkpoint of that name.',
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json(ref('CheckpointCreateRequest')) },
        responses: {
          '201': { description: 'taken', content: json(ref('SquadCheckpointResponse')) },
          '202': { description: "to be taken once the members' running tasks end", content: json(ref('SquadCheckpointResponse')) },
          ...errors(400, 404, 409, 413, 415),
        },
      },
    },
    '/api/v1/agents/{name}/checkpoints/{checkpoint}': {
      get: {
        operationId: 'getCheckpoint',
        parameters: [nameParam, checkpointParam, nsParam],
        responses: { '200': { description: 'the checkpoint', content: json(ref('CheckpointResponse')) }, ...errors(400, 404) },
      },
      delete: {
        operationId: 'deleteCheckpoint',
        description: 'Deletes the checkpoint and its copy; agents started from it keep their own copies.',
        parameters: [nameParam, checkpointParam, nsParam],
        responses: { '200': { description: 'deleted', content: json(ref('CheckpointResponse')) }, ...errors(400, 404) },
      },
    },
  };
}

export function checkpointComponents(): Record<string, Schema> {
  return {
    CheckpointCreateRequest: toOpenApi(checkpointCreateRequestSchema),
    CheckpointResponse: toOpenApi(checkpointResponseSchema),
    SquadCheckpointResponse: {
      type: 'object',
      required: ['squad', 'name', 'namespace', 'checkpoints'],
      properties: {
        squad: { type: 'string' },
        name: { type: 'string' },
        namespace: { type: 'string' },
        checkpoints: { type: 'array', items: ref('CheckpointResponse'), description: 'one per member, named "<member>.<checkpoint>"' },
      },
    },
  };
}
