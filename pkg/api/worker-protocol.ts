// Messages of the worker control channel. The worker dials the server (outbound WebSocket),
// authenticates with its per-agent token, and then:
//   server -> worker: task, cancel, steer, compact, approval (a decision), assign (a warm-pool slot becomes an agent's worker)
//   worker -> server: hello (on every connect), event (for the task it runs; an `approval_requested`
//   event asks for a decision), steered (answers steer, compact and approval), call (a tool of the
//   in-process `agentplane` MCP server, answered by `answer`)

import type { EventDraft, ModelRetryPayload, TokenUsage } from './event.js';
import type { Role } from './agent.js';
import type { ApprovalDecision, ApprovalPolicy } from './approval.js';
import type { AgentplaneTool } from './agent-message.js';

export const CONTROL_PATH = '/internal/v1/workers/connect';

// A worker's messages are untrusted input: the tools in its sandbox can read its token and speak
// for it. The server checks each against its schema (./worker-protocol-schema.ts) and these
// limits (docs/decisions.md "Limits"); a breach closes that worker's channel with one of the
// codes below, and costs no other agent anything.

/**
 * The largest WebSocket message a worker may send: the listener's `maxPayload` (BODY_LIMIT);
 * larger closes the channel with 1009 (ws's own "message too big").
 */
export const MAX_WORKER_MESSAGE_BYTES = 1024 * 1024;
/**
 * An event's payload as JSON at most (a big tool result is ~100 KiB: the engine caps a Bash
 * output at 30 000 characters and a Read at 25 000 tokens): beyond it, its longest strings are
 * cut, each ending with TRUNCATED_MARKER (./event-size.ts). The worker cuts before sending; the
 * server cuts again whatever arrives.
 */
export const MAX_EVENT_BYTES = 256 * 1024;
/** Events one task may store; the next one ends the task with `error{reason: TooManyEvents}`. */
export const MAX_EVENTS_PER_TASK = 10_000;
/** Payload bytes one task may store (as JSON); past it, the same `TooManyEvents` end. */
export const MAX_TASK_EVENT_BYTES = 64 * 1024 * 1024;
/** Messages per second one agent's worker may send on average, and at once (a token bucket shared by its connections: reconnecting does not refill it). */
export const WORKER_MESSAGES_PER_SECOND = 200;
export const WORKER_MESSAGE_BURST = 1000;

/** Why the server closed a worker's channel (WebSocket close codes; 1009 is ws's own, above). */
export const WorkerCloseCode = {
  /** Not JSON, not a message of this protocol, or a field of the wrong shape. */
  invalid: 4400,
  /** Valid, but not now: before `hello`, a second `hello`, an event of a task never given to it, anything from an unassigned slot. */
  outOfOrder: 4403,
  /** More messages than WORKER_MESSAGES_PER_SECOND allows. */
  flooding: 4429,
  /** Handling the message threw: a server bug, confined to this connection. */
  internal: 1011,
} as const;
/** Where the model proxy is mounted on the worker-facing listener: ANTHROPIC_BASE_URL=<channel url><path>. */
export const MODEL_PROXY_PATH = '/internal/v1/model';

/**
 * Where the connector gateway is mounted on the worker-facing listener: the engine reaches a
 * connector at <server url><path>/<namespace>/<name>/mcp with its model credential, and the
 * server adds the connector's secret there (docs/connectors.md "Attaching").
 */
export const CONNECTOR_GATEWAY_PATH = '/internal/v1/connectors';

/** The gateway path of one connector. */
export const connectorGatewayPath = (namespace: string, name: string): string =>
  `${CONNECTOR_GATEWAY_PATH}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/mcp`;

/**
 * A connector the engine attaches for one task, reached through the server's connector gateway.
 * No URL and no secret: the worker composes the gateway URL from its server URL.
 */
export interface McpServerSpec {
  /** The connector's name: the engine's MCP server name (tools `mcp__<name>__<tool>`). */
  name: string;
  /** The connector's namespace (the agent's). */
  namespace: string;
  /** Changes with the connector's spec (uid and generation): an engine started with another one is replaced. */
  revision: string;
}

export interface TaskMessage {
  type: 'task';
  taskId: number;
  instructions: string;
  systemPrompt?: string;
  model: string;
  role: Role;
  /** Engine session to resume (the previous task's). */
  resume?: string;
  mcpServers: McpServerSpec[];
  /** The agent's approval policy: the tools this task asks a person about before running. */
  approval?: ApprovalPolicy;
  /**
   * A task run again (its worker ended with the service while a call waited): its approvals, which
   * a repeated call of the same tool with the same input takes instead of asking again.
   */
  carriedApprovals?: CarriedApproval[];
  /** The agent's skills and memories as they are now, written read-only into its workspace before the task (docs/skills-and-memories.md). */
  attachments?: TaskAttachments;
  /** W3C traceparent of the dispatch (docs/tracing.md): the worker's task span continues its trace. Only when tracing is on. */
  traceparent?: string;
}

/** The skills and memories a task starts with (absent ones were deleted meanwhile: left out). */
export interface TaskAttachments {
  skills: { name: string; description: string; files: Record<string, string> }[];
  memories: { name: string; description?: string; text: string }[];
}

/**
 * Where an agent's memory tools read and write its attached memories, on the worker-facing
 * listener: GET and PUT <server url><path>/<name>, with the agent's model credential (as the
 * connector gateway takes it). PUT's body is `{text}`; both answer `{name, text, description?}`.
 */
