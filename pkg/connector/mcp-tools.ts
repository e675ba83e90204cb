// Asks an MCP server (Streamable HTTP) for its tools with the official SDK client, within a
// deadline, and classifies the outcome as a connector phase. Messages are ours, never the
// server's body, and the credential is scrubbed from anything that is passed on.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectorPhase, ConnectorTool } from '../api/connector.js';
import { EgressRefusedError } from './egress.js';

export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
const MAX_PAGES = 20;

export type ToolListing =
  { ok: true; tools: ConnectorTool[] } | { ok: false; phase: Exclude<ConnectorPhase, 'Ready' | 'Unknown' | 'SecretMissing'>; message: string };

export interface ListToolsOptions {
  /** The fetch to connect with (the service's guarded one); default the global fetch. */
  fetch?: FetchLike;
  timeoutMs?: number;
  /** Aborts the listing (service shutdown). */
  signal?: AbortSignal;
  /** Values to scrub from any message (the token). */
  secrets?: string[];
}

export async function listMcpTools(url: string, headers: Record<string, string>, opts: ListToolsOptions = {}): Promise<ToolListing> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('deadline')), timeoutMs);
  const onAbort = (): void => deadline.abort(new Error('aborted'));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const client = new Client({ name: 'agentplane', version: '0.1.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
  const req = () => ({ signal: deadline.signal, timeout: Math.max(1, timeoutMs) });
  try {
    await client.connect(transport, req());
    const tools: ConnectorTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await client.listTools(cursor ? { cursor } : undefined, req());
      for (const t of res.tools) tools.push({ name: t.name, description: t.description ?? '' });
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return { ok: true, tools };
  } catch (err) {
    const out = classify(err, url, timeoutMs, deadline.signal.aborted);
    return { ...out, message: scrub(out.message, opts.secrets ?? []) };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    await closeQuietly(client, transport);
  }
}

function classify(err: unknown, url: string, timeoutMs: number, timedOut: boolean): Extract<ToolListing, { ok: false }> {
  const where = `the MCP server at ${url}`;
  const refused = causeOf(err, EgressRefusedError);
  if (refused) return { ok: false, phase: 'Error', message: `the server does not connect to ${url}: ${refused.message}` };
  if (err instanceof UnauthorizedError) return { ok: false, phase: 'Unauthorized', message: `${where} refused the credential` };
  if (err instanceof StreamableHTTPError) {
    const status = err.code ?? 0;
    if (status === 401 || status === 403) {
      return { ok: false, phase: 'Unauthorized', message: `${where} refused the credential (HTTP ${status})` };
    }
    if (status === 502 || status === 503 || status === 504) {
      return { ok: false, phase: 'Unreachable', message: `${where} is unavailable (HTTP ${status})` };
    }
    if (status > 0) return { ok: false, phase: 'Error', message: `${where} answered HTTP ${status}; is the URL an MCP endpoint?` };
    return { ok: false, phase: 'Error', message: `${where} did not answer as an MCP server (unexpected response)` };
  }
  if (timedOut || (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number))) {
    return { ok: false, phase: 'Unreachable', message: `${where} did not answer within ${Math.round(timeoutMs / 100) / 10} s` };
  }
  const net = networkCode(err);
  if (net) return { ok: false, phase: 'Unreachable', message: `cannot reach ${where} (${net})` };
  if (err instanceof McpError) return { ok: false, phase: 'Error', message: `${where} failed the request: MCP error ${err.code}` };
  return { ok: false, phase: 'Error', message: `${where} could not be queried: ${oneLine(err)}` };
}

/** The first error of that class in the cause chain. */
function causeOf<E extends Error>(err: unknown, cls: new (...args: never[]) => E): E | undefined {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) if (e instanceof cls) return e;
  return undefined;
}

/** The errno-style code under fetch's "fetch failed" TypeError (ECONNREFUSED, ENOTFOUND, ...). */
function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  }
  if (err instanceof TypeError && /fetch failed/i.test(err.message)) return 'connection failed';
  return undefined;
}

const oneLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 200);

function scrub(message: string, secrets: string[]): string {
  let out = message;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out;
}

async function closeQuietly(client: Client, transport: StreamableHTTPClientTransport): Promise<void> {
  try {
    if (transport.sessionId) {
      // Polite: end the session; bounded, and the transport's own abort cuts it on close.
      await Promise.race([transport.terminateSession(), new Promise((r) => setTimeout(r, 500))]);
    }
  } catch {
    // ignore
  }
  try {
    await client.close();
  } catch {
    // ignore
  }
}
