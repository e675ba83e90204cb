// What the agent operations beside the object answer (cancel, compact) and take (compact), with
// their JSON Schemas for ajv and the OpenAPI document. Their answers keep the shapes clients of
// komputer-ai's API read too (docs/decisions.md "Clients of the peer project").

import { agentResponseSchema, type AgentResponse } from './agent.js';

/**
 * POST .../cancel: the agent, whether a task was cancelled, and what happened in words. With no
 * task in progress the answer is 200 with `cancelled: false`: a cancel is idempotent.
 */
export interface CancelResponse extends AgentResponse {
  cancelled: boolean;
  message: string;
}

export const cancelResponseSchema = {
  $id: 'CancelResponse',
  type: 'object',
  required: [...agentResponseSchema.required, 'cancelled', 'message'],
  properties: {
    ...agentResponseSchema.properties,
    cancelled: { type: 'boolean', description: 'false when no task was in progress (nothing to cancel)' },
    message: { type: 'string', description: 'what happened, e.g. "nothing was running: ..."' },
  },
} as const;

/** The longest `instructions` of a compaction (guidance for the engine's summary). */
export const COMPACT_INSTRUCTIONS_MAX_LENGTH = 4096;

/** POST .../compact body (optional). */
export interface CompactRequest {
  instructions?: string;
}

export const compactRequestSchema = {
  $id: 'CompactRequest',
  type: 'object',
  additionalProperties: false,
  properties: {
    instructions: {
      type: 'string',
      maxLength: COMPACT_INSTRUCTIONS_MAX_LENGTH,
      description: `what the summary should keep, handed to the engine's /compact (at most ${COMPACT_INSTRUCTIONS_MAX_LENGTH} characters)`,
    },
  },
} as const;

/**
 * POST .../compact: the running task's worker took the request; the engine compacts between two
 * of the task's turns and reports a `context_compacted` event. Every value is a string, as the
 * peer's clients read this answer as a map of strings.
 */
export interface CompactResponse {
  agent: string;
  namespace: string;
  /** The task whose session is compacted. */
  task: string;
  status: 'compacting';
  message: string;
}

export const compactResponseSchema = {
  $id: 'CompactResponse',
  type: 'object',
  required: ['agent', 'namespace', 'task', 'status', 'message'],
  properties: {
    agent: { type: 'string' },
    namespace: { type: 'string' },
    task: { type: 'string', description: 'the task number, as a string' },
    status: { type: 'string', enum: ['compacting'] },
    message: { type: 'string' },
  },
} as const;