export const MEMORY_TOOL_PATH = '/internal/v1/memories';

export interface CarriedApproval {
  id: string;
  tool: string;
  input: unknown;
  /** Decided already: applied at once; else the call waits for the decision on this id. */
  decision?: ApprovalDecision;
  reason?: string;
}

export interface CancelMessage {
  type: 'cancel';
  taskId: number;
  reason: string;
}

/** A follow-up message for the running task; the worker answers with `steered`. */
export interface SteerMessage {
  type: 'steer';
  /** Pairs the answer with the request. */
  id: string;
  taskId: number;
  content: string;
}

/**
 * Compact the running task's session: the engine's own compaction (its `/compact` command) runs
 * once the turn in progress ends, and the task goes on after it. The worker answers with
 * `steered` (the same id): accepted while the task runs, refused once it has ended.
 */
export interface CompactMessage {
  type: 'compact';
  id: string;
  taskId: number;
  /** Guidance for the summary, passed to `/compact`. */
  instructions?: string;
}

/**
 * The decision on an approval the task asked for (its `approval_requested` event): the engine runs
 * the tool, or the model reads the refusal. The worker answers with `steered` (the same id, `req`):
 * accepted while the tool call waited for it, refused when nothing waits (decided already, task
 * ended). Sent again after a reconnect until answered.
 */
export interface ApprovalMessage {
  type: 'approval';
  /** Pairs the answer with the request. */
  req: string;
  taskId: number;
  /** The approval's id (the tool-use id). */
  id: string;
  decision: ApprovalDecision;
  reason?: string;
}

/** What the server hands a worker about one approval (the message without its envelope). */
export type ApprovalHandover = Pick<ApprovalMessage, 'id' | 'decision' | 'reason'>;

/**
 * A warm-pool slot (a worker started ahead of any agent, docs/performance.md "Warm pool") is now
 * this agent's worker: its token and model credential speak for the agent from here on, and its
 * workspace is the agent's. Sent once, before the agent's first task.
 */
export interface AssignMessage {
  type: 'assign';
  namespace: string;
  name: string;
  uid: string;
}

/**
 * The engine settings a slot starts its session with before any task (AGENTPLANE_PRESTART, JSON):
 * a task with the same settings and nothing to resume reuses that session.
 */
export interface PrestartSettings {
  model: string;
  role: Role;
}

/**
 * The server's answer to a worker's `call`: the tool's result as text for the model, or why it
 * was refused (`isError`: the model reads it as the tool's error).
 */
export interface AnswerMessage {
  type: 'answer';
  id: string;
  isError: boolean;
  text: string;
}

export type ServerMessage = TaskMessage | CancelMessage | SteerMessage | CompactMessage | ApprovalMessage | AssignMessage | AnswerMessage;

export interface HelloMessage {
  type: 'hello';
  /** The task still running in the worker after a reconnect, if any. */
  runningTaskId?: number;
  /**
   * True when this worker had a control channel before (its replica went away, or the network
   * dropped): the server counts reconnects; the task stream resumes from the worker's outbox.
   */
  resumed?: boolean;
}

export interface EventMessage {
  type: 'event';
  taskId: number;
  event: EventDraft;
  /** On a task's first event when tracing is on: the worker's task span (docs/tracing.md), which the model proxy parents the task's model requests on. */
  traceparent?: string;
}

/** Whether a steer (or a compact) reached its task: false once the task has ended (or is not this worker's). */
export interface SteeredMessage {
  type: 'steered';
  id: string;
  accepted: boolean;
}

/**
 * A manager agent's engine called a tool of the worker's in-process `agentplane` MCP server
 * (pkg/worker/agentplane-tools.ts): the server acts for the worker's own agent, within its
 * namespace (docs/messages.md), and answers with `answer` (the same id).
 */
export interface CallMessage {
  type: 'call';
  id: string;
  tool: AgentplaneTool;
  input: Record<string, unknown>;
}

export type WorkerMessage = HelloMessage | EventMessage | SteeredMessage | CallMessage;

/**
 * Where a pod's model-proxy sidecar reports what only the model's responses tell (token usage,
 * retries, a failure that ends the task), authenticated with the agent's model credential: POST
 * <channel url><path>, a JSON `ModelReport`, answered 204.
 */
export const MODEL_REPORT_PATH = `${MODEL_PROXY_PATH}/reports`;

export type ModelReport =
  /** A model request of the agent came (sent as it starts, not waited for): the server times its task's first. */
  | { type: 'requested' }
  | { type: 'usage'; model: string; usage: TokenUsage }
  | { type: 'retry'; payload: ModelRetryPayload }
  | { type: 'failed'; error: { message: string; reason: 'ModelCredentialRejected' | 'ModelUnavailable' } }
  /**
   * Before a request of an agent with a budget (docs/budgets.md): answered 200 with a
   * `BudgetAnswer` once the budgets allow it or refuse it (a held task: only then).
   */
  | { type: 'admit' };

/** The server's answer to an `admit` report. */
export type BudgetAnswer = { allow: true } | { allow: false; message: string };

/**
 * On every report's answer: whether budgets apply to the agent ("on": the sidecar sends `admit`
 * before each of its requests) or not ("off").
 */
export const BUDGET_HEADER = 'x-agentplane-budget';
