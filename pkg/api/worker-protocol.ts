// Messages of the worker control channel. The worker dials the server (outbound WebSocket),
// authenticates with its per-agent token, and then:
//   server -> worker: task, cancel, steer, assign (a warm-pool slot becomes an agent's worker)
//   worker -> server: hello (on every connect), event (for the task it runs), steered

import type { EventDraft, ModelRetryPayload, TokenUsage } from './event.js';
import type { Role } from './agent.js';

export const CONTROL_PATH = '/internal/v1/workers/connect';
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

export type ServerMessage = TaskMessage | CancelMessage | SteerMessage | AssignMessage;

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
}

/** Whether a steer reached its task: false once the task has ended (or is not this worker's). */
export interface SteeredMessage {
  type: 'steered';
  id: string;
  accepted: boolean;
}

export type WorkerMessage = HelloMessage | EventMessage | SteeredMessage;

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
  | { type: 'failed'; error: { message: string; reason: 'ModelCredentialRejected' | 'ModelUnavailable' } };
