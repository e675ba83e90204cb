import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';

import { EventLoopMonitor } from '../../pkg/observability/event-loop.js';
import { Metrics } from '../../pkg/observability/metrics.js';

/** The histogram's samples: their count, and how many were at or above `atLeast` seconds (a bucket bound). */
async function samples(metrics: Metrics, atLeast: number): Promise<{ count: number; above: number }> {
  const { values } = await metrics.eventLoopDelay.get();
  const count = values.find((v) => v.metricName === 'agentplane_event_loop_delay_seconds_count')!.value;
  // Buckets are cumulative: the samples below `atLeast` are those of the largest bucket under it.
  const below = values
    .filter((v) => v.metricName === 'agentplane_event_loop_delay_seconds_bucket' && Number(v.labels.le) < atLeast)
    .reduce((n, v) => Math.max(n, v.value), 0);
  return { count, above: count - below };
}

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // holds the event loop
  }
}

describe('EventLoopMonitor (agentplane_event_loop_delay_seconds)', () => {
  it('counts a sample of at least 50 ms when the loop is held 80 ms, and only low ones while idle', async () => {
    const metrics = new Metrics();
    const monitor = new EventLoopMonitor(metrics.eventLoopDelay, 10);
    monitor.start();
    try {
      await sleep(300);
      // Idle, most samples are a few ms late at most (a busy machine may preempt this process now and then).
      const idle = await samples(metrics, 0.05);
      const idleLow = idle.count - (await samples(metrics, 0.01)).above;
      expect(idle.count).to.be.greaterThan(5);
      expect(idleLow / idle.count).to.be.greaterThan(0.75);

      busyWait(80);
      await sleep(50);
      const busy = await samples(metrics, 0.05);
      expect(busy.count).to.be.greaterThan(idle.count);
      expect(busy.above - idle.above, 'the 80 ms the loop was held').to.be.at.least(1);
    } finally {
      monitor.stop();
    }
  });

  it('stops sampling when stopped', async () => {
    const metrics = new Metrics();
    const monitor = new EventLoopMonitor(metrics.eventLoopDelay, 5);
    monitor.start();
    await sleep(50);
    monitor.stop();
    const { count } = await samples(metrics, 0.05);
    await sleep(50);
    expect((await samples(metrics, 0.05)).count).to.equal(count);
  });
});
