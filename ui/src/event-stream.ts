// An agent's events for its page: the recent history, then its WebSocket from the highest seq
// seen, reconnecting after a drop. An agent that is not there (or no longer) ends the stream:
// the history's 404, close codes 4404 and 4410, or a 404 from the agent when a reconnect fails
// (a WebSocket handshake the server refuses shows the page only a bare close, code 1006).

import { useEffect, useState } from 'react';
import { api, ApiFailure, openSocket, q } from './api';
import { taskStateOf } from './task-events';
import type { AgentEvent } from './types';

const HISTORY = 200;
const RECONNECT_MS = 1000;

/** Why the agent's page has nothing more to show: it never was there, or it was deleted. */
export type Gone = 'not-found' | 'deleted';

export interface EventStream {
  events: AgentEvent[];
  live: boolean;
  gone: Gone | undefined;
  /** When (Date.now()) the newest event that set the task's state arrived; 0 before any. */
  stateAt: number;
}

const isNotFound = (err: unknown): boolean => err instanceof ApiFailure && err.status === 404;

export function useEventStream(namespace: string, name: string): EventStream {
  const [state, setState] = useState<{ events: AgentEvent[]; stateAt: number }>({ events: [], stateAt: 0 });
  const [live, setLive] = useState(false);
  const [gone, setGone] = useState<Gone>();
  useEffect(() => {
    const path = `/api/v1/agents/${encodeURIComponent(name)}`;
    let stopped = false;
    let socket: WebSocket | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    /** Whether the agent was seen here (history read, socket opened): a later 404 means deleted. */
    let seen = false;
    const bySeq = new Map<number, AgentEvent>();
    const add = (list: AgentEvent[]): void => {
      const fresh = list.filter((e) => !bySeq.has(e.seq));
      if (!fresh.length) return;
      for (const e of fresh) {
        bySeq.set(e.seq, e);
        last = Math.max(last, e.seq);
      }
      const stateChanged = taskStateOf(fresh) !== undefined;
      const events = [...bySeq.values()].sort((x, y) => x.seq - y.seq);
      setState((s) => ({ events, stateAt: stateChanged ? Date.now() : s.stateAt }));
    };
    const end = (why: Gone): void => {
      stopped = true;
      setLive(false);
      setGone(why);
    };
    const connect = (): void => {
      if (stopped) return;
      socket = openSocket(`${path}/ws${q({ namespace, since: last })}`);
      socket.onopen = () => {
        seen = true;
        setLive(true);
      };
      socket.onmessage = (m) => add([JSON.parse(String(m.data)) as AgentEvent]);
      socket.onclose = (c) => {
        setLive(false);
        if (stopped) return;
        if (c.code === 4410) return end('deleted');
        if (c.code === 4404) return end(seen ? 'deleted' : 'not-found');
        // Anything else (a restart, a dropped network, a refused handshake): ask whether the agent
        // is still there before trying again.
        api('GET', `${path}${q({ namespace })}`).then(
          () => (retry = setTimeout(connect, RECONNECT_MS)),
          (err: unknown) => {
            if (stopped) return;
            if (isNotFound(err)) end(seen ? 'deleted' : 'not-found');
            else retry = setTimeout(connect, RECONNECT_MS);
          },
        );
      };
    };
    setState({ events: [], stateAt: 0 });
    setGone(undefined);
    api<{ events: AgentEvent[] }>('GET', `${path}/events${q({ namespace, limit: HISTORY })}`)
      .then((h) => {
        seen = true;
        add(h.events);
      })
      .then(connect, (err: unknown) => (isNotFound(err) ? end('not-found') : connect()));
    return () => {
      stopped = true;
      clearTimeout(retry);
      socket?.close();
    };
  }, [namespace, name]);
  return { ...state, live, gone };
}
