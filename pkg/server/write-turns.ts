// Writes take turns between namespaces: kube-apiserver's API Priority and Fairness, in small
// (docs/admission.md "Writes in turn"). The API runs on one event loop; a client that sends 32
// task submissions at once otherwise puts all 32 (and the work each starts) ahead of any other
// request, and a create in another namespace waited 100 ms to 1 s behind a burst of 1,000
// (docs/performance.md "API under load"): every request the loop reads in one poll runs before
// it polls again. Here a few writes start per turn of the loop and the rest wait, one line per
// namespace, for later turns. Nothing is refused: a write waits for its turn (the request timeout
// still applies). Reads are never held: they are served from the cache and cost little.

import type { FastifyInstance } from 'fastify';
import type { Histogram } from 'prom-client';
import { pathOf } from './error-reply.js';
import { underAny } from './path-prefix.js';

/** Writes started per turn of the event loop when the flag is not given. */
export const DEFAULT_WRITES_PER_TURN = 4;

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Turns for writes. At most `perTurn` writes start in one turn of the event loop; the others wait
 * in their namespace's line and start in later turns, a line at a time in rotation. Between two
 * turns the loop reads its sockets again, so a read, or a write of another namespace, never waits
 * behind more than one turn's writes (and what they set off: reconciles, status writes, events).
 */
export class WriteTurns {
  private started = 0;
  private turnScheduled = false;
  /** Waiting writes per flow; the Map's order is the rotation (a served flow goes to the back). */
  private readonly lines = new Map<string, (() => void)[]>();

  constructor(private readonly perTurn: number) {}

  /** Resolves when the write may start: at once while this turn has room and nobody waits, else at its turn. */
  admit(flow: string): Promise<void> | undefined {
    if (this.started < this.perTurn && this.lines.size === 0) {
      this.start();
      return undefined;
    }
    return new Promise((resolve) => {
      let line = this.lines.get(flow);
      if (!line) this.lines.set(flow, (line = []));
      line.push(resolve);
      this.scheduleTurn();
    });
  }

  /** Writes waiting for a turn. */
  get waiting(): number {
    let n = 0;
    for (const line of this.lines.values()) n += line.length;
    return n;
  }

  private start(): void {
    this.started++;
    this.scheduleTurn();
  }

  /** The next turn: after this one's I/O (setImmediate runs once the loop has polled its sockets). */
  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.started = 0;
      while (this.started < this.perTurn && this.lines.size > 0) {
        const [flow, line] = this.lines.entries().next().value as [string, (() => void)[]];
        this.lines.delete(flow);
        const go = line.shift()!;
        if (line.length > 0) this.lines.set(flow, line);
        this.start();
        go();
      }
    });
  }
}

/** The namespace a request names in its path (`/namespaces/{ns}/`) or query (`?namespace=`); REST's default otherwise. */
export function flowOf(url: string): string {
  const inPath = /\/namespaces\/([^/?]+)/.exec(pathOf(url));
  // Undecoded: only equality matters here, and a malformed escape is the route's to refuse.
  if (inPath) return inPath[1];
  const q = url.indexOf('?');
  // URLSearchParams never throws: a malformed escape stays as it is.
  const ns = q >= 0 ? new URLSearchParams(url.slice(q + 1)).get('namespace') : null;
  return ns || 'default';
}

export interface WriteTurnsOptions {
  /** Writes started per turn; 0 turns the rotation off. */
  perTurn: number;
  /** Paths (and what is under them) never held: the workers' own channels. */
  exemptPaths?: string[];
  /** Observes how long each write waited for its turn. */
  wait?: Histogram<string>;
}

/** Adds the hook to `app` (the root instance, before any route). */
export function installWriteTurns(app: FastifyInstance, opts: WriteTurnsOptions): WriteTurns | undefined {
  if (!(opts.perTurn > 0)) return undefined;
  const turns = new WriteTurns(opts.perTurn);
  const exempt = opts.exemptPaths ?? [];
  app.addHook('onRequest', async (req) => {
    if (!WRITES.has(req.method)) return;
    const path = pathOf(req.url);
    if (underAny(path, exempt)) return;
    const t = performance.now();
    await turns.admit(flowOf(req.url));
    opts.wait?.observe((performance.now() - t) / 1000);
  });
  return turns;
}
