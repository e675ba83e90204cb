// @kubernetes/client-node's informer stops on a watch error (an API server restart, a dropped
// connection); this restarts it with a capped backoff, so the caches it feeds stay live.

import type { Informer, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../../observability/logger.js';

const MAX_BACKOFF_MS = 5_000;

/** Starts `informer` (resolves after its first list) and keeps it running; returns its stop. */
export async function restartOnError<T extends KubernetesObject>(informer: Informer<T>, logger: Logger, what: string): Promise<() => void> {
  let stopped = false;
  let backoff = 250;
  let timer: NodeJS.Timeout | undefined;
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    logger.warn({ err: err instanceof Error ? err.message : String(err), retryMs: backoff }, `watch of ${what} failed; restarting`);
    timer = setTimeout(() => {
      if (stopped) return;
      informer.start().catch(() => undefined);
    }, backoff);
    timer.unref();
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  });
  informer.on('connect', () => {
    backoff = 250;
  });
  await informer.start();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    void informer.stop();
  };
}
