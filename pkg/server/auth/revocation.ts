// Revocation of credentials that long-lived connections were opened with. A request is
// authenticated once, when it arrives; a WebSocket, a watch or a `log?follow=true` stream then
// lives on. When its credential stops being good (removed from the token file or given another
// scope on a reload, an OIDC token past its `exp`), the connection must end too, not only the
// next request: the filter (filter.ts) ends streamed responses, and the event WebSocket closes
// with REVOKED_CLOSE.

/** Tells listeners once that a credential is no longer good; `reason` is safe to show the client. */
export interface Revocable {
  /** Calls `fn` once when the credential is revoked; returns a function that stops listening. */
  onRevoked(fn: (reason: string) => void): () => void;
}

/** The WebSocket close code (with the reason the Revocable gave) for a revoked credential. */
export const REVOKED_CLOSE_CODE = 4401;
export const TOKEN_REVOKED = 'token revoked';
export const TOKEN_EXPIRED = 'token expired';

/**
 * Listeners keyed by credential: `check` asks each credential whether it is still good, and fires
 * (once, then forgets) the listeners of those that are not. The token file calls it on every
 * reload.
 */
export class RevocationList<K> {
  private readonly listeners = new Map<K, Set<(reason: string) => void>>();

  /** A Revocable for `key`, whose listeners `check` fires. */
  revocable(key: K): Revocable {
    return {
      onRevoked: (fn) => {
        const set = this.listeners.get(key) ?? new Set<(reason: string) => void>();
        this.listeners.set(key, set);
        // Its own function, so the same `fn` given twice is two listeners.
        const listener = (reason: string): void => fn(reason);
        set.add(listener);
        return () => {
          set.delete(listener);
          if (!set.size && this.listeners.get(key) === set) this.listeners.delete(key);
        };
      },
    };
  }

  /** Fires the listeners of every key `stillGood` refuses. */
  check(stillGood: (key: K) => boolean, reason: string): void {
    for (const [key, set] of [...this.listeners]) {
      if (stillGood(key)) continue;
      this.listeners.delete(key);
      for (const fn of set) fn(reason);
    }
  }

  /** Listeners waiting, for tests (nothing may leak per request). */
  get size(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }
}

/** Longest single timer Node allows (about 24.8 days); longer waits are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A Revocable that fires at `expiresAtMs` (epoch ms). */
export function expiringAt(expiresAtMs: number, now: () => number = Date.now): Revocable {
  return {
    onRevoked: (fn) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      const fire = (reason: string): void => {
        if (done) return;
        stop();
        fn(reason);
      };
      const arm = (): void => {
        const left = expiresAtMs - now();
        if (left <= 0) return fire(TOKEN_EXPIRED);
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
        timer.unref();
      };
      const stop = (): void => {
        done = true;
        if (timer) clearTimeout(timer);
      };
      arm();
      return stop;
    },
  };
}

/** Revoked when either is: the first to fire wins and stops listening to the other. */
export function either(a: Revocable, b: Revocable): Revocable {
  return {
    onRevoked: (fn) => {
      let done = false;
      const offs: (() => void)[] = [];
      const stop = (): void => {
        done = true;
        offs.forEach((off) => off());
      };
      const fire = (reason: string): void => {
        if (done) return;
        stop();
        fn(reason);
      };
      offs.push(a.onRevoked(fire), b.onRevoked(fire));
      if (done) stop();
      return stop;
    },
  };
}
