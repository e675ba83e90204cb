// The credential-injecting model proxy. A worker's engine sends Anthropic Messages API requests
// here with its per-agent credential (ANTHROPIC_API_KEY); the proxy checks it, swaps it for the
// model key, which only the server holds, and forwards the request to the real API. The
// response goes back as it comes: status, headers and body chunk by chunk (server-sent events
// are never buffered), while a tap reads token usage from the passing bytes. Failed requests
// (429, 5xx, 529, timeouts) are retried here, each retry reported as an event; a rejected key or
// a model that stays unavailable ends the task with a readable error.
//
// Node's own http/https client streams with the least overhead of what ships with Node: it
// hands over each chunk as the socket reads it and writes each with one syscall; the keep-alive
// agent reuses upstream connections (see docs/security.md "Model proxy").

import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { ModelRetryPayload } from '../api/event.js';
import { HOP_BY_HOP_HEADERS } from '../api/hop-by-hop.js';
import type { Logger } from '../observability/logger.js';
import type { ModelGrant } from './credentials.js';
import { traceModelRequest } from './model-span.js';
import type { TurnGate } from './turn-gate.js';
import { DEFAULT_RETRY_POLICY, describeRetry, RETRYABLE_STATUSES, type RetryPolicy, retryDelay } from './retry.js';
import { type TokenUsage, UsageTap } from './usage.js';

export const DEFAULT_UPSTREAM = 'https://api.anthropic.com';
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** How much of an error body is kept to quote in an event. */
const MAX_ERROR_BYTES = 16 * 1024;

/** What the proxy reports about an agent's model requests (wired to the agent's event stream). */
export interface ModelProxyEvents {
  /** A request failed and will be retried after `delayMs`. */
  retry(grant: ModelGrant, payload: ModelRetryPayload): void;
  /** The task cannot go on: the key was rejected, or the model stayed unavailable. */
  failed(grant: ModelGrant, error: { message: string; reason: 'ModelCredentialRejected' | 'ModelUnavailable' }): void | Promise<void>;
}

/** Who may call the proxy: the grant a per-agent credential stands for. */
export interface GrantAuthenticator {
  authenticate(credential: string | undefined): ModelGrant | undefined;
}

/**
 * Where counted tokens go, and when a task began (its retry deadline). The server's UsageMeter
 * counts in place; a pod's sidecar reports to the server and returns the report's promise, and
 * the chunk that carried the usage is held until it settles, so the task's total is complete
 * before the engine can end the task.
 */
export interface UsageSink {
  record(grant: ModelGrant, model: string, usage: TokenUsage): void | Promise<void>;
  taskStartedAt(ref: ModelGrant['ref'], uid: string): number | undefined;
  /** The task's own deadline after it began (its template's); undefined: the retry policy's. */
  taskDeadlineMs?(ref: ModelGrant['ref'], uid: string): number | undefined;
  /** A model request of the agent's current task arrived (the first one is timed). */
  modelRequested?(ref: ModelGrant['ref'], uid: string): void;
}

/** What a budget decides about a model request: forward it, or refuse it (the task was ended). */
export type BudgetVerdict = { allow: true } | { allow: false; message: string };

/**
 * Checks the agent's budgets before each model request (docs/budgets.md). A request a budget
 * holds (onExceed Pause) waits inside `admit` until the budget is raised (allow) or the caller
 * goes away (`signal`).
 */
export interface BudgetGate {
  admit(grant: ModelGrant, signal: AbortSignal): Promise<BudgetVerdict>;
}

export interface ModelProxyOptions {
  /** The real API's base URL (ANTHROPIC_BASE_URL of the server); default https://api.anthropic.com. */
  upstream?: string;
  /** The model key, sent upstream as x-api-key; a function is asked on every request (a rotated key). */
  apiKey?: string | (() => string | undefined);
  credentials: GrantAuthenticator;
  meter: UsageSink;
  /** Where a rejected key is to be fixed, for the error event; default the server's ANTHROPIC_API_KEY. */
  keyHint?: string;
  events?: ModelProxyEvents;
  retry?: Partial<RetryPolicy>;
  logger: Logger;
  /** Counts retries by status. */
  onRetry?: (status: number) => void;
  budget?: BudgetGate;
  /** Holds an agent's requests while its workspace is copied mid-task (./turn-gate.ts). */
  gate?: Pick<TurnGate, 'pass'>;
}

