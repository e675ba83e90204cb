// Keeps one of the credential mirror's Secret caches (a ListWatch) running: the library
// restarts a watch the server ended, but not one that failed (a refused connection, an API
// server restart), so this does, with backoff.

import type { ListWatch, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../pkg/plugin/types.js';

const MAX_BACKOFF_MS = 30_000;

export interface WatchKeeping {
  log: Logger;
  /** True once the mirror stopped: nothing is restarted after. */
  stopped(): boolean;
  /** True once the cache `what` has listed (its cache is whole). */
  listed(what: string): boolean;
  /** Resolves after `ms`; cancelled timers are the caller's to clear when it stops. */
  wait(ms: number): Promise<void>;
  /** A failure as it may be logged (no value in it). */
  describe(err: unknown): string;
}

/**
 * Starts the ListWatch and keeps it running. Resolves true once it has listed, false if stopped
 * before.
 */
export async function keepWatching(inf: ListWatch<V1Secret>, what: string, k: WatchKeeping): Promise<boolean> {
  let backoff = 0;
  let lastFailure = 0;
  /** The next wait: doubling from 0.5 s to 30 s while failures follow each other, 0.5 s after a healthy minute. */
  const nextBackoff = (): number => {
    const now = Date.now();
    backoff = now - lastFailure > 60_000 ? 500 : Math.min(backoff * 2, MAX_BACKOFF_MS);
    lastFailure = now;
    return backoff;
  };
  const restartAfter = (err: unknown): void => {
    const ms = nextBackoff();
    k.log.warn({ watch: what, err: k.describe(err), retryInMs: ms }, 'Secret watch failed; restarting');
    void k.wait(ms).then(() => {
      if (!k.stopped()) void inf.start();
    });
  };
  // Until the first list, the loop below retries; afterwards every failure restarts the watch.
  let initial = true;
  let initialErr: unknown;
  inf.on('error', (err: unknown) => {
    if (k.stopped()) return;
    if (initial) initialErr = err ?? new Error('watch failed');
    else restartAfter(err);
  });
  while (!k.stopped()) {
    initialErr = undefined;
    await inf.start();
    if (k.stopped()) break;
    if (k.listed(what)) {
      initial = false;
      // Listed, but the watch after it failed: restart it like any later failure.
      if (initialErr !== undefined) restartAfter(initialErr);
      return true;
    }
    const ms = nextBackoff();
    k.log.warn({ watch: what, err: k.describe(initialErr), retryInMs: ms }, 'cannot list Secrets; retrying');
    await k.wait(ms);
  }
  return false;
}
