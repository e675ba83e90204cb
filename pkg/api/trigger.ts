// The Trigger resource (docs/triggers-and-webhooks.md): an inbound endpoint,
// POST /api/v1/triggers/:name/hook, that starts a task on an agent when an external sender (a
// GitHub- or Slack-style webhook) posts a payload signed with a shared secret. The defaults are
// GitHub's: X-Hub-Signature-256 "sha256=<hex>" and X-GitHub-Delivery. The instructions are a
// template whose {{dotted.path}} placeholders the payload fills (pkg/api/template.ts).

import { nameSchema, namespaceSchema } from './agent-fields.js';
import { INSTRUCTIONS_MAX_LENGTH } from './agent.js';
import type { Cause } from './errors.js';
import type { Resource } from './meta.js';
import { templateCauses } from './template.js';

export const TRIGGER_KIND = 'Trigger';

/** A key of a secret in agentplane's secret store (same namespace). */
export interface SecretKeyRef {
  name: string;
  /** Default "secret". */
  key: string;
}

export interface TriggerSignature {
  /** The header carrying the signature; default X-Hub-Signature-256. */
  header: string;
  algorithm: 'sha256';
  /** What precedes the hex digest in the header; default "sha256=". */
  prefix: string;
}

export interface TriggerSpec {
  agent: string;
  secretRef: SecretKeyRef;
  signature: TriggerSignature;
  /** The header naming the delivery; a repeated id starts nothing. Default X-GitHub-Delivery. */
  deliveryIdHeader: string;
  /** The task's instructions; {{a.b.c}} is the payload's field there (docs/triggers-and-webhooks.md). */
  instructions: string;
}

export type TriggerResult = 'Started' | 'Duplicate' | 'BadSignature' | 'AgentBusy' | 'AgentMissing' | 'SecretMissing' | 'BadPayload';
export const TRIGGER_RESULTS: readonly TriggerResult[] = ['Started', 'Duplicate', 'BadSignature', 'AgentBusy', 'AgentMissing', 'SecretMissing', 'BadPayload'];

export interface TriggerDelivery {
  time: string;
  /** The delivery id the sender gave ("" without one). */
  id: string;
  result: TriggerResult;
  /** The task it started (result Started). */
  task?: number;
  message?: string;
}

export interface TriggerStatus {
  lastDelivery?: TriggerDelivery;
  /** Deliveries by result. */
  counts?: Partial<Record<TriggerResult, number>>;
  /** The latest delivery ids that started a task, newest last, at most SEEN_DELIVERIES_MAX: replays are refused by them. */
  seenDeliveries?: string[];
}

export type Trigger = Resource<TriggerSpec, TriggerStatus>;

export const SEEN_DELIVERIES_MAX = 256;
export const DELIVERY_ID_MAX_LENGTH = 200;
export const TRIGGER_DEFAULTS = {
  header: 'X-Hub-Signature-256',
  algorithm: 'sha256',
  prefix: 'sha256=',
  deliveryIdHeader: 'X-GitHub-Delivery',
  secretKey: 'secret',
} as const;

const headerSchema = { type: 'string', minLength: 1, maxLength: 100, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" } as const;

export const secretKeyRefSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { ...nameSchema, description: "a secret of agentplane's secret store in the same namespace (POST /api/v1/secrets)" },
    key: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[-._a-zA-Z0-9]+$', description: 'the key in that secret; default "secret"' },
  },
  description: 'the shared secret: a key of a secret in the same namespace',
} as const;

const triggerFields = {
  agent: { ...nameSchema, description: 'the agent (same namespace) that each accepted delivery gives a task' },
  secretRef: secretKeyRefSchema,
  signature: {
    type: 'object',
    additionalProperties: false,
    properties: {
      header: { ...headerSchema, description: 'the header carrying the signature; default X-Hub-Signature-256 (GitHub)' },
      algorithm: { type: 'string', enum: ['sha256'], description: 'HMAC-SHA256 of the raw body, hex; the only one' },
      prefix: { type: 'string', maxLength: 20, description: 'what precedes the hex digest; default "sha256="' },
    },
    description: 'how the sender signs the raw body; defaults are GitHub\'s (X-Hub-Signature-256: "sha256=<hex HMAC-SHA256>")',
  },
  deliveryIdHeader: { ...headerSchema, description: 'the header naming the delivery: a repeated id starts nothing; default X-GitHub-Delivery' },
  instructions: {
    type: 'string',
    minLength: 1,
    maxLength: INSTRUCTIONS_MAX_LENGTH,
    description: "the task's instructions; {{a.b.c}} is the payload's field at that dotted path (an array index is a number), empty when absent",
  },
} as const;

