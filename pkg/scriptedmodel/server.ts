// An HTTP server speaking enough of the Anthropic Messages API for the Claude Code engine to run
// against it, answering from the directives in each task's prompt (see script.ts).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compactionOf, summaryTurn } from './compaction.js';
import { currentTask, estimateTokens, isRecord, nextTurn, parseScript, promptText, reminders, type Task } from './script.js';
import { assistantMessage, errorBody, newId, sseEvents, sseFrame } from './sse.js';

export interface ScriptedModelOptions {
  host?: string;
  port?: number;
  /** When set, requests presenting another key are rejected with 401. */
  apiKey?: string;
  /** Whether to keep every request in `requests` (default true; tests read them). */
  keepRequests?: boolean;
}

export interface RecordedRequest {
  /** URL path without the query string, e.g. `/v1/messages`. */
  path: string;
  model?: string;
  /** The x-api-key header, or else the Authorization Bearer token. */
  apiKey?: string;
  hasTools: boolean;
  /** Prompt text of the current task (system reminders left out), or of a follow-up with directives that took over; "" if none. */
  lastUserText: string;
  /** Text of the current task's latest tool result (what a tool printed), if any. */
  lastToolResult?: string;
  /** The system prompt's text blocks, joined by newlines. */
  system: string;
  /** Names of the tools the engine offered. */
  tools: string[];
  /**
   * What the engine told the model besides the prompts: the system reminders in user messages
   * and the tools' descriptions (where it lists the skills it loaded, for one).
   */
  notes: string[];
  /** The prompt text of every user message in the conversation, oldest first (what the model was told so far). */
  userTexts: string[];
  /** When the request arrived (ms since the epoch): where a task first reached the model. */
  receivedAt: number;
  /** The engine's compaction request (answered with a summary): the instructions it carried ('' for none). */
  compaction?: { instructions: string };
}

