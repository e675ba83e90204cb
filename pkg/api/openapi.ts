// The OpenAPI 3 document of the REST mirror, built from the same JSON Schemas ajv enforces.

import type { OpenAPIV3 } from 'openapi-types';
import { agentPatchRequestSchema, agentResponseSchema, agentTaskRequestSchema } from './agent.js';
import { connectorCreateRequestSchema, connectorResponseSchema, connectorToolsResponseSchema } from './connector.js';
import { EVENT_TYPES, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from './event.js';
import { NAME_MAX_LENGTH, NAME_PATTERN } from './meta.js';
import { agentOpComponents, agentOpPaths, octetStream } from './openapi-agent-ops.js';
import { budgetComponents, budgetPaths } from './openapi-budgets.js';
import { triggerComponents, triggerPaths } from './openapi-triggers.js';
import { skillMemoryComponents, skillMemoryPaths } from './openapi-skills-memories.js';
import { checkpointComponents, checkpointPaths } from './openapi-checkpoints.js';
import { scheduleComponents, schedulePaths } from './openapi-schedules.js';
import { mcpComponents, mcpPaths } from './openapi-mcp.js';
import { errors, errorSchema, json, listNsParam, nameParam, nsParam, ref, type Schema, toOpenApi } from './openapi-common.js';
import { squadCreateRequestSchema, squadMemberSchema, squadPatchRequestSchema, squadResponseSchema } from './squad.js';
import { WORKSPACE_DIR_MAX_ENTRIES, WORKSPACE_FILE_MAX_BYTES, workspaceFilesResponseSchema } from './workspace.js';
import { secretCreateRequestSchema, secretPatchRequestSchema, secretReplaceRequestSchema, secretResponseSchema } from './secret.js';

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
    payload: {
      type: 'object',
      description:
        'By type: task_started{instructions}, text{content}, thinking{content}, tool_call{id, tool, input}, ' +
        'tool_result{id, tool, output, isError}, user_message{content}, ' +
        'model_retry{attempt, of, delayMs, status, message} (the model proxy retries a failed model request), ' +
        'context_compacted{trigger: manual|auto, pre_tokens, post_tokens?} (the engine compacted the session), ' +
        'approval_requested{id, tool, input, expiresAt, onTimeout, deciders} (a tool call waits for a person), ' +
        'approval_decided{id, tool, decision: allow|deny, reason?, decidedBy}, ' +
        'message{from, to, text, direction: received|sent, delivery: followUp|task|queued} (a message between agents, docs/messages.md), ' +
        'task_completed{result, cost_usd, duration_ms, turns, stop_reason, session_id, usage?{input_tokens, output_tokens, ' +
        'cache_read_input_tokens, cache_creation_input_tokens}, model_usage?{<model>: usage}}, task_cancelled{reason, cost_usd?, usage?, model_usage?}, ' +
        "error{message, reason, cost_usd?, usage?, model_usage?}. cost_usd and the usage are the task's own, not its session's running total.",
    },
  },
};

export function buildOpenApi(): OpenAPIV3.Document {
  return withLinks(buildPaths());
}

/**
 * What a create answers leads to: the operations on the object by its name and namespace, as
 * OpenAPI links, so that a stateful client (schemathesis' stateful phase) reaches the objects
 * it made. A create is the POST of a collection (`/api/v1/<plural>`); its 2xx responses link to
 * every operation under `/<plural>/{name}` whose only path parameter is `name` (the WebSocket
 * stream is left out: it is no request/response).
 */
const isCollection = (path: string): boolean => /^\/api\/v1\/[a-z]+$/.test(path);

function withLinks(doc: OpenAPIV3.Document): OpenAPIV3.Document {
  for (const collection of Object.keys(doc.paths).filter((p) => isCollection(p) && doc.paths[p]?.post)) {
    const links: Record<string, OpenAPIV3.LinkObject> = {};
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith(`${collection}/{name}`) || path.endsWith('/ws') || (path.match(/\{/g) ?? []).length !== 1) continue;
      for (const method of ['get', 'put', 'patch', 'post', 'delete'] as const) {
        const op = item?.[method];
        if (!op?.operationId) continue;
        links[op.operationId] = {
          operationId: op.operationId,
          parameters: { name: '$response.body#/name', namespace: '$response.body#/namespace' },
        };
      }
    }
    for (const [code, res] of Object.entries(doc.paths[collection]?.post?.responses ?? {})) {
      if (code.startsWith('2') && !('$ref' in res)) res.links = links;
    }
  }
  return doc;
}