export const triggerSpecSchema = {
  $id: 'TriggerSpec',
  type: 'object',
  additionalProperties: false,
  required: ['agent', 'secretRef', 'instructions'],
  properties: triggerFields,
} as const;

const deliverySchema = {
  type: 'object',
  required: ['time', 'id', 'result'],
  properties: {
    time: { type: 'string' },
    id: { type: 'string' },
    result: { type: 'string', enum: TRIGGER_RESULTS },
    task: { type: 'integer' },
    message: { type: 'string' },
  },
} as const;

export const triggerStatusSchema = {
  $id: 'TriggerStatus',
  type: 'object',
  properties: {
    lastDelivery: { ...deliverySchema, description: 'the latest delivery: when, its id and what came of it' },
    counts: {
      type: 'object',
      additionalProperties: { type: 'integer', minimum: 0 },
      description: 'deliveries by result (Started, Duplicate, BadSignature, AgentBusy, AgentMissing, SecretMissing, BadPayload)',
    },
    seenDeliveries: {
      type: 'array',
      maxItems: SEEN_DELIVERIES_MAX,
      items: { type: 'string', maxLength: DELIVERY_ID_MAX_LENGTH },
      description: `the latest ${SEEN_DELIVERIES_MAX} delivery ids that started a task; a replay of one starts nothing`,
    },
  },
  description: 'written by the hook endpoint on each delivery',
} as const;

export const triggerRequestSchema = {
  $id: 'TriggerRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'agent', 'secretRef', 'instructions'],
  properties: {
    name: nameSchema,
    namespace: namespaceSchema,
    ...triggerFields,
  },
} as const;

/** POST /api/v1/triggers. */
export interface TriggerRequest {
  name: string;
  namespace?: string;
  agent: string;
  secretRef: { name: string; key?: string };
  signature?: Partial<TriggerSignature>;
  deliveryIdHeader?: string;
  instructions: string;
}

/** Fills in the defaults (GitHub's signature and delivery headers, key "secret"). */
export function defaultTriggerSpec(spec: TriggerSpec): void {
  spec.secretRef = { ...spec.secretRef, key: spec.secretRef?.key ?? TRIGGER_DEFAULTS.secretKey };
  const sig: Partial<TriggerSignature> = spec.signature ?? {};
  spec.signature = {
    header: sig.header ?? TRIGGER_DEFAULTS.header,
    algorithm: sig.algorithm ?? TRIGGER_DEFAULTS.algorithm,
    prefix: sig.prefix ?? TRIGGER_DEFAULTS.prefix,
  };
  spec.deliveryIdHeader ??= TRIGGER_DEFAULTS.deliveryIdHeader;
}

export function validateTriggerInstructions(spec: TriggerSpec, field: string): Cause[] {
  return typeof spec?.instructions === 'string' ? templateCauses(spec.instructions, field) : [];
}

export const triggerPatchRequestSchema = {
  $id: 'TriggerPatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: triggerFields,
} as const;

/** The path external senders POST to. */
export const triggerHookPath = (namespace: string, name: string): string => `/api/v1/triggers/${name}/hook?namespace=${namespace}`;

/** A trigger as the REST mirror answers it: the spec, the hook's path and the status. */
export interface TriggerResponse extends TriggerSpec, TriggerStatus {
  name: string;
  namespace: string;
  createdAt: string;
  hookPath: string;
}

export const toTriggerResponse = (t: Trigger): TriggerResponse => ({
  name: t.metadata.name,
  namespace: t.metadata.namespace,
  createdAt: t.metadata.creationTimestamp,
  hookPath: triggerHookPath(t.metadata.namespace, t.metadata.name),
  ...t.spec,
  ...t.status,
});
