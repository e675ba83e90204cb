// Holds an agent's next model request, for a checkpoint taken in the middle of a task. While the
// engine waits for the model, none of its tools runs and its session is written up to that
// request: a step boundary, where a copy of the workspace is one consistent moment. The proxy
// asks `pass` before it forwards each request; the checkpoint controller asks for a hold, is told
// when a request waits, copies, and releases it (docs/checkpoints.md "Consistency").

import { type ObjectRef, refKey } from '../api/meta.js';

interface Held {
  /** Who wants the agent's turns held, each told when a request waits. */
  holders: Set<() => void>;
  /** Requests waiting: each resolves its own `pass` when let go. */
  waiting: Set<() => void>;
}

export class TurnGate {
  private readonly held = new Map<string, Held>();

  /** Resolves when the request may go on: at once unless held; false when the request was dropped meanwhile. */
  pass(ref: ObjectRef, signal: AbortSignal): Promise<boolean> {
    const h = this.held.get(refKey(ref));
    if (!h || signal.aborted) return Promise.resolve(!signal.aborted);
    return new Promise((resolve) => {
      const go = (): void => {
        signal.removeEventListener('abort', drop);
        resolve(true);
      };
      const drop = (): void => {
        h.waiting.delete(go);
        resolve(false);
      };
      signal.addEventListener('abort', drop, { once: true });
      h.waiting.add(go);
      for (const told of h.holders) told();
    });
  }

  /** Holds the agent's next model requests until `release(ref, onWaiting)`; `onWaiting` is called when one waits. */
  hold(ref: ObjectRef, onWaiting: () => void): void {
    const key = refKey(ref);
    let h = this.held.get(key);
    if (!h) this.held.set(key, (h = { holders: new Set(), waiting: new Set() }));
    h.holders.add(onWaiting);
    if (h.waiting.size) onWaiting();
  }

  /** A request of the agent waits at the gate (its engine runs no tool). */
  isWaiting(ref: ObjectRef): boolean {
    return (this.held.get(refKey(ref))?.waiting.size ?? 0) > 0;
  }

  /** Drops one hold; the last one lets the waiting requests go. */
  release(ref: ObjectRef, onWaiting: () => void): void {
    const key = refKey(ref);
    const h = this.held.get(key);
    if (!h?.holders.delete(onWaiting) || h.holders.size) return;
    this.held.delete(key);
    for (const go of h.waiting) go();
  }
}
