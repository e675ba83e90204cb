// The OpenAPI 3 document of the REST mirror, built from the same JSON Schemas ajv enforces.

import type { OpenAPIV3 } from 'openapi-types';
import { agentPatchRequestSchema, agentResponseSchema, agentTaskRequestSchema } from './agent.js';
import { connectorCreateRequestSchema, connectorResponseSchema, connectorToolsResponseSchema } from './connector.js';
import { EVENT_TYPES, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from './event.js';
import { secretCreateRequestSchema, secretReplaceRequestSchema, secretResponseSchema } from './secret.js';

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
          description: 'Changes settings; `instructions` steers the running task or, on an idle agent, starts one as POST does.',
          requestBody: { required: true, content: json(ref('AgentPatchRequest')) },
          responses: { '200': agentOut, ...errors(400, 404, 409, 413, 415, 503) },
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
      ...connectorPaths(),
      ...secretPaths(),
    },
    components: {
      schemas: {
        AgentTaskRequest: toOpenApi(agentTaskRequestSchema),
        AgentPatchRequest: toOpenApi(agentPatchRequestSchema),
        AgentResponse: toOpenApi(agentResponseSchema),
        ConnectorCreateRequest: toOpenApi(connectorCreateRequestSchema),
        ConnectorResponse: toOpenApi(connectorResponseSchema),
        ConnectorToolsResponse: toOpenApi(connectorToolsResponseSchema),
        SecretCreateRequest: toOpenApi(secretCreateRequestSchema),
        SecretReplaceRequest: toOpenApi(secretReplaceRequestSchema),
        SecretResponse: toOpenApi(secretResponseSchema),
        Event: eventSchema,
        Error: errorSchema,
      },
    },
  };
}

function connectorPaths(): OpenAPIV3.PathsObject {
  const one = { description: 'the connector', content: json(ref('ConnectorResponse')) };
  return {
    '/api/v1/connectors': {
      get: {
        operationId: 'listConnectors',
        parameters: [nsParam],
        responses: {
          '200': {
            description: 'connectors, each with the agents using it',
            content: json({
              type: 'object',
              required: ['connectors'],
              properties: { connectors: { type: 'array', items: ref('ConnectorResponse') } },
            }),
          },
          ...errors(400),
        },
      },
      post: {
        operationId: 'createConnector',
        requestBody: { required: true, content: json(ref('ConnectorCreateRequest')) },
        responses: { '201': { description: 'connector created', content: json(ref('ConnectorResponse')) }, ...errors(400, 409, 413, 415) },
      },
    },
    '/api/v1/connectors/{name}': {
      get: { operationId: 'getConnector', parameters: [nameParam, nsParam], responses: { '200': one, ...errors(400, 404) } },
      delete: {
        operationId: 'deleteConnector',
        parameters: [
          nameParam,
          nsParam,
          {
            name: 'force',
            in: 'query',
            required: false,
            schema: { type: 'boolean', default: false },
            description: 'detach the connector from the agents using it, then delete (otherwise 409 while in use)',
          },
        ],
        responses: { '200': { description: 'deleted; the connector as it was', content: json(ref('ConnectorResponse')) }, ...errors(400, 404, 409) },
      },
    },
    '/api/v1/connectors/{name}/tools': {
      get: {
        operationId: 'listConnectorTools',
        description: 'Asks the MCP server for its tools now (and records the outcome in the status). 502 when it cannot be reached or refuses the credential; 409 when the secret is missing.',
        parameters: [nameParam, nsParam],
        responses: { '200': { description: 'the tools', content: json(ref('ConnectorToolsResponse')) }, ...errors(400, 404, 409, 502) },
      },
    },
  };
}

function secretPaths(): OpenAPIV3.PathsObject {
  const one = { description: 'the secret: names and keys, never values', content: json(ref('SecretResponse')) };
  return {
    '/api/v1/secrets': {
      get: {
        operationId: 'listSecrets',
        parameters: [nsParam],
        responses: {
          '200': {
            description: 'secrets (names and keys only)',
            content: json({ type: 'object', required: ['secrets'], properties: { secrets: { type: 'array', items: ref('SecretResponse') } } }),
          },
          ...errors(400),
        },
      },
      post: {
        operationId: 'createSecret',
        requestBody: { required: true, content: json(ref('SecretCreateRequest')) },
        responses: { '201': one, ...errors(400, 409, 413, 415) },
      },
    },
    '/api/v1/secrets/{name}': {
      get: { operationId: 'getSecret', parameters: [nameParam, nsParam], responses: { '200': one, ...errors(400, 404) } },
      put: {
        operationId: 'replaceSecret',
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json(ref('SecretReplaceRequest')) },
        responses: { '200': one, '201': { description: 'secret created', content: json(ref('SecretResponse')) }, ...errors(400, 413, 415) },
      },
      delete: { operationId: 'deleteSecret', parameters: [nameParam, nsParam], responses: { '200': one, ...errors(400, 404) } },
    },
  };
}
