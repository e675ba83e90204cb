// Messages between agents (docs/messages.md): POST /api/v1/agents/:name/messages (and the
// aggregated API's agents/messages subresource) takes `{from?, text, wake?}`; a manager agent
// sends the same through its `agentplane` tools. The request, the answer, the queue of messages
// kept on a sleeping agent, and the words the receiving model reads.

import type { Agent } from './agent.js';

/** The longest message text (a message becomes a follow-up or a task's prompt: well under a prompt's limit). */
export const MESSAGE_TEXT_MAX_LENGTH = 65536;
/** The longest `from`: an agent's name, or a person's (a user name, an e-mail address). */
export const MESSAGE_FROM_MAX_LENGTH = 253;
/** Messages a sleeping agent keeps queued at most; the next one is refused (409) until it wakes. */
export const MAX_QUEUED_MESSAGES = 32;

export interface MessageRequest {
  /** An agent of the same namespace, or free text naming a person; default the authenticated user. */
  from?: string;
  text: string;
  /** A sleeping receiver is woken (its queued messages become its next task). */
  wake?: boolean;
}

export const messageRequestSchema = {
  $id: 'MessageRequest',
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: {
    from: {
      type: 'string',
      minLength: 1,
      maxLength: MESSAGE_FROM_MAX_LENGTH,
      pattern: '^[^\\x00-\\x1f\\x7f]+$',
      description: `who sends it: an agent of the same namespace (its log records the message as sent), or a person; default the authenticated user (at most ${MESSAGE_FROM_MAX_LENGTH} characters, one line)`,
    },
    text: { type: 'string', minLength: 1, maxLength: MESSAGE_TEXT_MAX_LENGTH, description: `the message, at most ${MESSAGE_TEXT_MAX_LENGTH} characters` },
    wake: { type: 'boolean', description: 'wake a sleeping receiver, which then takes the message (with any queued before it) as its next task' },
  },
} as const;

/** How a message reached its receiver. */
export type MessageDelivery = 'followUp' | 'task' | 'queued';
export const MESSAGE_DELIVERIES: readonly MessageDelivery[] = ['followUp', 'task', 'queued'];

/** The answer: 200 when delivered (a follow-up or a new task), 202 when queued on a sleeping agent. */
export interface MessageResponse {
  agent: string;
  namespace: string;
  from: string;
  delivery: MessageDelivery;
  /** The receiver's task the message went into (followUp, task), or its last task (queued). */
  task: number;
  /** A queued message's receiver was woken (`wake: true`). */
  woken: boolean;
}

export const messageResponseSchema = {
  $id: 'MessageResponse',
  type: 'object',
  required: ['agent', 'namespace', 'from', 'delivery', 'task', 'woken'],
  properties: {
    agent: { type: 'string' },
    namespace: { type: 'string' },
    from: { type: 'string' },
    delivery: {
      type: 'string',
      enum: MESSAGE_DELIVERIES,
      description: 'followUp: into the running task; task: a new task on the idle agent; queued: kept until the sleeping agent wakes',
    },
    task: { type: 'integer', minimum: 0 },
    woken: { type: 'boolean' },
  },
} as const;

/** What the receiving model reads: who sent it, then the text (its own lines, unchanged). */
export const messagePrompt = (from: string, text: string): string => `Message from ${from}:\n${text}`;

/**
 * Messages kept on a sleeping agent until it wakes, oldest first, as an annotation (a request
 * stored on the object, as follow-ups are): JSON `[{"from", "text"}]`. The message controller
 * turns them into the agent's next task once it is awake and idle.
 */
export const QUEUED_MESSAGES_ANNOTATION = 'agentplane.io/queued-messages';

export interface QueuedMessage {
  from: string;
  text: string;
}

const isQueued = (m: unknown): m is QueuedMessage =>
  typeof (m as QueuedMessage | null)?.from === 'string' && typeof (m as QueuedMessage | null)?.text === 'string';

/** The agent's queued messages (none for a malformed annotation). */
export function queuedMessages(a: Agent): QueuedMessage[] {
  const raw = a.metadata.annotations?.[QUEUED_MESSAGES_ANNOTATION];
  if (!raw) return [];
  try {
    const v = JSON.parse(raw) as unknown;
    return Array.isArray(v) ? v.filter(isQueued) : [];
  } catch {
    return [];
  }
}

export function setQueuedMessages(a: Agent, items: QueuedMessage[]): void {
  const annotations = { ...a.metadata.annotations };
  if (items.length) annotations[QUEUED_MESSAGES_ANNOTATION] = JSON.stringify(items);
  else delete annotations[QUEUED_MESSAGES_ANNOTATION];
  a.metadata.annotations = annotations;
}

/** The prompt of the task that delivers queued messages: each as the model would read it alone. */
export const queuedPrompt = (items: QueuedMessage[]): string => items.map((m) => messagePrompt(m.from, m.text)).join('\n\n');

/** The tools of the in-process `agentplane` MCP server a manager agent's engine gets (pkg/worker/agentplane-tools.ts). */
export type AgentplaneTool = 'send_message' | 'list_agents';
export const AGENTPLANE_TOOLS: readonly AgentplaneTool[] = ['send_message', 'list_agents'];

/** send_message's input: `to` is an agent of the caller's namespace (`<namespace>/<name>` only for its own). */
export interface SendMessageInput {
  to: string;
  text: string;
}

export const sendMessageInputSchema = {
  $id: 'SendMessageInput',
  type: 'object',
  additionalProperties: false,
  required: ['to', 'text'],
  properties: {
    to: { type: 'string', minLength: 1, maxLength: 2 * MESSAGE_FROM_MAX_LENGTH + 1 },
    text: { type: 'string', minLength: 1, maxLength: MESSAGE_TEXT_MAX_LENGTH },
  },
} as const;

/** One line of list_agents' answer. */
export interface AgentSummary {
  name: string;
  status: string;
  role: string;
  taskStatus: string;
}
