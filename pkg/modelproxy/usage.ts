// Token counting from the model's responses as they pass through the proxy: a JSON body's
// `usage`, or the `usage` of a stream's `message_start` and `message_delta` events. The tap
// reads a copy of each chunk before the chunk is forwarded; it never holds bytes back.

import { StringDecoder } from 'node:string_decoder';
import type { TokenUsage } from '../api/event.js';

export type { TokenUsage };

export const emptyUsage = (): TokenUsage => ({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });

export const USAGE_KINDS = {
  input: 'input_tokens',
  output: 'output_tokens',
  cache_read: 'cache_read_input_tokens',
  cache_creation: 'cache_creation_input_tokens',
} as const satisfies Record<string, keyof TokenUsage>;

/**
 * US dollars per million tokens of each kind at most, over every Claude model (Opus 4's rates;
 * cache writes at the 1-hour rate). Worker-reported costs are capped by what the metered tokens
 * could have cost at these rates (costCeiling): the engine's own estimate stays (it knows the
 * model's real rates) but cannot claim more than the proxy saw.
 */
const MAX_USD_PER_MTOK: TokenUsage = { input_tokens: 15, output_tokens: 75, cache_read_input_tokens: 1.5, cache_creation_input_tokens: 30 };

/** The most `usage` could have cost, in US dollars; 0 when nothing was metered. */
export function costCeiling(usage: TokenUsage | undefined): number {
  if (!usage) return 0;
  let usd = 0;
  for (const key of Object.values(USAGE_KINDS)) usd += (usage[key] * MAX_USD_PER_MTOK[key]) / 1e6;
  return usd;
}

/** A JSON body larger than this is forwarded but not counted. */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

/**
 * Reads usage out of one response; calls `done(model, usage)` at most once. `push` and `end`
 * return what `done` returned (a report in flight) when they called it, so the caller can hold
 * that chunk back until it settles.
 */
export class UsageTap {
  private readonly sse: boolean;
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private jsonChunks: Buffer[] = [];
  private jsonBytes = 0;
  private model = '';
  private usage: Partial<TokenUsage> | undefined;
  private reported = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    contentType: string | undefined,
    private readonly done: (model: string, usage: TokenUsage) => void | Promise<void>,
  ) {
    this.sse = (contentType ?? '').includes('text/event-stream');
  }

  /** Looks at a chunk about to be forwarded. */
  push(chunk: Buffer): Promise<void> | undefined {
    if (this.reported) return undefined;
    if (!this.sse) {
      this.jsonBytes += chunk.length;
      if (this.jsonBytes <= MAX_JSON_BYTES) this.jsonChunks.push(chunk);
      return undefined;
    }
    const text = this.partial + this.decoder.write(chunk);
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line);
    return this.pending();
  }

  /** The response ended. */
  end(): Promise<void> | undefined {
    if (this.reported) return undefined;
    if (!this.sse) {
      if (this.jsonBytes > MAX_JSON_BYTES) return undefined;
      const body = parse(Buffer.concat(this.jsonChunks).toString('utf8'));
      this.jsonChunks = [];
      if (isRecord(body) && isRecord(body.usage)) {
        this.model = typeof body.model === 'string' ? body.model : '';
        this.merge(body.usage);
      }
    } else if (this.partial) {
      this.line(this.partial);
    }
    this.report();
    return this.pending();
  }

  /** The report `done` returned, once: the chunk that completed the usage waits for it. */
  private pending(): Promise<void> | undefined {
    const p = this.inFlight;
    this.inFlight = undefined;
    return p;
  }

  private line(line: string): void {
    if (!line.startsWith('data:')) return;
    // Only two event types carry usage; skip parsing the rest (the text deltas).
    const isStart = line.includes('"message_start"');
    if (!isStart && !line.includes('"message_delta"')) return;
    const ev = parse(line.slice(5));
    if (!isRecord(ev)) return;
    if (ev.type === 'message_start' && isRecord(ev.message)) {
      if (typeof ev.message.model === 'string') this.model = ev.message.model;
      if (isRecord(ev.message.usage)) this.merge(ev.message.usage);
    } else if (ev.type === 'message_delta' && isRecord(ev.usage)) {
      // Cumulative counts: the delta's output_tokens replaces the start's placeholder.
      this.merge(ev.usage);
      this.report(); // counted before the final bytes reach the engine
    }
  }

  private merge(u: Record<string, unknown>): void {
    this.usage ??= {};
    for (const key of Object.values(USAGE_KINDS)) {
      const v = u[key];
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) this.usage[key] = v;
    }
  }

  private report(): void {
    if (this.reported || !this.usage) return;
    this.reported = true;
    const r = this.done(this.model || 'unknown', { ...emptyUsage(), ...this.usage });
    // A report that fails is the reporter's to log; the response goes on either way.
    if (r) this.inFlight = r.catch(() => undefined);
  }
}

export function addUsage(into: TokenUsage, u: TokenUsage): void {
  for (const key of Object.values(USAGE_KINDS)) into[key] += u[key];
}

function parse(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
