// Following an agent's live events (the WebSocket, or the aggregated API's `log?follow=true`
// through kubectl agentplane), resuming after a dropped connection from
// the last event seen (`?since=<seq>`), so nothing is missed or shown twice.

import type { AgentEvent } from '../api/event.js';
import { CliError, EXIT } from './exit-codes.js';
import type { EventSocket, Transport } from './transport.js';

/** The server closes a stream with this when its agent is deleted (KubeTransport says the same). */
export const AGENT_DELETED = 4410;
const RETRIES = 5;

export interface Follow {
  /** Settles when `onEvent` asked to stop or `stop()` was called; rejects when the stream is lost. */
  done: Promise<void>;
  stop(): void;
}

/**
 * Delivers events (each once, in order) until `onEvent` returns true. `since`: replay events
 * after that seq; undefined: from the current task's first event (the server's default).
 */
export function followAgent(client: Transport, namespace: string, name: string, since: number | undefined, onEvent: (ev: AgentEvent) => boolean): Follow {
  let stopped = false;
  let ws: EventSocket | undefined;
  let last = since;
  const stop = (): void => {
    stopped = true;
    ws?.close(1000);
  };
  const done = (async () => {
    let failures = 0;
    while (!stopped) {
      try {
        ws = await client.openEvents(namespace, name, last, (data) => {
          if (stopped) return;
          failures = 0;
          const ev = JSON.parse(data) as AgentEvent;
          if (last !== undefined && ev.seq <= last) return;
          last = ev.seq;
          if (onEvent(ev)) stop();
        });
      } catch (err) {
        // A refusal (404, 401…) is final; a lost server is retried a few times.
        if (!(err instanceof CliError) || err.exitCode !== EXIT.UNREACHABLE || ++failures > RETRIES) throw err;
        await new Promise((r) => setTimeout(r, 300 * failures));
        continue;
      }
      const socket = ws;
      // The replay can arrive with the handshake and hold the end event: then `stop()` ran
      // before this socket was ours to close, and the server keeps it open for live events.
      if (stopped) {
        socket.close(1000);
        return;
      }
      const closed = await new Promise<{ code: number; reason: string }>((resolve) => {
        socket.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
        socket.on('error', () => undefined); // 'close' follows
      });
      if (stopped) return;
      if (closed.code === AGENT_DELETED) {
        throw new CliError(`agent "${name}" was deleted while being followed`, undefined, EXIT.TASK_FAILED);
      }
      if (++failures > RETRIES) {
        throw new CliError(
          `lost the event stream of agent "${name}" (${closed.code}${closed.reason ? ` ${closed.reason}` : ''})`,
          `follow it again with \`agentplane logs -f ${name} -n ${namespace}\``,
          EXIT.TASK_FAILED,
        );
      }
      await new Promise((r) => setTimeout(r, 300 * failures));
    }
  })();
  return { done, stop };
}
