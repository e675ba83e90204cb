// Agent events: the per-agent, ordered stream a task reports through (docs/architecture.md "How a task flows"; kept by docs/event-stores.md).

export type EventType =
  | 'task_started'
  | 'text'
  | 'thinking'
  | 'tool_call'
  | 'tool_result'
  | 'user_message'
  | 'model_retry'
  | 'context_compacted'
  | 'approval_requested'
  | 'approval_decided'
  | 'budget_warning'
  | 'budget_exceeded'
  | 'message'
  | 'task_completed'
  | 'task_cancelled'
  | 'error';

export const EVENT_TYPES: readonly EventType[] = [
  'task_started',
  'text',
  'thinking',
  'tool_call',
  'tool_result',
  'user_message',
  'model_retry',
  'context_compacted',
  'approval_requested',
  'approval_decided',
  'budget_warning',
  'budget_exceeded',
  'message',
  'task_completed',
  'task_cancelled',
  'error',
];

/** Types that end a task: a stream reader stops on these. */
export const TERMINAL_EVENT_TYPES: readonly EventType[] = ['task_completed', 'task_cancelled', 'error'];

/** Model tokens, as the model's responses reported them (counted by the model proxy). */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/**
 * What a task that did not complete spent, when known (an extension to the spec): the engine's
 * cost estimate for the task and the model proxy's tokens, as on task_completed.
 */
export interface TaskSpend {
  cost_usd?: number;
  usage?: TokenUsage;
  model_usage?: Record<string, TokenUsage>;
}

export interface TaskCompletedPayload {
  result: string;
  /** This task's cost, not the warm session's running total. */
  cost_usd: number;
  duration_ms: number;
  turns: number;
  stop_reason: string;
  session_id: string;
  /** Extra to the spec: the task's model tokens, summed over its requests through the proxy. */
  usage?: TokenUsage;
  /** The same tokens by the model each response named (the proxy's meter): GET .../cost sums them per model. */
  model_usage?: Record<string, TokenUsage>;
}

/**
 * The engine compacted the session's conversation (its `compact_boundary`): on request (POST
 * .../compact: `manual`) or because the context filled up (`auto`). The conversation before it
 * lives on as the engine's summary.
 */
export interface ContextCompactedPayload {
  trigger: 'manual' | 'auto';
  /** Context tokens before the compaction, as the engine counted them. */
  pre_tokens: number;
  /** Context tokens after it, when the engine says. */
  post_tokens?: number;
}

/** The model proxy waits and retries a failed model request (429, 5xx, 529, timeout). */
export interface ModelRetryPayload {
  /** This retry's number, 1-based. */
  attempt: number;
  /** Retries allowed at most. */
  of: number;
  delayMs: number;
  /** The model's HTTP status, or 0 for a timeout or connection failure. */
  status: number;
  /** Readable, e.g. "model overloaded, retry 2 of 8 in 4 s". */
  message: string;
}

/**
 * The engine is about to run a tool the agent's approval policy holds for a person: the task
 * waits until someone decides (POST …/approvals/:id) or the timeout applies `onTimeout`. The
 * worker sends id, tool and input; the server adds the rest from the agent's policy.
 */
export interface ApprovalRequestedPayload {
  /** The engine's tool-use id: the approval's id, and the tool_call event's `id`. */
  id: string;
  tool: string;
  input: unknown;
  expiresAt: string;
  onTimeout: 'allow' | 'deny';
  /** Who may decide, in RBAC terms. */
  deciders: string;
}

/** Someone (or the timeout) decided an approval; the worker runs the tool, or the model reads the refusal. */
export interface ApprovalDecidedPayload {
  id: string;
  tool: string;
  decision: 'allow' | 'deny';
  reason?: string;
  /** The user who decided, or system:agentplane:approval-timeout. */
  decidedBy: string;
}

/**
 * A budget reached its warning share (budget_warning, 80%) or its limit (budget_exceeded, the
 * task held by onExceed Pause; with Stop the task ends with an `error` of reason BudgetExceeded).
 */
export interface BudgetEventPayload {
  /** The agent's own budget, or its namespace's Budget `name`. */
  scope: 'agent' | 'namespace';
  name?: string;
  limit: 'maxTokens' | 'maxCostUsd';
  spent: number;
  max: number;
  onExceed: 'Stop' | 'Pause';
  message: string;
}

/**
 * A message between agents, or from a person to an agent (POST …/messages, a manager's
 * send_message tool: docs/messages.md), recorded on the receiver (`received`) and, when the
 * sender is an agent of the namespace, on the sender (`sent`).
 */
export interface MessagePayload {
  from: string;
  to: string;
  text: string;
  direction: 'received' | 'sent';
  /** followUp: into the running task; task: a new task; queued: kept until the sleeping receiver wakes. */
  delivery: 'followUp' | 'task' | 'queued';
}

export interface EventPayloads {
  task_started: { instructions: string };
  text: { content: string };
  thinking: { content: string };
  tool_call: { id: string; tool: string; input: unknown };
  tool_result: { id: string; tool: string; output: string; isError: boolean };
  /** A follow-up sent into the running task (PATCH instructions on a busy agent). */
  user_message: { content: string };
  model_retry: ModelRetryPayload;
  context_compacted: ContextCompactedPayload;
  approval_requested: ApprovalRequestedPayload;
  approval_decided: ApprovalDecidedPayload;
  budget_warning: BudgetEventPayload;
  budget_exceeded: BudgetEventPayload;
  message: MessagePayload;
  task_completed: TaskCompletedPayload;
  task_cancelled: { reason: string } & TaskSpend;
  error: { message: string; reason: string } & TaskSpend;
}

/** What a producer (the worker, or the service for its own failures) emits. */
export interface EventDraft<T extends EventType = EventType> {
  type: T;
  /** The task the event belongs to (the agent's task counter); set by the service. */
  task?: number;
  payload: EventPayloads[T];
  timestamp?: string;
}

/** A stored event, as REST history and the WebSocket return it. */
export interface AgentEvent<T extends EventType = EventType> {
  seq: number;
  agentName: string;
  namespace: string;
  /** The task the event belongs to: 1 for the agent's first task, 2 for the next... */
  task: number;
  type: T;
  timestamp: string;
  payload: EventPayloads[T];
}

export const isTerminal = (type: string): boolean => (TERMINAL_EVENT_TYPES as readonly string[]).includes(type);

export const EVENTS_DEFAULT_LIMIT = 50;
export const EVENTS_MAX_LIMIT = 200;
