// The HTTP client of the CLI: REST calls (/api/v1), Table reads from the aggregated API, and the
// live event WebSocket. Every failure becomes a CliError: the server's message with a hint, or,
// when nothing answers, the address that was tried.

import WebSocket from 'ws';
import type { Target } from './config.js';
import { CliError, EXIT } from './exit-codes.js';
import { hintFor, type RequestWhat } from './hints.js';
import type { CallOptions, Query, Reply, Transport } from './transport.js';

export type { Query, Reply } from './transport.js';

/** The server refused: its status, reason and message. */
export class ApiCallError extends CliError {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    hint: string | undefined,
  ) {
    super(message, hint, EXIT.API_ERROR);
    this.name = 'ApiCallError';
  }
}

/** The REST body (`error`) or a Kubernetes Status (`message`), as the path's API renders errors. */
export function refusal(status: number, text: string, what: RequestWhat): ApiCallError {
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: a proxy's page, say
  }
  const message =
    typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
  const reason = typeof body.reason === 'string' ? body.reason : '';
  return new ApiCallError(status, reason, message, hintFor(status, reason, message, what));
}

/** `node:undici`'s "fetch failed" names the socket error in its cause. */
function unreachable(server: string, err: unknown): CliError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new CliError(
    `cannot reach the agentplane server at ${server} (${why})`,
    'start one with `agentplane serve`, or point at another with --server, AGENTPLANE_SERVER or `agentplane config set-context`',
    EXIT.UNREACHABLE,
  );
}

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
export const GROUP_VERSION = 'agentplane.io/v1alpha1';

export class Client implements Transport {
  constructor(
    readonly target: Target,
    private readonly timeoutMs = 60_000,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.target.token ? { authorization: `Bearer ${this.target.token}` } : {}), ...extra };
  }

  url(path: string, query: Query = {}): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    const s = qs.toString();
    return `${this.target.server}${path}${s ? `?${s}` : ''}`;
  }

  /** One call; 2xx gives the parsed body, anything else throws the server's refusal. */
  async call<T = unknown>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
    const headers = this.headers(opts.accept ? { accept: opts.accept } : {});
    const init: RequestInit = { method, headers, signal: AbortSignal.timeout(this.timeoutMs) };
    if (opts.body !== undefined) {
      init.body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await fetch(this.url(path, opts.query), init);
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') {
        throw new CliError(
          `the server at ${this.target.server} did not answer ${method} ${path} within ${this.timeoutMs / 1000} s`,
          'it may be overloaded; try again',
          EXIT.UNREACHABLE,
        );
      }
      throw unreachable(this.target.server, err);
    }
    const text = await res.text();
    if (!res.ok) {
      const ns = opts.ns ?? (typeof opts.query?.namespace === 'string' ? opts.query.namespace : undefined);
      throw refusal(res.status, text, {
        server: this.target.server,
        hasToken: Boolean(this.target.token),
        ...(opts.kind ? { kind: opts.kind } : {}),
        ...(ns ? { namespace: ns } : {}),
      });
    }
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // a non-JSON success body is returned as text
    }
    return { status: res.status, body: body as T };
  }

  /**
   * Opens an agent's live event socket, each message to `onMessage`; resolves once open. A refused upgrade (404, 401, 429…)
   * rejects with the server's message, as a REST refusal would.
   */
  openEvents(namespace: string, name: string, since: number | undefined, onMessage: (data: string) => void): Promise<WebSocket> {
    const url = this.url(`/api/v1/agents/${encodeURIComponent(name)}/ws`, { namespace, since }).replace(/^http/, 'ws');
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: this.headers() });
      // Before 'open': the replay can arrive in the same read as the handshake, and ws emits
      // it before an await on the open would resume.
      // binaryType is ws's default, 'nodebuffer': every message arrives as one Buffer.
      ws.on('message', (d) => onMessage((d as Buffer).toString()));
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          reject(refusal(res.statusCode ?? 0, text, { kind: 'agent', namespace, server: this.target.server, hasToken: Boolean(this.target.token) }));
          ws.terminate();
        });
      });
      ws.once('error', (err) => reject(unreachable(this.target.server, { cause: err })));
    });
  }
}
