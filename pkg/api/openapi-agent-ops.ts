// The OpenAPI paths of the agent operations beside the object: approvals, compact, cost and the raw download
// of a workspace file, with the schemas they use.

import type { OpenAPIV3 } from 'openapi-types';
import { agentCostResponseSchema, COST_EVENTS_MAX_TASKS } from './agent-cost.js';
import { approvalDecisionRequestSchema, approvalSchema } from './approval.js';
import { cancelResponseSchema, compactRequestSchema, compactResponseSchema } from './agent-ops.js';
import { errors, json, nameParam, nsParam, ref, type Schema, toOpenApi } from './openapi-common.js';
import { messageComponents, messagePaths } from './openapi-messages.js';

const boolQuery = (name: string, description: string): OpenAPIV3.ParameterObject => ({
  name,
  in: 'query',
  required: false,
  schema: { type: 'boolean' },
  description,
});

/** A file's bytes as they are: what a download answers. */
export const octetStream = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } as Schema } };

export function agentOpPaths(): OpenAPIV3.PathsObject {
  return {
    ...messagePaths(),
    '/api/v1/agents/{name}/compact': {
      post: {
        operationId: 'compactAgent',
        description:
          "Compacts the running task's session with the engine's own compaction (its /compact): after the turn in progress the engine summarises the " +
          'conversation so far, reports a context_compacted event, and the task goes on. 409 when no task is in progress (nothing running to compact). ' +
          'The body is optional. 202 when the worker has not taken the request within 5 s: it stays stored for the task, which takes it at its next turn.',
        parameters: [nameParam, nsParam],
        requestBody: { required: false, content: json(ref('CompactRequest')) },
        responses: {
          '200': { description: 'the worker took the request', content: json(ref('CompactResponse')) },
          '202': { description: 'stored for the running task, not yet taken', content: json(ref('CompactResponse')) },
          ...errors(400, 404, 409, 413, 415),
        },
      },
    },
    '/api/v1/agents/{name}/approvals': {
      get: {
        operationId: 'listApprovals',
        description:
          "The running task's tool-call approvals (docs/approvals.md): pending ones first, then those decided. They end with their task. " +
          'Reading needs get on agents/approvals.',
        parameters: [nameParam, nsParam],
        responses: { '200': { description: 'the approvals', content: json(ref('ApprovalList')) }, ...errors(400, 404) },
      },
    },
    '/api/v1/agents/{name}/approvals/{id}': {
      post: {
        operationId: 'decideApproval',
        description:
          'Decides a pending tool-call approval: allow runs the tool, deny hands the model the refusal (with the reason) and the task goes on. ' +
          'An approval_decided event names the decider. A verb of its own: create on agents/approvals (RBAC), or a token with the verb "approve" ' +
          '(embedded home), apart from changing the agent. 404 for an id the running task does not have, 409 for one decided already.',
        parameters: [
          nameParam,
          nsParam,
          { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: "the approval's id (its approval_requested event's id)" },
        ],
        requestBody: { required: true, content: json(ref('ApprovalDecisionRequest')) },
        responses: { '200': { description: 'the approval as decided', content: json(ref('Approval')) }, ...errors(400, 403, 404, 409, 413, 415) },
      },
    },
    '/api/v1/agents/{name}/cost': {
      get: {
        operationId: 'agentCost',
        description:
          "The agent's spending per task and per model, summed from the cost and tokens its tasks' end events carry (what the event stream still keeps).",
        parameters: [
          nameParam,
          nsParam,
          {
            name: 'limit',
            in: 'query',
            schema: { type: 'integer', minimum: 0 },
            description: 'only the newest this many tasks (0 or absent: all); the totals cover every task',
          },
          boolQuery('events', `include each task's events (then at most the newest ${COST_EVENTS_MAX_TASKS} tasks)`),
          boolQuery('refresh', 'accepted for clients that ask to skip a cache: every answer is computed afresh'),
        ],
        responses: { '200': { description: 'the breakdown', content: json(ref('AgentCostResponse')) }, ...errors(400, 404) },
      },
    },
    '/api/v1/agents/{name}/download/{path}': {
      get: {
        operationId: 'downloadWorkspaceFile',
        description:
          "A regular file of the agent's workspace, its bytes as they are (any size; Content-Disposition names it). The same confinement as /files: `..` and " +
          'symbolic links leading out of the workspace are 400, a directory is 400. 501 when agents run in pods. The same as /files?path=<path>&download=1.',
        parameters: [
          nameParam,
          nsParam,
          { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'relative to the workspace; may contain "/"' },
        ],
        responses: { '200': { description: 'the file', content: octetStream }, ...errors(400, 404, 501) },
      },
    },
  };
}

export function agentOpComponents(): Record<string, Schema> {
  return {
    ...messageComponents(),
    CancelResponse: toOpenApi(cancelResponseSchema),
    Approval: toOpenApi(approvalSchema),
    ApprovalDecisionRequest: toOpenApi(approvalDecisionRequestSchema),
    ApprovalList: {
      type: 'object',
      required: ['agent', 'namespace', 'approvals'],
      properties: { agent: { type: 'string' }, namespace: { type: 'string' }, approvals: { type: 'array', items: ref('Approval') } },
    },
    CompactRequest: toOpenApi(compactRequestSchema),
    CompactResponse: toOpenApi(compactResponseSchema),
    AgentCostResponse: toOpenApi(agentCostResponseSchema),
  };
}