function buildPaths(): OpenAPIV3.Document {
  return {
    openapi: '3.0.3',
    info: { title: 'agentplane', version: 'v1', description: 'Run long-lived AI agents: REST mirror /api/v1.' },
    paths: {
      ...agentPaths(),
      ...agentDataPaths(),
      ...squadPaths(),
      ...connectorPaths(),
      ...budgetPaths(),
      ...schedulePaths(),
      ...triggerPaths(),
      ...skillMemoryPaths(),
      ...secretPaths(),
      ...systemPaths(),
      ...mcpPaths(),
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
        SecretPatchRequest: toOpenApi(secretPatchRequestSchema),
        SecretResponse: toOpenApi(secretResponseSchema),
        SquadCreateRequest: toOpenApi(squadCreateRequestSchema),
        SquadMember: toOpenApi(squadMemberSchema),
        SquadResponse: toOpenApi(squadResponseSchema),
        WorkspaceFilesResponse: toOpenApi(workspaceFilesResponseSchema),
        SquadPatchRequest: toOpenApi(squadPatchRequestSchema),
        ...agentOpComponents(),
        ...budgetComponents(),
        ...scheduleComponents(),
        ...triggerComponents(),
        ...skillMemoryComponents(),
        ...checkpointComponents(),
        ...mcpComponents(),
        Event: eventSchema,
        Error: errorSchema,
      },
    },
  };
}

/** An agent's own routes: list and create, get, change, delete, cancel. */
function agentPaths(): OpenAPIV3.PathsObject {
  const agentOut = { description: 'the agent', content: json(ref('AgentResponse')) };
  return {
    '/api/v1/agents': {
      get: {
        operationId: 'listAgents',
        parameters: [listNsParam],
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
        description: 'Changes settings; `instructions` steers the running task (202: stored, not taken within 5 s) or starts one on an idle agent.',
        requestBody: { required: true, content: json(ref('AgentPatchRequest')) },
        responses: { '200': agentOut, '202': { ...agentOut, description: 'follow-up stored for the task' }, ...errors(400, 404, 409, 413, 415) },
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
        description:
          'Cancels the task in progress: 200 once the worker confirmed, 202 if not yet. With none in progress, 200 with cancelled false ("nothing was running"): a cancel is idempotent.',
        parameters: [nameParam, nsParam],
        // 415: a body, if any, must be JSON (docs/security.md "Requests from browsers").
        responses: {
          '200': { description: 'cancelled, or nothing was running', content: json(ref('CancelResponse')) },
          '202': { description: 'cancel requested; the worker has not confirmed yet', content: json(ref('CancelResponse')) },
          ...errors(400, 404, 415),
        },
      },
    },
    ...agentOpPaths(),
    ...checkpointPaths(),
  };
}

