// Redis key names of the event store. Every key of one agent name shares a Redis Cluster hash
// tag, `{<namespace>/<name>}`, so the append script's keys live in one slot. Namespace, name and
// uid are escaped so that no two refs map to one key: every byte outside [A-Za-z0-9._-] becomes
// %XX (so ':', '/', '{', '}' and '%' itself never appear raw). Kubernetes names pass unchanged.

import type { StreamRef } from '../../pkg/plugin/types.js';

/** Percent-encodes every character outside [A-Za-z0-9._-] (UTF-8 bytes, upper-case hex). */
export function escapeKeyPart(s: string): string {
  return Array.from(Buffer.from(s, 'utf8'), (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9._-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

export interface StreamKeys {
  /** The name's seq counter: INCR'd per append, outlives deleteStream (a seq never repeats). */
  counter: string;
  /** The agent's events: a Redis Stream whose entry ids are `<seq>-0`. */
  events: string;
  /** Hash task -> first seq of the task (taskStart). */
  taskFirst: string;
  /** Sorted set of tasks scored by their last seq: tasks whose events are all trimmed are forgotten. */
  taskLast: string;
}

export function streamKeys(prefix: string, s: StreamRef): StreamKeys {
  const tag = `${prefix}:{${escapeKeyPart(s.namespace)}/${escapeKeyPart(s.name)}}`;
  const uid = escapeKeyPart(s.uid);
  return {
    counter: `${tag}:seq`,
    events: `${tag}:${uid}:events`,
    taskFirst: `${tag}:${uid}:task-first`,
    taskLast: `${tag}:${uid}:task-last`,
  };
}

/** A key prefix must not open or close a hash tag, nor be empty. */
export function checkKeyPrefix(prefix: string): string {
  if (!prefix || /[{}\s]/.test(prefix)) throw new Error(`keyPrefix ${JSON.stringify(prefix)}: must be non-empty, without braces or spaces`);
  return prefix;
}
