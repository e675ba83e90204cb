// The OpenAPI paths of Triggers and Webhooks (/api/v1/triggers, /api/v1/webhooks and a trigger's
// hook; docs/triggers-and-webhooks.md), with their schemas.

import type { OpenAPIV3 } from 'openapi-types';
import { errors, json, nameParam, nsParam, ref, type Schema, toOpenApi } from './openapi-common.js';
import { kindPaths } from './openapi-kind.js';
import { TRIGGER_RESULTS, triggerPatchRequestSchema, triggerRequestSchema, triggerSpecSchema, triggerStatusSchema } from './trigger.js';
import { webhookPatchRequestSchema, webhookRequestSchema, webhookSpecSchema, webhookStatusSchema } from './webhook.js';

const meta = { name: { type: 'string' }, namespace: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' } } as const;

const hookAnswerSchema: Schema = {
  type: 'object',
  required: ['result', 'trigger', 'namespace', 'agent', 'deliveryId'],
  properties: {
    result: { type: 'string', enum: [...TRIGGER_RESULTS] },
    trigger: { type: 'string' },
    namespace: { type: 'string' },
    agent: { type: 'string' },
    deliveryId: { type: 'string', description: 'the delivery id header\'s value ("" without one)' },
    task: { type: 'integer', description: 'the task started (result Started)' },
    message: { type: 'string' },
  },
};

export function triggerComponents(): Record<string, Schema> {
  return {
    TriggerRequest: toOpenApi(triggerRequestSchema),
    TriggerPatchRequest: toOpenApi(triggerPatchRequestSchema),
    TriggerResponse: toOpenApi({
      type: 'object',
      required: ['name', 'namespace', 'createdAt', 'hookPath', ...triggerSpecSchema.required],
      properties: {
        ...meta,
        hookPath: { type: 'string', description: 'where senders POST' },
        ...triggerSpecSchema.properties,
        ...triggerStatusSchema.properties,
      },
    }),
    TriggerHookAnswer: hookAnswerSchema,
    WebhookRequest: toOpenApi(webhookRequestSchema),
    WebhookPatchRequest: toOpenApi({
      ...webhookPatchRequestSchema,
      properties: { ...webhookPatchRequestSchema.properties, agents: { ...webhookPatchRequestSchema.properties.agents, nullable: true } },
      description: 'the fields given change; agents given as null is removed (every agent of the namespace again)',
    }),
    WebhookResponse: toOpenApi({
      type: 'object',
      required: ['name', 'namespace', 'createdAt', ...webhookSpecSchema.required],
      properties: { ...meta, ...webhookSpecSchema.properties, ...webhookStatusSchema.properties },
    }),
  };
}

const answer = (description: string) => ({ description, content: json(ref('TriggerHookAnswer')) });

export function triggerPaths(): OpenAPIV3.PathsObject {
  return {
    ...kindPaths({
      plural: 'triggers',
      kind: 'Trigger',
      one: 'the trigger with its last delivery and counts',
      list: 'triggers with their last delivery and counts',
    }),
    ...kindPaths({ plural: 'webhooks', kind: 'Webhook', one: 'the webhook with its delivery status', list: 'webhooks with their delivery status' }),
    '/api/v1/triggers/{name}/hook': {
      post: {
        operationId: 'deliverTrigger',
        description:
          "An external sender's delivery. No bearer token: authenticated by the HMAC-SHA256 signature of the raw body with the trigger's secret, " +
          'in the trigger\'s signature header (default X-Hub-Signature-256: "sha256=<hex>"). A delivery id seen before starts nothing (202 Duplicate).',
        security: [],
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json({ type: 'object', description: "the sender's JSON payload; the template reads its fields" }) },
        responses: {
          '202': answer('Started: the agent got a task; Duplicate: this delivery id started one before, nothing started'),
          '400': {
            description: 'BadPayload: not JSON, a delivery id too long, or the template rendered nothing; or a namespace that is no DNS label (an Error)',
            content: json({ anyOf: [ref('TriggerHookAnswer'), ref('Error')] }),
          },
          '401': answer(
            "BadSignature: the signature is missing or wrong; SecretMissing: the trigger's secret does not exist, so none can be checked; nothing started",
          ),
          '409': answer("AgentBusy: the trigger's agent is busy with a task, or AgentMissing: it does not exist; nothing started, a redelivery may start it"),
          ...errors(404, 413, 415),
        },
      },
    },
  };
}
