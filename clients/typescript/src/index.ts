// @agentplane/client: a typed client of agentplane's REST mirror (/api/v1). The types of every
// path, operation and schema are generated from the server's OpenAPI document (schema.ts,
// openapi-typescript); requests go through openapi-fetch, which checks paths, parameters and
// bodies against them at compile time. The live event stream, a WebSocket the generator does not
// know, is the hand-written events.ts.

import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';
export { CLOSE_CODES, EventStreamError, followEvents, type AgentEvent, type FollowOptions } from './events.js';

/** The request and response bodies by name, e.g. `Schemas['AgentResponse']`. */
export type Schemas = components['schemas'];
/** Every refusal's body: `{error, reason, code, details?}`. */
export type ErrorBody = components['schemas']['Error'];
export type AgentplaneClient = Client<paths>;

export interface AgentplaneOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** The server, e.g. `http://127.0.0.1:8080` (no `/api/v1`: the paths carry it). */
  baseUrl: string;
  /** A bearer token, when the server asks for one (docs/auth.md). */
  token?: string;
  headers?: Record<string, string>;
}

/** A client for every REST operation: `client.GET('/api/v1/agents/{name}', {params: {path: {name}}})`. */
export function createClient(opts: AgentplaneOptions): AgentplaneClient {
  const { token, headers, ...rest } = opts;
  return createFetchClient<paths>({ ...rest, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
}

/** A refusal of the server (4xx, 5xx) as an exception: its status and the body's `reason`. */
export class AgentplaneError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly body: ErrorBody;
  constructor(status: number, body: ErrorBody) {
    super(`${status} ${body.reason}: ${body.error}`);
    this.name = 'AgentplaneError';
    this.status = status;
    this.reason = body.reason;
    this.body = body;
  }
}

/**
 * The data of an answer, or an AgentplaneError for a refusal: for callers who prefer exceptions
 * to openapi-fetch's `{data, error}` results. `await must(client.GET(...))`.
 */
export async function must<R extends { data?: unknown; error?: unknown; response: Response }>(call: Promise<R>): Promise<NonNullable<R['data']>> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw new AgentplaneError(response.status, errorBody(error, response));
  return data as NonNullable<R['data']>;
}

const errorBody = (error: unknown, response: Response): ErrorBody =>
  typeof error === 'object' && error !== null && 'reason' in error
    ? (error as ErrorBody)
    : { error: typeof error === 'string' ? error : response.statusText, reason: response.statusText || 'Unknown', code: response.status };
