// Stream entries <-> AgentEvents. An entry's id is `<seq>-0`; its fields are t (task), y (type),
// ts (timestamp) and p (the payload as JSON). Namespace and name come from the stream ref, as
// the key already says them.

import type { AgentEvent, EventType } from '../../pkg/api/event.js';
import type { StreamRef } from '../../pkg/plugin/types.js';

/** An entry as Redis (RESP2) returns it from XRANGE, XREVRANGE and XREAD: [id, [field, value, ...]]. */
export type RawEntry = [string, string[]];

/** The seq of an entry id `<seq>-0`. */
export const seqOf = (id: string): number => Number(id.slice(0, id.indexOf('-')));

/** The entry id of a seq. */
export const idOf = (seq: number): string => `${seq}-0`;

export function toEvent(stream: StreamRef, [id, fields]: RawEntry): AgentEvent {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]] = fields[i + 1]!;
  return {
    seq: seqOf(id),
    agentName: stream.name,
    namespace: stream.namespace,
    task: Number(f.t ?? 0),
    type: f.y as EventType,
    timestamp: f.ts ?? '',
    payload: JSON.parse(f.p ?? '{}') as AgentEvent['payload'],
  };
}
