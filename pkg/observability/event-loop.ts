// The API process's event-loop delay (agentplane_event_loop_delay_seconds): how late a timer
// fires. Everything the server does (API requests, the worker channel, the model proxy, status
// writes) waits behind whatever holds the loop, so this is the delay each of them sees.

import type { Histogram } from 'prom-client';

/** How often the loop is sampled: a delay shorter than this may go unseen, a longer one never. */
export const EVENT_LOOP_SAMPLE_MS = 20;

/**
 * Observes, every `intervalMs`, how late its timer ran. A timer-lateness sampler rather than
 * perf_hooks' monitorEventLoopDelay, because a prom-client Histogram takes single samples and
 * monitorEventLoopDelay hands out only its own percentiles.
 */
export class EventLoopMonitor {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly histogram: Pick<Histogram, 'observe'>,
    private readonly intervalMs = EVENT_LOOP_SAMPLE_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    let due = performance.now() + this.intervalMs;
    const tick = (): void => {
      const now = performance.now();
      this.histogram.observe(Math.max(0, now - due) / 1000);
      due = now + this.intervalMs;
      this.timer = setTimeout(tick, this.intervalMs).unref();
    };
    this.timer = setTimeout(tick, this.intervalMs).unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
