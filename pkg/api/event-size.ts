// The size cap of one event (MAX_EVENT_BYTES, docs/decisions.md "Limits"). An event is a record of
// what the engine did, not the engine's own data (the engine keeps its tool results whole), so an
// oversized one is cut rather than refused: its longest strings are shortened, each ending with a
// marker that says how much was cut, until the payload fits. The event, and a task's end with
// it, is still stored and the task goes on.

import type { EventDraft } from './event.js';

export const TRUNCATED_MARKER = '… [truncated by agentplane: the event was over its size limit]';

/** The payload's size as stored (UTF-8 JSON). */
export const payloadBytes = (payload: unknown): number => Buffer.byteLength(JSON.stringify(payload) ?? '');

/** `draft` as is when its payload fits in `maxBytes`, else a copy with its longest strings cut to fit. */
export function capEventSize<D extends EventDraft>(draft: D, maxBytes: number): D {
  let size = payloadBytes(draft.payload);
  if (size <= maxBytes) return draft;
  const payload = structuredClone(draft.payload) as unknown;
  // Cut the longest string first; a payload of many long strings takes a few rounds.
  for (let round = 0; round < 64 && size > maxBytes; round++) {
    const longest = longestString(payload);
    if (!longest || longest.get().length <= TRUNCATED_MARKER.length) break;
    const value = longest.get();
    const cut = value.endsWith(TRUNCATED_MARKER);
    const base = cut ? value.slice(0, -TRUNCATED_MARKER.length) : value;
    // A character costs at least one byte (JSON escapes up to 6): cutting as many characters as
    // bytes are over may not be enough, so measure again and cut again.
    const keep = Math.max(0, base.length - (size - maxBytes) - (cut ? 0 : TRUNCATED_MARKER.length));
    longest.set(base.slice(0, keep) + TRUNCATED_MARKER);
    size = payloadBytes(payload);
  }
  return { ...draft, payload };
}

interface Slot {
  get(): string;
  set(v: string): void;
}

/** The longest string in a JSON value, with a way to replace it. */
function longestString(root: unknown): Slot | undefined {
  let best: Slot | undefined;
  let bestLength = -1;
  const visit = (holder: Record<string, unknown> | unknown[], key: string | number): void => {
    const v = (holder as Record<string | number, unknown>)[key];
    if (typeof v === 'string') {
      if (v.length > bestLength) {
        bestLength = v.length;
        best = { get: () => v, set: (s) => void ((holder as Record<string | number, unknown>)[key] = s) };
      }
    } else if (Array.isArray(v)) v.forEach((_, i) => visit(v, i));
    else if (typeof v === 'object' && v !== null) for (const k of Object.keys(v)) visit(v as Record<string, unknown>, k);
  };
  visit({ root }, 'root');
  return best;
}
