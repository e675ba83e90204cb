// Small React hooks: hash routing and polling.

import { useEffect, useRef, useState } from 'react';

/** The route is the URL's hash (#/agents/team-a/hello): the server serves one page at /ui/. */
export function useRoute(): string[] {
  const read = (): string[] => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = (): void => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  /** When (Date.now()) the request that answered `data` was sent: what it says is at least that new. */
  at: number;
  refresh: () => void;
}

/**
 * Calls `load` now and every `ms` while mounted and `active` (and after `refresh`), keeping the
 * last answer. One call at a time: a slow server is not sent a pile of overlapping requests.
 */
export function usePoll<T>(load: () => Promise<T>, ms: number, deps: unknown[] = [], active = true): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [at, setAt] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const kick = useRef<() => void>(() => {});
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    const tick = async (): Promise<void> => {
      if (running || stopped) return;
      running = true;
      clearTimeout(timer);
      const sent = Date.now();
      try {
        const v = await loadRef.current();
        if (!stopped) {
          setData(v);
          setAt(sent);
          setError(undefined);
        }
      } catch (err) {
        if (!stopped) setError(err as Error);
      } finally {
        running = false;
        if (!stopped) timer = setTimeout(() => void tick(), ms);
      }
    };
    if (!active) return undefined;
    kick.current = () => void tick();
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ms, active, ...deps]);
  return { data, error, at, refresh: () => kick.current() };
}
