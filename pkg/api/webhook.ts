// The Webhook resource (docs/triggers-and-webhooks.md): outbound delivery of chosen agent event
// types of a namespace's agents to a URL, signed as Standard Webhooks signs (webhook-id,
// webhook-timestamp, webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>"), retried
// with backoff, at least once and in order per agent. The leader's webhook controller delivers
// and owns the status, where each agent's cursor (its last delivered event seq) is kept.

import { nameSchema, namespaceSchema } from './agent-fields.js';
import { EVENT_TYPES, type EventType } from './event.js';
import { URL_PATTERN } from './connector.js';
import type { Resource } from './meta.js';
import { type SecretKeyRef, secretKeyRefSchema } from './trigger.js';

export const WEBHOOK_KIND = 'Webhook';

export interface WebhookSpec {
  url: string;
  eventTypes: EventType[];
  /** Agents of the namespace whose events are sent; absent: every agent of the namespace. */
  agents?: string[];
  secretRef: SecretKeyRef;
}

/** How far one agent's events were delivered: `uid` tells a re-created agent of the same name apart. */
export interface WebhookCursor {
  uid: string;
  /** The last event seq acknowledged (or passed over, not being of a chosen type). */
  seq: number;
}

export interface WebhookAttempt {
  time: string;
  agent: string;
  seq: number;
  type: string;
  /** The receiver's HTTP status (0 when no answer came). */
  status: number;
  message?: string;
}

export interface WebhookStatus {
  delivered?: number;
  failed?: number;
  lastDelivery?: WebhookAttempt;
  /** The latest failed attempts, newest last, at most WEBHOOK_FAILURES_KEPT. */
  lastFailures?: WebhookAttempt[];
  /** Per agent name. */
  cursors?: Record<string, WebhookCursor>;
}

export type Webhook = Resource<WebhookSpec, WebhookStatus>;

export const WEBHOOK_FAILURES_KEPT = 10;

const webhookFields = {
  url: {
    type: 'string',
    minLength: 1,
    maxLength: 2048,
    format: 'uri',
    pattern: URL_PATTERN,
    description: 'http(s) address that receives the deliveries (POST, JSON); loopback and private addresses only with --allow-private-connector-urls',
  },
  eventTypes: {
    type: 'array',
    minItems: 1,
    maxItems: EVENT_TYPES.length,
    uniqueItems: true,
    items: { type: 'string', enum: EVENT_TYPES },
    'x-kubernetes-list-type': 'set',
    description: 'the agent event types delivered, e.g. task_completed, error, approval_requested',
  },
  agents: {
    type: 'array',
    maxItems: 256,
    uniqueItems: true,
    items: nameSchema,
    'x-kubernetes-list-type': 'set',
    description: 'the agents of the namespace whose events are delivered; absent: all of them',
  },
  secretRef: {
    ...secretKeyRefSchema,
    description: 'the signing key: a key of a secret in the same namespace ("whsec_<base64>" is decoded, as Standard Webhooks keys are)',
  },
} as const;

export const webhookSpecSchema = {
  $id: 'WebhookSpec',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'eventTypes', 'secretRef'],
  properties: webhookFields,
} as const;

const attemptSchema = {
  type: 'object',
  required: ['time', 'agent', 'seq', 'type', 'status'],
  properties: {
    time: { type: 'string' },
    agent: { type: 'string' },
    seq: { type: 'integer' },
    type: { type: 'string' },
    status: { type: 'integer', description: "the receiver's HTTP status; 0 when none came" },
    message: { type: 'string' },
  },
} as const;

export const webhookStatusSchema = {
  $id: 'WebhookStatus',
  type: 'object',
  properties: {
    delivered: { type: 'integer', minimum: 0, description: 'events the receiver acknowledged (2xx)' },
    failed: { type: 'integer', minimum: 0, description: 'attempts that failed (retried)' },
    lastDelivery: { ...attemptSchema, description: 'the latest acknowledged delivery' },
    lastFailures: { type: 'array', maxItems: WEBHOOK_FAILURES_KEPT, items: attemptSchema, description: 'the latest failed attempts, newest last' },
    cursors: {
      type: 'object',
      additionalProperties: { type: 'object', required: ['uid', 'seq'], properties: { uid: { type: 'string' }, seq: { type: 'integer', minimum: 0 } } },
      description: 'per agent: the last event seq delivered (or passed over); a restart resumes after it',
    },
  },
  description: 'owned by the webhook controller',
} as const;

export const webhookRequestSchema = {
  $id: 'WebhookRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url', 'eventTypes', 'secretRef'],
  properties: {
    name: nameSchema,
    namespace: namespaceSchema,
    ...webhookFields,
  },
} as const;

export interface WebhookRequest {
  name: string;
  namespace?: string;
  url: string;
  eventTypes: EventType[];
  agents?: string[];
  secretRef: { name: string; key?: string };
}

/** Whether the webhook sends the events of this agent. */
export const webhookCovers = (w: Webhook, agent: string): boolean => !w.spec.agents || w.spec.agents.includes(agent);

export const webhookPatchRequestSchema = {
  $id: 'WebhookPatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  // `agents: null` (back to every agent) is taken by the service before the schema is applied.
  properties: webhookFields,
} as const;

export interface WebhookResponse extends WebhookSpec, WebhookStatus {
  name: string;
  namespace: string;
  createdAt: string;
}

export const toWebhookResponse = (w: Webhook): WebhookResponse => ({
  name: w.metadata.name,
  namespace: w.metadata.namespace,
  createdAt: w.metadata.creationTimestamp,
  ...w.spec,
  ...w.status,
});
