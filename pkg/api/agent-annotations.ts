// Requests kept on an agent as annotations, which the agent controller acts on: a cancel, the
// follow-ups (steering and compaction) and the idle timeout. Any API and any replica can make
// them; they live in the object, so they survive a restart.

import type { Agent } from './agent.js';
import type { Cause } from './errors.js';

/**
 * The W3C traceparent of the request that assigned the agent's current task (docs/tracing.md),
 * set by the write that assigns it when tracing is on: the controller and the worker continue
 * that trace, on any replica and after a restart. Removed by a task assigned with tracing off.
 */
export const TRACEPARENT_ANNOTATION = 'agentplane.io/traceparent';

/**
 * A request to cancel the agent's task, kept on the agent as `kubectl rollout restart` keeps its
 * request: an annotation naming the task, which the agent controller acts on. Any API and any
 * replica can make it; asking twice is the same as asking once.
 */
export const CANCEL_TASK_ANNOTATION = 'agentplane.io/cancel-task';
export const CANCEL_REASON_ANNOTATION = 'agentplane.io/cancel-reason';

export function requestCancel(a: Agent, reason: string): void {
  a.metadata.annotations = { ...a.metadata.annotations, [CANCEL_TASK_ANNOTATION]: String(a.spec.task), [CANCEL_REASON_ANNOTATION]: reason };
}

/**
 * Follow-ups for the running task that a replica which cannot reach the agent's worker (it does
 * not lead) stored on the agent, as a cancel is: the leader hands them over in order and removes
 * each once the worker took it. JSON: `{"task": <spec.task>, "items": [{"id", "content"}]}`;
 * items of another task are stale and ignored.
 */
export const FOLLOW_UPS_ANNOTATION = 'agentplane.io/follow-ups';

export interface FollowUp {
  id: string;
  /** The follow-up's words; for a compaction request, its instructions ('' for none). */
  content: string;
  /** A compaction request (POST …/compact), handed over in order with the follow-ups. */
  compact?: boolean;
}

function isFollowUp(f: unknown): f is FollowUp {
  const o = f as Partial<FollowUp> | null | undefined;
  return typeof o?.id === 'string' && typeof o?.content === 'string';
}

/** The follow-ups waiting for the current task, oldest first (none for a malformed annotation). */
export function pendingFollowUps(a: Agent): FollowUp[] {
  const raw = a.metadata.annotations?.[FOLLOW_UPS_ANNOTATION];
  if (!raw) return [];
  try {
    const v = JSON.parse(raw) as { task?: unknown; items?: unknown };
    if (v?.task !== a.spec.task || !Array.isArray(v.items)) return [];
    return (v.items as unknown[]).filter(isFollowUp);
  } catch {
    return [];
  }
}

function setFollowUps(a: Agent, items: FollowUp[]): void {
  const annotations = { ...a.metadata.annotations };
  if (items.length) annotations[FOLLOW_UPS_ANNOTATION] = JSON.stringify({ task: a.spec.task, items });
  else delete annotations[FOLLOW_UPS_ANNOTATION];
  a.metadata.annotations = annotations;
}

export function requestFollowUp(a: Agent, f: FollowUp): void {
  setFollowUps(a, [...pendingFollowUps(a), f]);
}

export function dropFollowUp(a: Agent, id: string): void {
  setFollowUps(
    a,
    pendingFollowUps(a).filter((f) => f.id !== id),
  );
}

/** The cancel request for the agent's current task, if one stands. */
export function cancelRequested(a: Agent): { reason: string } | undefined {
  const ann = a.metadata.annotations ?? {};
  if (ann[CANCEL_TASK_ANNOTATION] !== String(a.spec.task)) return undefined;
  return { reason: ann[CANCEL_REASON_ANNOTATION] || 'cancelled by request' };
}

/**
 * The agent's own idle timeout in seconds ("0": never), instead of the server's `--idle-timeout`:
 * how long its worker and engine stay up without a task. Set it with `kubectl annotate`.
 */
export const IDLE_TIMEOUT_ANNOTATION = 'agentplane.io/idle-timeout';
const IDLE_TIMEOUT_RE = /^\d{1,7}(\.\d{1,3})?$/;

/** The agent's idle timeout in ms from its annotation; undefined when it has none (or a bad one). */
export function idleTimeoutOf(a: Agent): number | undefined {
  const v = a.metadata.annotations?.[IDLE_TIMEOUT_ANNOTATION];
  return v !== undefined && IDLE_TIMEOUT_RE.test(v) ? Math.round(Number(v) * 1000) : undefined;
}

export function validateIdleTimeoutAnnotation(a: Agent): Cause[] {
  const v = a.metadata.annotations?.[IDLE_TIMEOUT_ANNOTATION];
  if (v === undefined || IDLE_TIMEOUT_RE.test(v)) return [];
  return [
    {
      field: `metadata.annotations[${IDLE_TIMEOUT_ANNOTATION}]`,
      message: `must be a number of seconds such as "600" or "0.5" ("0": never release the idle worker), got "${v}"`,
    },
  ];
}

/**
 * The task to hand to a new worker again: its worker ended with the service (the embedded home's
 * workers do) while a tool call waited for approval, so the task is not interrupted but run
 * again, carrying its approvals: the repeated call takes the approval it had (docs/approvals.md).
 * Written by crash recovery, removed once the task is handed over.
 */
export const RERUN_TASK_ANNOTATION = 'agentplane.io/rerun-task';

export const rerunRequested = (a: Agent): boolean => a.metadata.annotations?.[RERUN_TASK_ANNOTATION] === String(a.spec.task);

export function setRerun(a: Agent, on: boolean): void {
  const annotations = { ...a.metadata.annotations };
  if (on) annotations[RERUN_TASK_ANNOTATION] = String(a.spec.task);
  else delete annotations[RERUN_TASK_ANNOTATION];
  a.metadata.annotations = annotations;
}