// Never forwarded: hop-by-hop headers, the caller's credential, and what the proxy sets itself.
const DROP_REQUEST = new Set([...HOP_BY_HOP_HEADERS, 'host', 'content-length', 'authorization', 'x-api-key', 'accept-encoding', 'cookie']);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export class ModelProxy {
  readonly policy: RetryPolicy;
  private readonly upstream: URL;
  private readonly client: typeof http | typeof https;
  private readonly agent: http.Agent;

  constructor(private readonly o: ModelProxyOptions) {
    this.policy = { ...DEFAULT_RETRY_POLICY, ...o.retry };
    this.upstream = new URL(o.upstream || DEFAULT_UPSTREAM);
    const tls = this.upstream.protocol === 'https:';
    this.client = tls ? https : http;
    this.agent = tls
      ? new https.Agent({ keepAlive: true, maxSockets: 256, noDelay: true })
      : new http.Agent({ keepAlive: true, maxSockets: 256, noDelay: true });
  }

  /**
   * Serves one request. `path` is what follows the proxy's mount point, with the query:
   * `/v1/messages?beta=true`.
   */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const grant = this.o.credentials.authenticate(credentialOf(req.headers));
    if (!grant) {
      req.resume();
      return sendError(res, 401, 'authentication_error', 'a valid agentplane model credential is required');
    }
    if (!path.startsWith('/v1/')) {
      req.resume();
      return sendError(res, 404, 'not_found_error', 'the model proxy serves /v1/ only');
    }
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return sendError(res, 413, 'request_too_large', 'request body too large');
    }
    const log = this.o.logger.child({ namespace: grant.ref.namespace, name: grant.ref.name });
    traceModelRequest(grant.ref, path, body, res);
    const headers = this.requestHeaders(req.headers, body.length);
    const target = this.target(path);
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    if (this.o.gate && !(await this.o.gate.pass(grant.ref, gone.signal))) return;
    // Before the model sees it: a budget spent stops the task here, or holds the request.
    const verdict = this.o.budget ? await this.o.budget.admit(grant, gone.signal) : undefined;
    if (gone.signal.aborted) return;
    if (verdict && !verdict.allow) return sendError(res, 400, 'invalid_request_error', verdict.message);
    const p = this.policy;
    this.o.meter.modelRequested?.(grant.ref, grant.uid);
    const deadline =
      (this.o.meter.taskStartedAt(grant.ref, grant.uid) ?? Date.now()) + (this.o.meter.taskDeadlineMs?.(grant.ref, grant.uid) ?? p.taskDeadlineMs);

    for (let attempt = 0; ; attempt++) {
      let up: IncomingMessage | undefined;
      let failure = '';
      try {
        up = await this.send(req.method ?? 'POST', target, headers, body, gone.signal);
      } catch (err) {
        if (gone.signal.aborted) return;
        failure = err instanceof Error ? err.message : String(err);
      }
      const status = up?.statusCode ?? 0;
      const retryable = !up || RETRYABLE_STATUSES.has(status);
      if (retryable && attempt < p.maxRetries) {
        const delayMs = retryDelay(p, attempt + 1, header(up?.headers['retry-after']));
        if (Date.now() + delayMs < deadline) {
          const detail = up ? await errorMessage(up) : failure;
          const message = describeRetry(status, attempt + 1, p.maxRetries, delayMs);
          log.warn({ status, attempt: attempt + 1, delayMs, detail }, message);
          this.o.onRetry?.(status);
          this.o.events?.retry(grant, { attempt: attempt + 1, of: p.maxRetries, delayMs, status, message: detail ? `${message} (${detail})` : message });
          if (!(await sleep(delayMs, gone.signal))) return;
          continue;
        }
      }
      if (!up) {
        const message = `the model could not be reached after ${attempt} ${attempt === 1 ? 'retry' : 'retries'}: ${failure}`;
        await this.o.events?.failed(grant, { message, reason: 'ModelUnavailable' });
        return sendError(res, 504, 'api_error', message);
      }
      this.pipe(grant, up, res, attempt);
      return;
    }
  }

  close(): void {
    this.agent.destroy();
  }

  private pipe(grant: ModelGrant, up: IncomingMessage, res: ServerResponse, retries: number): void {
    const status = up.statusCode ?? 502;
    const tap = new UsageTap(header(up.headers['content-type']), (model, usage) => this.o.meter.record(grant, model, usage));
    const failing = status >= 400;
    const errorChunks: Buffer[] = [];
    let errorBytes = 0;
    res.writeHead(status, responseHeaders(up.headers));
    res.flushHeaders();
    // Reasons the upstream is paused: the client's socket is full, a usage report is pending.
    let holds = 0;
    const hold = (): void => {
      if (holds++ === 0) up.pause();
    };
    const release = (): void => {
      if (--holds === 0) up.resume();
    };
    const forward = (chunk: Buffer): void => {
      if (!res.write(chunk)) {
        hold();
        res.once('drain', release);
      }
    };
    up.on('data', (chunk: Buffer) => {
      if (failing) {
        if (errorBytes < MAX_ERROR_BYTES) errorChunks.push(chunk);
        errorBytes += chunk.length;
      }
      const reported = failing ? undefined : tap.push(chunk);
      if (!reported) return forward(chunk);
      // The usage of this response is being reported: its chunk waits for the report.
      hold();
      void reported.then(() => {
        forward(chunk);
        release();
      });
    });
    up.on('end', () => {
      if (!failing) {
        const reported = tap.end();
        if (reported) void reported.then(() => res.end());
        else res.end();
        return;
      }
      const detail = messageOf(Buffer.concat(errorChunks).toString('utf8')) || `HTTP ${status}`;
      let told: void | Promise<void> = undefined;
      if (status === 401 || status === 403) {
        told = this.o.events?.failed(grant, {
          message: `the model credential was rejected (HTTP ${status} from the model API: ${detail}); check ${this.o.keyHint ?? "the server's ANTHROPIC_API_KEY"}`,
          reason: 'ModelCredentialRejected',
        });
      } else if (RETRYABLE_STATUSES.has(status)) {
        told = this.o.events?.failed(grant, {
          message: `the model is unavailable (HTTP ${status}: ${detail}); gave up after ${retries} ${retries === 1 ? 'retry' : 'retries'}`,
          reason: 'ModelUnavailable',
        });
      }
      // The engine learns of the failure only once the task has been told why (a report from a
      // sidecar travels to the server), so the task ends with the readable reason, not the
      // engine's own error.
      void Promise.resolve(told).then(() => res.end());
    });
    up.on('error', () => res.destroy());
    up.on('aborted', () => res.destroy());
    res.on('close', () => {
      if (!up.complete) up.destroy();
    });
  }

  private send(method: string, target: URL, headers: OutgoingHttpHeaders, body: Buffer, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.client.request(target, { method, headers, agent: this.agent, signal });
      const timer = setTimeout(() => req.destroy(new Error(`no response within ${this.policy.responseTimeoutMs} ms`)), this.policy.responseTimeoutMs);
      req.on('response', (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body);
    });
  }

  private target(path: string): URL {
    const base = this.upstream.pathname.replace(/\/+$/, '');
    return new URL(`${base}${path}`, this.upstream.origin);
  }

  private requestHeaders(inHeaders: IncomingHttpHeaders, length: number): OutgoingHttpHeaders {
    const out: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(inHeaders)) {
      if (v === undefined || DROP_REQUEST.has(k) || k.startsWith('x-forwarded-') || k.startsWith(':')) continue;
      out[k] = v;
    }
    out['content-length'] = length;
    // Uncompressed, so the usage tap can read it; the hop is the server's own.
    out['accept-encoding'] = 'identity';
    const key = typeof this.o.apiKey === 'function' ? this.o.apiKey() : this.o.apiKey;
    if (key) out['x-api-key'] = key;
    return out;
  }
}

/** The caller's credential: x-api-key, or Authorization: Bearer. */
export function credentialOf(h: IncomingHttpHeaders): string | undefined {
  const key = header(h['x-api-key']);
  if (key) return key;
  const m = /^Bearer\s+(\S+)$/i.exec(header(h.authorization) ?? '');
  return m?.[1];
}

function responseHeaders(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !DROP_RESPONSE.has(k)) out[k] = v;
  return out;
}

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads (a bounded part of) an error response and returns its message. */
async function errorMessage(up: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of up as AsyncIterable<Buffer>) {
      if (size < MAX_ERROR_BYTES) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    // a broken error body still counts as the failure it is
  }
  return messageOf(Buffer.concat(chunks).toString('utf8'));
}

/** The `error.message` of an Anthropic error body, else the start of the text. */
function messageOf(text: string): string {
  try {
    const b = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof b.error?.message === 'string') return b.error.message;
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 200);
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Waits `ms`; false when `signal` aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
