// The order of a namespace's line of queued agents (docs/admission.md): one rule, read by the
// controller that admits them and by the reads that show each its position.

import { type Agent, QUEUED, WORKER_READY } from './agent.js';
import { type Condition, findCondition, setCondition } from './condition.js';

/** WorkerReady's reason while an agent waits for admission of its worker. */
export const WORKER_QUEUED = 'Queued';

/**
 * The conditions of an agent waiting in its namespace's line: Queued True (its transition time,
 * when it lined up, keeps its place) and, when it waits for a worker, WorkerReady False with
 * reason Queued. Written by the agent controller, and by admission when the write that gives an
 * agent a task finds a cap on workers already reached (registry/admission/agent-line.ts).
 */
export function queuedConditions(conditions: Condition[], reason: string, message: string, forWorker: boolean): Condition[] {
  const out = setCondition(conditions, { type: QUEUED, status: 'True', reason, message });
  return forWorker ? setCondition(out, { type: WORKER_READY, status: 'False', reason: WORKER_QUEUED, message }) : out;
}

/** An agent waiting for admission; `key` is its refKey. */
export interface Waiter {
  key: string;
  namespace: string;
  priority: number;
  /** When it lined up (ISO time; its Queued condition's lastTransitionTime once written). */
  since: string;
}

/** Line order: priority (higher first), then who lined up first, then the name. */
export function lineOrder(a: Waiter, b: Waiter): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.since !== b.since) return a.since < b.since ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** The agent as a waiter: its stored Queued time keeps its place; without one it lines up `now`. */
export function waiterOf(a: Agent, now = (): string => new Date().toISOString()): Waiter {
  const q = findCondition(a.status.conditions, QUEUED);
  return {
    key: `${a.metadata.namespace}/${a.metadata.name}`,
    namespace: a.metadata.namespace,
    priority: a.spec.priority ?? 0,
    since: q?.status === 'True' ? q.lastTransitionTime : now(),
  };
}

/**
 * `items` with `status.queue.position` set on each Queued agent (copies; the rest as they are):
 * its place among its namespace's Queued agents in `all`, 1 going next.
 */
export function withQueuePositions(items: Agent[], all: (namespace: string) => Agent[]): Agent[] {
  return queuePositions(all, () => NaN)(items);
}

/**
 * `withQueuePositions` for a source that says when it changed: each namespace's line is sorted
 * once per `version` of `all` (an informer's resourceVersion), not once per read. A GET of one
 * queued agent otherwise sorted its whole namespace's line: with 200 agents waiting, the
 * costliest function of the API process (bench/loop-profile.ts; docs/performance.md).
 */
export function queuePositions(all: (namespace: string) => Agent[], version: () => number): (items: Agent[]) => Agent[] {
  let at = NaN;
  const lines = new Map<string, Map<string, number>>();
  const lineOf = (ns: string): Map<string, number> => {
    let line = lines.get(ns);
    if (!line) {
      const sorted = all(ns)
        .filter((a) => a.status.status === 'Queued')
        .map((a) => waiterOf(a))
        .sort(lineOrder);
      line = new Map(sorted.map((w, i) => [w.key, i + 1]));
      lines.set(ns, line);
    }
    return line;
  };
  return (items) => {
    const v = version();
    // NaN (no version) never equals itself: every read sorts afresh.
    if (v !== at) {
      lines.clear();
      at = v;
    }
    return items.map((a) => {
      if (a.status.status !== 'Queued') return a;
      const position = lineOf(a.metadata.namespace).get(`${a.metadata.namespace}/${a.metadata.name}`);
      return position ? { ...a, status: { ...a.status, queue: { position } } } : a;
    });
  };
}
