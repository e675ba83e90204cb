// The engine's compaction request (its `/compact`, or its own when the context fills up): the
// conversation so far plus the engine's instruction to summarise it, sent with the tools so the
// request shares the conversation's cache. A script's next directive would answer it with a
// tool call, which the engine refuses as a summary; it is answered with a summary instead, and
// the script goes on where it was.

import { currentTask, isRecord, proseOf, type Turn } from './script.js';

/** The engine's words that make a request a compaction (its summary prompt). */
const SUMMARY_PROMPT = /create a detailed summary of the conversation so far/i;
/** Where the engine puts the instructions given to `/compact <instructions>`. */
const INSTRUCTIONS = /Additional Instructions:\s*\n([\s\S]*?)(?:\n\s*\n|$)/;

/** A compaction request's instructions ('' for none); undefined for any other request. */
export function compactionOf(body: unknown): { instructions: string } | undefined {
  if (!isRecord(body) || !Array.isArray(body.messages)) return undefined;
  const last: unknown = body.messages.at(-1);
  if (!isRecord(last) || last.role !== 'user') return undefined;
  const blocks: unknown[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : Array.isArray(last.content) ? last.content : [];
  for (const b of blocks) {
    if (!isRecord(b) || b.type !== 'text' || typeof b.text !== 'string' || !SUMMARY_PROMPT.test(b.text)) continue;
    return { instructions: INSTRUCTIONS.exec(b.text)?.[1]?.trim() ?? '' };
  }
  return undefined;
}

/**
 * The summary the engine asked for, in its format (<analysis> then <summary>). It names the task
 * in prose only: a directive in it would play again when the session continues from it.
 */
export function summaryTurn(body: unknown, instructions: string): Turn {
  const messages: unknown[] = isRecord(body) && Array.isArray(body.messages) ? body.messages : [];
  const task = proseOf(currentTask(withoutSummaryPrompt(messages))?.prompt ?? '').split('\n')[0] || '(a scripted task)';
  const text = [
    '<analysis>The scripted model summarises without analysis.</analysis>',
    '<summary>',
    `1. Primary Request and Intent: ${task}`,
    ...(instructions ? [`2. Summary instructions followed: ${instructions}`] : []),
    '</summary>',
  ].join('\n');
  return { kind: 'message', content: [{ type: 'text', text }], stopReason: 'end_turn', delayMs: 0 };
}

/** The conversation as it was before the engine added its summary prompt to the last message. */
function withoutSummaryPrompt(messages: unknown[]): unknown[] {
  const last = messages.at(-1);
  if (!isRecord(last)) return messages;
  const blocks: unknown[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : Array.isArray(last.content) ? last.content : [];
  const kept = blocks.filter((b) => !(isRecord(b) && b.type === 'text' && typeof b.text === 'string' && SUMMARY_PROMPT.test(b.text)));
  return kept.length ? [...messages.slice(0, -1), { ...last, content: kept }] : messages.slice(0, -1);
}
