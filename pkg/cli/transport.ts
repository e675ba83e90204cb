// What commands talk through: one REST-shaped call and an agent's live event stream. `Client`
// (client.ts) speaks to an agentplane server directly; `KubeTransport` (kube/kube-transport.ts)
// maps the same calls onto the aggregated API through kube-apiserver, so the commands stay the
// same whichever home they reach.

import type { Target } from './config.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface Reply<T> {
  status: number;
  body: T;
}

export interface CallOptions {
  query?: Query;
  body?: unknown;
  accept?: string;
  /** What the request is about (agent, squad…), for the hint of a refusal. */
  kind?: string;
  ns?: string;
}

/** An open event stream: closed by `close()`, or by the other side ('close' with a code). */
export interface EventSocket {
  close(code?: number): void;
  on(event: 'close', fn: (code: number, reason: Buffer) => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
}

export interface Transport {
  readonly target: Target;
  /** One call; 2xx gives the parsed body, anything else throws the server's refusal (a CliError). */
  call<T = unknown>(method: string, path: string, opts?: CallOptions): Promise<Reply<T>>;
  /** Opens an agent's live events (one JSON event per message); resolves once open, rejects with a refusal. */
  openEvents(namespace: string, name: string, since: number | undefined, onMessage: (data: string) => void): Promise<EventSocket>;
}
