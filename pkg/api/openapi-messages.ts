// The OpenAPI path of messages to agents (docs/messages.md), with its schemas.

import type { OpenAPIV3 } from 'openapi-types';
import { messageRequestSchema, messageResponseSchema } from './agent-message.js';
import { errors, json, nameParam, nsParam, ref, type Schema, toOpenApi } from './openapi-common.js';

export function messagePaths(): OpenAPIV3.PathsObject {
  return {
    '/api/v1/agents/{name}/messages': {
      post: {
        operationId: 'messageAgent',
        description:
          'Sends the agent a message: into its running task as a follow-up, as a new task when it is idle (200), or queued while it sleeps (202), ' +
          'delivered as its next task when it wakes ("wake": true wakes it now). A message event is recorded on the receiver and, when "from" ' +
          'names an agent of the namespace, on that sender (direction sent). "from" defaults to the authenticated user. ' +
          'A verb of its own: create on agents/messages (RBAC). 409 while the agent is being deleted or has too many messages queued.',
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json(ref('MessageRequest')) },
        responses: {
          '200': { description: 'delivered: a follow-up into the running task, or a new task', content: json(ref('MessageResponse')) },
          '202': {
            description: 'queued: the agent sleeps and takes it when it wakes; or (delivery followUp) stored for the running task, which has not taken it yet',
            content: json(ref('MessageResponse')),
          },
          ...errors(400, 404, 409, 413, 415, 503),
        },
      },
    },
  };
}

export function messageComponents(): Record<string, Schema> {
  return {
    MessageRequest: toOpenApi(messageRequestSchema),
    MessageResponse: toOpenApi(messageResponseSchema),
  };
}
