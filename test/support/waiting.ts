// Waiting in test clients: for a condition that changes when something arrives, with a deadline,
// and for a WebSocket to open.

import WebSocket from 'ws';

/** Wakes everyone waiting for the next change. */
export class Changes {
  private waiters: (() => void)[] = [];

  notify(): void {
    this.waiters.splice(0).forEach((fn) => fn());
  }

  /**
   * Resolves once `done()` holds, re-checking on every notify; rejects with `failure()` when
   * `broken()` holds or `timeoutMs` passes first.
   */
  async until(done: () => boolean, timeoutMs: number, failure: (why: 'timeout' | 'broken') => Error, broken: () => boolean = () => false): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (broken()) throw failure('broken');
      const left = deadline - Date.now();
      if (left <= 0) throw failure('timeout');
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
}

/** Resolves when the socket is open; rejects with the HTTP status when the upgrade is refused. */
export function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ws.readyState === WebSocket.OPEN) return resolve();
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
}

/** Polls `cond` until it holds; fails naming `what` after `timeoutMs` (unit tests: short waits). */
export async function until(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