export interface ScriptedModel {
  url: string;
  port: number;
  /** Every request received, in arrival order, including rejected ones. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

// Engine requests carry the whole conversation plus tool schemas; this is generous headroom.
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const DEFAULT_MODEL = 'scripted-model';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startScriptedModel(opts: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const requests: RecordedRequest[] = [];
  // Requests failed so far by each counted `@fail … xN`, by task prompt and directive index.
  const failed = new Map<string, number>();
  const failKey = (task: Task, index: number): string => `${index}\u0000${task.prompt}`;
  // Pending @delay waits, so close() can cut them short instead of hanging for minutes.
  const waits = new Set<() => void>();
  let closing = false;

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waits.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waits.add(done);
    });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const apiKey = apiKeyOf(req);
    const raw = await readBody(req);
    const body = parseJson(raw);
    const record = recordOf(path, body, apiKey, receivedAt);
    const compaction = compactionOf(body);
    if (opts.keepRequests !== false) requests.push(record);

    if (opts.apiKey !== undefined && apiKey !== opts.apiKey) {
      throw new HttpError(401, 'authentication_error', 'invalid x-api-key');
    }
    const route = `${req.method} ${path}`;
    if (route !== 'POST /v1/messages' && route !== 'POST /v1/messages/count_tokens') {
      throw new HttpError(404, 'not_found_error', `no route for ${route}`);
    }
    if (!isRecord(body) || !Array.isArray(body.messages)) {
      throw new HttpError(400, 'invalid_request_error', 'body must be a JSON object with a messages array');
    }
    if (path === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: estimateTokens(body) });

    const turn = compaction
      ? summaryTurn(body, compaction.instructions)
      : nextTurn(body, (task, i) => {
          const d = parseScript(task.prompt).directives[i];
          return d?.kind === 'fail' && (failed.get(failKey(task, i)) ?? 0) >= (d.times ?? 1);
        });
    if (turn.kind === 'error' && turn.failIndex !== undefined) {
      const task = currentTask(body.messages)!;
      failed.set(failKey(task, turn.failIndex), (failed.get(failKey(task, turn.failIndex)) ?? 0) + 1);
    }
    if (turn.delayMs > 0) await wait(turn.delayMs);
    if (closing || res.destroyed) return void res.destroy();
    if (turn.kind === 'error') throw new HttpError(turn.status, turn.type, turn.message);

    const msg = assistantMessage(turn.content, {
      model: record.model ?? DEFAULT_MODEL,
      stopReason: turn.stopReason,
      inputTokens: estimateTokens(body),
    });
    sendMessage(res, msg, body.stream === true);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const e = err instanceof HttpError ? err : new HttpError(500, 'api_error', String(err));
      if (res.headersSent || res.destroyed) return void res.destroy();
      sendJson(res, e.status, errorBody(e.type, e.message));
    });
  });

  const host = opts.host ?? '127.0.0.1';
  const port = await listen(server, opts.port ?? 0, host);

  return {
    url: `http://${urlHost(host)}:${port}`,
    port,
    requests,
    close: async () => {
      closing = true;
      for (const done of [...waits]) done();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive sockets of SDK clients would otherwise hold close() open.
      server.closeAllConnections();
      await closed;
    },
  };
}

/** What the server keeps of a request (`requests`), for tests to look at. */
function recordOf(path: string, body: unknown, apiKey: string | undefined, receivedAt: number): RecordedRequest {
  const record: RecordedRequest = {
    path,
    hasTools: isRecord(body) && Array.isArray(body.tools) && body.tools.length > 0,
    lastUserText: isRecord(body) && Array.isArray(body.messages) ? (currentTask(body.messages)?.prompt ?? '') : '',
    system: isRecord(body) ? systemText(body.system) : '',
    tools: isRecord(body) && Array.isArray(body.tools) ? body.tools.map(toolName).filter((n) => n !== '') : [],
    userTexts: isRecord(body) && Array.isArray(body.messages) ? userTexts(body.messages) : [],
    notes: isRecord(body) ? notesOf(body) : [],
    receivedAt,
  };
  if (isRecord(body) && typeof body.model === 'string') record.model = body.model;
  const toolResult = isRecord(body) && Array.isArray(body.messages) ? currentTask(body.messages)?.lastToolResult : undefined;
  if (toolResult !== undefined) record.lastToolResult = toolResult;
  if (apiKey !== undefined) record.apiKey = apiKey;
  const compaction = compactionOf(body);
  if (compaction) record.compaction = compaction;
  return record;
}

/** Answers with the message: as JSON, or as the SSE stream the SDK asks for with `stream`. */
function sendMessage(res: ServerResponse, msg: ReturnType<typeof assistantMessage>, stream: boolean): void {
  if (!stream) return sendJson(res, 200, msg);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': newId('req'),
  });
  for (const event of sseEvents(msg)) res.write(sseFrame(event));
  res.end();
}

/** Listens on host:port (0: any free port); resolves with the port. */
async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

function apiKeyOf(req: IncomingMessage): string | undefined {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string') return key;
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'request_too_large', 'request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(raw: string): unknown {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
  res.end(JSON.stringify(body));
}

// A wildcard listen address is not something a client can connect to.
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  return system.map((b) => (isRecord(b) && typeof b.text === 'string' ? b.text : '')).join('\n');
}

function toolName(tool: unknown): string {
  return isRecord(tool) && typeof tool.name === 'string' ? tool.name : '';
}

/** The system reminders of the user messages' texts, then each tool's description. */
function notesOf(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(m) || m.role !== 'user') continue;
    const blocks: unknown[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    for (const b of blocks) if (isRecord(b) && b.type === 'text' && typeof b.text === 'string') out.push(...reminders(b.text));
  }
  for (const t of Array.isArray(body.tools) ? body.tools : [])
    if (isRecord(t) && typeof t.description === 'string') out.push(`${String(t.name)}: ${t.description}`);
  return out;
}

/** The prompt text of each user message (tool results and reminder-only messages left out). */
function userTexts(messages: unknown[]): string[] {
  return messages
    .filter((m): m is Record<string, unknown> => isRecord(m) && m.role === 'user')
    .map((m) => promptText(m.content))
    .filter((t): t is string => t !== undefined);
}
