// The JSON Schemas of what a worker may send on its control channel (./worker-protocol.ts), one per
// message type and one per event payload, checked by the shared ajv. Each schema is built from a
// field list typed against its TypeScript type (`Fields<T>`): a field added to, removed from or
// made optional in the type and not here (or the reverse) fails the build, so the two cannot drift.

import type { EventPayloads, EventType } from './event.js';
import { APPROVAL_ID_PATTERN } from './approval.js';
import { validateSchema } from './validation.js';
import { AGENTPLANE_TOOLS } from './agent-message.js';
import type { CallMessage, EventMessage, HelloMessage, SteeredMessage, WorkerMessage } from './worker-protocol.js';

/** One field's schema, marked optional exactly when the type's field is. */
type Field<T, K extends keyof T> = Record<never, never> extends Pick<T, K> ? { schema: object; optional: true } : { schema: object; optional?: false };
type Fields<T> = { [K in keyof Required<T>]-?: Field<T, K> };

function objectSchema<T>(fields: Fields<T>): object {
  const entries = Object.entries<{ schema: object; optional?: boolean }>(fields);
  return {
    type: 'object',
    additionalProperties: false,
    required: entries.filter(([, f]) => !f.optional).map(([k]) => k),
    properties: Object.fromEntries(entries.map(([k, f]) => [k, f.schema])),
  };
}

const req = (schema: object) => ({ schema });
const opt = (schema: object) => ({ schema, optional: true as const });
const text = { type: 'string' };
/** Ids, names and reasons: short by nature; a long one is not a real engine's. */
const label = { type: 'string', maxLength: 1024 };
const count = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const taskId = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };

/** Event types a worker reports; `model_retry` and the budget's events are the model proxy's, `approval_decided` the server's. */
export type WorkerEventType = Exclude<EventType, 'model_retry' | 'budget_warning' | 'budget_exceeded' | 'approval_decided' | 'message'>;

/**
 * What a worker's events carry: a task's end without `usage` and `model_usage`, which only the
 * model proxy's meter sets; an approval request with only what the engine knows (the server adds
 * the deadline and who decides, from the agent's policy).
 */
export type WorkerEventPayloads = {
  [T in WorkerEventType]: T extends 'task_completed' | 'task_cancelled' | 'error'
    ? Omit<EventPayloads[T], 'usage' | 'model_usage'>
    : T extends 'approval_requested'
      ? Pick<EventPayloads[T], 'id' | 'tool' | 'input'>
      : EventPayloads[T];
};

const cost = { type: 'number', minimum: 0 };

const payloadSchemas: { [T in WorkerEventType]: object } = {
  task_started: objectSchema<WorkerEventPayloads['task_started']>({ instructions: req(text) }),
  text: objectSchema<WorkerEventPayloads['text']>({ content: req(text) }),
  thinking: objectSchema<WorkerEventPayloads['thinking']>({ content: req(text) }),
  tool_call: objectSchema<WorkerEventPayloads['tool_call']>({ id: req(label), tool: req(label), input: req({}) }),
  tool_result: objectSchema<WorkerEventPayloads['tool_result']>({ id: req(label), tool: req(label), output: req(text), isError: req({ type: 'boolean' }) }),
  user_message: objectSchema<WorkerEventPayloads['user_message']>({ content: req(text) }),
  context_compacted: objectSchema<WorkerEventPayloads['context_compacted']>({
    trigger: req({ enum: ['manual', 'auto'] }),
    pre_tokens: req(count),
    post_tokens: opt(count),
  }),
  approval_requested: objectSchema<WorkerEventPayloads['approval_requested']>({
    id: req({ type: 'string', pattern: APPROVAL_ID_PATTERN }),
    tool: req(label),
    input: req({}),
  }),
  task_completed: objectSchema<WorkerEventPayloads['task_completed']>({
    result: req(text),
    cost_usd: req(cost),
    duration_ms: req({ type: 'number', minimum: 0 }),
    turns: req(count),
    stop_reason: req(label),
    session_id: req(label),
  }),
  task_cancelled: objectSchema<WorkerEventPayloads['task_cancelled']>({ reason: req(text), cost_usd: opt(cost) }),
  error: objectSchema<WorkerEventPayloads['error']>({ message: req(text), reason: req(label), cost_usd: opt(cost) }),
};

export const WORKER_EVENT_TYPES = Object.keys(payloadSchemas) as WorkerEventType[];

/** The event envelope; its payload is checked against its type's schema after. */
interface WorkerEventDraft {
  type: WorkerEventType;
  payload: unknown;
  timestamp?: string;
}

const messageSchemas: { [T in WorkerMessage['type']]: object } = {
  hello: objectSchema<HelloMessage>({ type: req({ const: 'hello' }), runningTaskId: opt(taskId), resumed: opt({ type: 'boolean' }) }),
  event: objectSchema<Omit<EventMessage, 'event'> & { event: WorkerEventDraft }>({
    type: req({ const: 'event' }),
    taskId: req(taskId),
    traceparent: opt({ type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' }),
    event: req(
      objectSchema<WorkerEventDraft>({
        type: req({ enum: WORKER_EVENT_TYPES }),
        payload: req({ type: 'object' }),
        timestamp: opt({ type: 'string', format: 'date-time', maxLength: 64 }),
      }),
    ),
  }),
  steered: objectSchema<SteeredMessage>({ type: req({ const: 'steered' }), id: req(label), accepted: req({ type: 'boolean' }) }),
  // The input's fields are the tool's, checked by the server's handler (pkg/server/services/agent-tool-calls.ts).
  call: objectSchema<CallMessage>({ type: req({ const: 'call' }), id: req(label), tool: req({ enum: AGENTPLANE_TOOLS }), input: req({ type: 'object' }) }),
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A worker's message as sent (the WebSocket text), checked: the message, or why it is refused
 * (one readable line naming the field, for the log and the close reason).
 */
export function parseWorkerMessage(raw: string): { message: WorkerMessage } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: 'not JSON' };
  }
  if (!isRecord(value)) return { error: 'not a JSON object' };
  const type = value.type;
  if (typeof type !== 'string' || !Object.hasOwn(messageSchemas, type)) {
    return { error: `unknown message type ${JSON.stringify(type)?.slice(0, 64) ?? 'undefined'} (hello, event, steered or call)` };
  }
  const causes = validateSchema(messageSchemas[type as WorkerMessage['type']], value);
  if (!causes.length && type === 'event') {
    const event = (value as { event: { type: WorkerEventType; payload: unknown } }).event;
    causes.push(...validateSchema(payloadSchemas[event.type], event.payload, 'event.payload'));
  }
  if (causes.length) return { error: `${type}: ${causes.map((c) => `${c.field} ${c.message}`).join('; ')}` };
  return { message: value as unknown as WorkerMessage };
}