/** What an agent holds and says: its events, its workspace's files, its WebSocket. */
function agentDataPaths(): OpenAPIV3.PathsObject {
  return {
    '/api/v1/agents/{name}/events': {
      get: {
        operationId: 'listEvents',
        parameters: [
          nameParam,
          nsParam,
          {
            name: 'limit',
            in: 'query',
            // No `maximum`: a larger value is accepted (clients send them) and read as the cap.
            schema: { type: 'integer', minimum: 1, default: EVENTS_DEFAULT_LIMIT },
            description: `at most this many events; a larger value is read as ${EVENTS_MAX_LIMIT}`,
          },
          {
            name: 'before',
            in: 'query',
            schema: { type: 'integer', minimum: 1 },
            description: 'only events with seq below this (timestamps are 400, as are after and around)',
          },
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
    '/api/v1/agents/{name}/files': {
      get: {
        operationId: 'readWorkspace',
        description:
          "The agent's workspace, read-only: a directory's entries (sorted, at most " +
          WORKSPACE_DIR_MAX_ENTRIES +
          ") or a file's UTF-8 text " +
          '(at most ' +
          WORKSPACE_FILE_MAX_BYTES +
          ' bytes; `binary` files come without text). `..` and symbolic links leading out of the workspace are 400. ' +
          "With download=1, a regular file's bytes as they are (application/octet-stream, any size), as /download/{path}. " +
          '501 NotImplemented when agents run in pods (the server does not mount their workspaces).',
        parameters: [
          nameParam,
          nsParam,
          { name: 'path', in: 'query', schema: { type: 'string' }, description: "relative to the workspace; omitted or '' for the workspace itself" },
          {
            name: 'download',
            in: 'query',
            schema: { type: 'string', enum: ['1', 'true', '0', 'false'] },
            description: "1 or true: the file's raw bytes instead of the JSON view",
          },
        ],
        responses: {
          '200': {
            description: 'a directory or a file (JSON), or with download=1 the file itself',
            content: { ...json(ref('WorkspaceFilesResponse')), ...octetStream },
          },
          ...errors(400, 404, 501),
        },
      },
    },
    '/api/v1/agents/{name}/ws': {
      get: {
        operationId: 'streamEvents',
        description:
          'WebSocket upgrade: each text message is one Event (JSON). Errors before the upgrade are plain HTTP. ' +
          "Without `since` the replay starts at the current task's first event; `since=N` replays every event with a greater seq " +
          '(seqs never repeat for an agent name, so a cursor from a deleted agent of the same name resumes on the new one). ' +
          'The server closes the socket with code 4410, reason "agent deleted", when the agent is deleted (or marked for deletion), ' +
          'and with 4404 "agent not found" if it vanished during the upgrade; 1011 if the replay failed. ' +
          'A plain GET (no `Upgrade: websocket`) is 426 UpgradeRequired.',
        parameters: [
          nameParam,
          nsParam,
          { name: 'since', in: 'query', schema: { type: 'integer', minimum: 0 }, description: 'replay events with seq above this first' },
        ],
        responses: { '101': { description: 'Switching Protocols; messages: Event', content: json(ref('Event')) }, ...errors(400, 404, 426, 429) },
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
        parameters: [listNsParam],
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
        description:
          'Asks the MCP server for its tools now (and records the outcome in the status). 502 when it cannot be reached or refuses the credential; 409 when the secret is missing.',
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
        parameters: [listNsParam],
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
      patch: {
        operationId: 'patchSecret',
        description: 'Merge: the given keys are set, a null value removes its key, other keys stay.',
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json(ref('SecretPatchRequest')) },
        responses: { '200': one, ...errors(400, 404, 413, 415) },
      },
      delete: { operationId: 'deleteSecret', parameters: [nameParam, nsParam], responses: { '200': one, ...errors(400, 404) } },
    },
  };
}

// Not documented: /internal/... (worker channel, not a client API) and /apis/... with /openapi/v2 and
// /openapi/v3 (the aggregated API, which serves its own OpenAPI v2/v3).
function squadPaths(): OpenAPIV3.PathsObject {
  const one = { description: 'the squad', content: json(ref('SquadResponse')) };
  const p = [nameParam, nsParam];
  return {
    '/api/v1/squads': {
      get: {
        operationId: 'listSquads',
        parameters: [listNsParam],
        responses: {
          '200': {
            description: 'squads',
            content: json({ type: 'object', required: ['squads'], properties: { squads: { type: 'array', items: ref('SquadResponse') } } }),
          },
          ...errors(400),
        },
      },
      post: {
        operationId: 'createSquad',
        requestBody: { required: true, content: json(ref('SquadCreateRequest')) },
        responses: { '201': { description: 'squad created', content: json(ref('SquadResponse')) }, ...errors(400, 409, 413, 415) },
      },
    },
    '/api/v1/squads/{name}': {
      get: { operationId: 'getSquad', parameters: p, responses: { '200': one, ...errors(400, 404) } },
      patch: {
        operationId: 'patchSquad',
        description: 'Replaces the member list (members left out leave, new ones join, with the rules of adding and removing one) and/or sets orphanTTL.',
        parameters: p,
        requestBody: { required: true, content: json(ref('SquadPatchRequest')) },
        responses: { '200': one, ...errors(400, 404, 409, 413, 415) },
      },
      delete: { operationId: 'deleteSquad', parameters: p, responses: { '200': one, ...errors(400, 404) } },
    },
    '/api/v1/squads/{name}/members': {
      post: {
        operationId: 'addSquadMember',
        parameters: p,
        requestBody: { required: true, content: json(ref('SquadMember')) },
        responses: { '200': one, ...errors(400, 404, 409, 413, 415) },
      },
    },
    '/api/v1/squads/{name}/members/{agent}': {
      delete: {
        operationId: 'removeSquadMember',
        parameters: [...p, { name: 'agent', in: 'path', required: true, schema: { type: 'string', pattern: NAME_PATTERN, maxLength: NAME_MAX_LENGTH } }],
        responses: { '200': one, ...errors(400, 404, 409) },
      },
    },
    '/api/v1/squads/{name}/break-up': {
      post: { operationId: 'breakUpSquad', parameters: p, responses: { '200': one, ...errors(400, 404, 409, 415) } },
    },
  };
}

function systemPaths(): OpenAPIV3.PathsObject {
  const ok = { description: 'ok', content: json({ type: 'object', properties: { status: { type: 'string' } } }) };
  return {
    '/healthz': { get: { operationId: 'healthz', responses: { '200': ok } } },
    '/readyz': {
      get: {
        operationId: 'readyz',
        description: 'Not ready (503) while a dependency, such as a shared event store, is unreachable.',
        responses: { '200': ok, ...errors(503) },
      },
    },
    '/openapi.json': { get: { operationId: 'openapi', responses: { '200': { description: 'this document', content: json({ type: 'object' }) } } } },
    '/metrics': {
      get: {
        operationId: 'metrics',
        responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
  };
}
