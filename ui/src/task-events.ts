// What the agent page reads from the events it already has: the task's state (so the header
// follows the stream, not a poll), each tool call folded with its result and closed when its
// task ends without one, and the last task end (the workspace is read again then).

import type { AgentEvent } from './types';

/** The types that end a task (pkg/api/event.ts TERMINAL_EVENT_TYPES). */
const TERMINAL = new Set(['task_completed', 'task_cancelled', 'error']);
export const isTaskEnd = (e: AgentEvent): boolean => TERMINAL.has(e.type);

/** The task states the events give, as the agent's taskStatus names them. */
const TASK_STATUS: Record<string, string> = {
  task_started: 'InProgress',
  task_completed: 'Complete',
  task_cancelled: 'Cancelled',
  error: 'Error',
};

/** The newest event that set the task's state, with that state; undefined before any. */
export function taskStateOf(events: readonly AgentEvent[]): { event: AgentEvent; taskStatus: string } | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    const s = TASK_STATUS[e.type];
    if (s) return { event: e, taskStatus: s };
  }
  return undefined;
}

/** The seq of the newest task end, 0 before any. */
export function lastTaskEnd(events: readonly AgentEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) if (isTaskEnd(events[i]!)) return events[i]!.seq;
  return 0;
}

/**
 * A tool call's state: its result's, or while it has none, `running` until its task ends, then
 * `cancelled` (the task was) or `ended` (it completed or failed without this call's result).
 */
export type ToolState = 'running' | 'ok' | 'error' | 'cancelled' | 'ended';

export type Row = { kind: 'event'; e: AgentEvent } | { kind: 'tool'; call: AgentEvent; result?: AgentEvent; state: ToolState };

/**
 * Events in order, each tool call and its result folded into one row. `over`: no task of the
 * agent runs any more (it was deleted), so no call is still running either.
 */
export function foldRows(events: readonly AgentEvent[], over = false): Row[] {
  const out: Row[] = [];
  const calls = new Map<string, Row & { kind: 'tool' }>();
  /** How each task ended, by task number. */
  const ends = new Map<number, string>();
  let newestTask = 0;
  const key = (e: AgentEvent): string => `${e.task}/${String(e.payload.id)}`;
  for (const e of events) {
    newestTask = Math.max(newestTask, e.task);
    if (isTaskEnd(e)) ends.set(e.task, e.type);
    if (e.type === 'tool_call') {
      const row = { kind: 'tool' as const, call: e, state: 'running' as ToolState };
      calls.set(key(e), row);
      out.push(row);
    } else if (e.type === 'tool_result' && calls.has(key(e))) {
      const row = calls.get(key(e))!;
      row.result = e;
      row.state = e.payload.isError ? 'error' : 'ok';
    } else out.push({ kind: 'event', e });
  }
  // A call without a result is over once its task is: ended, followed by a later task (the end
  // may be older than the history the page read), or its agent gone.
  for (const row of calls.values()) {
    if (row.result) continue;
    const end = ends.get(row.call.task);
    if (end) row.state = end === 'task_cancelled' ? 'cancelled' : 'ended';
    else if (over || row.call.task < newestTask) row.state = 'ended';
  }
  return out;
}
