// The OpenAPI 3 document of the REST mirror, built from the same JSON Schemas ajv enforces.

import type { OpenAPIV3 } from 'openapi-types';
import { agentPatchRequestSchema, agentResponseSchema, agentTaskRequestSchema } from './agent.js';
import { EVENT_TYPES, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from './event.js';

type Schema = OpenAPIV3.SchemaObject;

/** JSON Schema (draft 7 subset we use) -> OpenAPI schema object: drop `$id`. */
const toOpenApi = (schema: object): Schema => {
  const { $id: _id, ...rest } = schema as { $id?: string };
  return JSON.parse(JSON.stringify(rest)) as Schema;
};

const errorSchema: Schema = {
  type: 'object',
  required: ['error', 'reason', 'code'],
  properties: {
    error: { type: 'string' },
    reason: { type: 'string' },
    code: { type: 'integer' },
    details: {
      type: 'object',
      properties: {
        kind: { type: 'string' },
        name: { type: 'string' },
        causes: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
};

const eventSchema: Schema = {
  type: 'object',
  required: ['seq', 'agentName', 'namespace', 'task', 'type', 'timestamp', 'payload'],
  properties: {
    seq: { type: 'integer', minimum: 1 },
    agentName: { type: 'string' },
    namespace: { type: 'string' },
    task: { type: 'integer', minimum: 1 },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    timestamp: { type: 'string', format: 'date-time' },
    payload: { type: 'object' },
  },
};

const ref = (name: string): OpenAPIV3.ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema | OpenAPIV3.ReferenceObject) => ({ 'application/json': { schema } });
const errors = (...codes: number[]): Record<string, OpenAPIV3.ResponseObject> =>
  Object.fromEntries(codes.map((c) => [String(c), { description: 'error', content: json(ref('Error')) }]));

const nsParam: OpenAPIV3.ParameterObject = {
  name: 'namespace',
  in: 'query',
  required: false,
  schema: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 },
  description: 'namespace; default "default"',
};
const nameParam: OpenAPIV3.ParameterObject = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[a-z]([-a-z]*[a-z])?$', maxLength: 63 },
};

export function buildOpenApi(): OpenAPIV3.Document {
  const agentOut = { description: 'the agent', content: json(ref('AgentResponse')) };
  return {
    openapi: '3.0.3',
    info: { title: 'agentplane', version: 'v1', description: 'Run long-lived AI agents: REST mirror /api/v1.' },
    paths: {
      '/api/v1/agents': {
        get: {
          operationId: 'listAgents',
          parameters: [nsParam],
          responses: {
            '200': {
              description: 'agents',
              content: json({ type: 'object', required: ['agents'], properties: { agents: { type: 'array', items: ref('AgentResponse') } } }),
            },
            ...errors(400),
          },
        },
        post: {
          operationId: 'sendTask',
          requestBody: { required: true, content: json(ref('AgentTaskRequest')) },
          responses: {
            '201': { description: 'agent created; its first task starts', content: json(ref('AgentResponse')) },
            '200': { description: 'task assigned to an existing idle or sleeping agent', content: json(ref('AgentResponse')) },
            ...errors(400, 409, 413, 415),
          },
        },
      },
      '/api/v1/agents/{name}': {
        get: { operationId: 'getAgent', parameters: [nameParam, nsParam], responses: { '200': agentOut, ...errors(400, 404) } },
        patch: {
          operationId: 'patchAgent',
          parameters: [nameParam, nsParam],
          requestBody: { required: true, content: json(ref('AgentPatchRequest')) },
          responses: { '200': agentOut, ...errors(400, 404, 409, 413, 415) },
        },
        delete: {
          operationId: 'deleteAgent',
          parameters: [nameParam, nsParam],
          responses: { '200': { description: 'deleted; workspace removed', content: json(ref('AgentResponse')) }, '202': agentOut, ...errors(400, 404) },
        },
      },
      '/api/v1/agents/{name}/cancel': {
        post: {
          operationId: 'cancelTask',
          parameters: [nameParam, nsParam],
          responses: { '200': agentOut, '202': agentOut, ...errors(400, 404, 409) },
        },
      },
      '/api/v1/agents/{name}/events': {
        get: {
          operationId: 'listEvents',
          parameters: [
            nameParam,
            nsParam,
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: EVENTS_MAX_LIMIT, default: EVENTS_DEFAULT_LIMIT } },
            { name: 'before', in: 'query', schema: { type: 'integer', minimum: 1 }, description: 'only events with seq below this' },
          ],
          responses: {
            '200': {
              description: 'most recent events, oldest first',
              content: json({
                type: 'object',
                required: ['agent', 'events'],
                properties: { agent: { type: 'string' }, namespace: { type: 'string' }, events: { type: 'array', items: ref('Event') } },
              }),
            },
            ...errors(400, 404),
          },
        },
      },
    },
    components: {
      schemas: {
        AgentTaskRequest: toOpenApi(agentTaskRequestSchema),
        AgentPatchRequest: toOpenApi(agentPatchRequestSchema),
        AgentResponse: toOpenApi(agentResponseSchema),
        Event: eventSchema,
        Error: errorSchema,
      },
    },
  };
}
