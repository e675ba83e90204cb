// A Kubernetes watch that cannot hang, for the credential mirror's Secret caches.

import { Watch } from '@kubernetes/client-node';

/**
 * A watch that cannot hang: the server ends it after a random 5 to 10 minutes (as client-go
 * asks), with bookmarks in between, and one silent for longer than that (a connection that died
 * without a reset) is aborted here, so the ListWatch's cache is never silently stale for long.
 */
export class BoundedWatch extends Watch {
  override async watch(
    path: string,
    params: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, obj: unknown, raw?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    // Set once the watch is open, but read by the timer before then: a const would still be in
    // its temporal dead zone when an early event arms the timer.
    // eslint-disable-next-line prefer-const -- see above
    let ctl: AbortController | undefined;
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => ctl?.abort(), (timeoutSeconds + 60) * 1000);
      timer.unref();
    };
    ctl = await super.watch(
      path,
      { ...params, timeoutSeconds, allowWatchBookmarks: true },
      (phase, obj, raw) => {
        arm();
        callback(phase, obj, raw);
      },
      (err) => {
        clearTimeout(timer);
        done(err);
      },
    );
    if (!ctl.signal.aborted) arm();
    return ctl;
  }
}
