// The manager, as controller-runtime's: the service is a list of runnables (stores, the runtime,
// informers, controllers, listeners) started in the order they were added and stopped in reverse,
// each once. A start that fails stops what had started and reports which runnable failed.

import type { Logger } from '../observability/logger.js';

export interface Runnable {
  name: string;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export class StartError extends Error {
  constructor(
    readonly runnable: string,
    override readonly cause: unknown,
  ) {
    super(`${runnable}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'StartError';
  }
}

export class Manager {
  private readonly runnables: Runnable[] = [];
  private readonly started: Runnable[] = [];
  /** Index of the first runnable not started yet. */
  private next = 0;
  private stopping?: Promise<void>;

  constructor(private readonly logger: Logger) {}

  /** Adds a runnable; returns it, so wiring reads top to bottom. */
  add<R extends Runnable>(r: R): R {
    this.runnables.push(r);
    return r;
  }

  /** Something to stop at shutdown that has no start of its own (an open file, a child). */
  onStop(name: string, stop: () => Promise<void> | void): void {
    this.add({ name, stop });
  }

  /** Starts everything added so far, in order; runnables added later are started by a later call. */
  async start(): Promise<void> {
    while (this.next < this.runnables.length) {
      const r = this.runnables[this.next++];
      try {
        await r.start?.();
      } catch (err) {
        await this.stop();
        throw err instanceof StartError ? err : new StartError(r.name, err);
      }
      this.started.push(r);
    }
  }

  /** Stops what started, in reverse order, once; a failing stop is logged and the rest go on. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const r of this.started.splice(0).reverse()) {
        try {
          await r.stop?.();
        } catch (err) {
          this.logger.error({ runnable: r.name, err: err instanceof Error ? err.message : String(err) }, 'stop failed');
        }
      }
    })();
    return this.stopping;
  }
}
