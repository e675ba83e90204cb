// Rendering of assistant turns in the Messages API wire format: a JSON body for plain requests,
// and the streaming event sequence (with `event:` lines) that the Claude Code engine accepts.

import { randomBytes } from 'node:crypto';
import type { Block, StopReason } from './script.js';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export type ContentBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AssistantMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason;
  stop_sequence: null;
  usage: Usage;
}

export interface ErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

export type SseEvent = { type: string } & Record<string, unknown>;

export const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

export const errorBody = (type: string, message: string): ErrorBody => ({ type: 'error', error: { type, message } });

/** Gives tool calls ids and sizes the usage so that cost comes out small but positive. */
export function assistantMessage(blocks: readonly Block[], opts: { model: string; stopReason: StopReason; inputTokens: number }): AssistantMessage {
  const content = blocks.map((b): ContentBlock => (b.type === 'text' ? { ...b } : { ...b, id: newId('toolu') }));
  const chars = content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : JSON.stringify(b.input).length), 0);
  return {
    id: newId('msg'),
    type: 'message',
    role: 'assistant',
    model: opts.model,
    content,
    stop_reason: opts.stopReason,
    stop_sequence: null,
    usage: { input_tokens: Math.max(1, opts.inputTokens), output_tokens: Math.max(1, Math.ceil(chars / 4)) },
  };
}

/** The streaming events of `msg`: each block is sent whole, in a single delta. */
export function sseEvents(msg: AssistantMessage): SseEvent[] {
  const events: SseEvent[] = [
    {
      type: 'message_start',
      message: { ...msg, content: [], stop_reason: null, usage: { input_tokens: msg.usage.input_tokens, output_tokens: 1 } },
    },
  ];
  msg.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else {
      // Input arrives only through input_json_delta; the start block carries an empty input.
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({
    type: 'message_delta',
    delta: { stop_reason: msg.stop_reason, stop_sequence: null },
    usage: { output_tokens: msg.usage.output_tokens },
  });
  events.push({ type: 'message_stop' });
  return events;
}

export const sseFrame = (event: SseEvent): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

export const renderSse = (msg: AssistantMessage): string => sseEvents(msg).map(sseFrame).join('');
