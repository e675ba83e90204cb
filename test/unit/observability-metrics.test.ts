// The metrics added for the Grafana dashboard and alerts (docs/observability.md): the create/wake
// start timed to the task's first model request, the readiness checks as a gauge, and the series
// that exist from boot.

import { expect } from 'chai';
import Fastify from 'fastify';

import { UsageMeter } from '../../pkg/modelproxy/index.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { systemRoutes } from '../../pkg/server/routes/system.js';

const sample = (text: string, line: string): string | undefined => text.split('\n').find((l) => l.startsWith(line));

describe('observability metrics', () => {
  it('has every task outcome and both starts from boot, at zero', async () => {
    const text = await new Metrics().registry.metrics();
    for (const outcome of ['completed', 'error', 'cancelled']) expect(sample(text, `agentplane_tasks_total{outcome="${outcome}"}`)).to.match(/ 0$/);
    for (const start of ['create', 'wake']) expect(sample(text, `agentplane_agent_first_model_request_seconds_count{start="${start}"}`)).to.match(/ 0$/);
    expect(sample(text, 'agentplane_worker_start_failures_total')).to.equal('agentplane_worker_start_failures_total 0');
  });

  it('times a create or wake from the worker ask to the first model request of the task, once', async () => {
    const metrics = new Metrics();
    let now = 10_000;
    const meter = new UsageMeter(metrics, { now: () => now });
    const ref = { namespace: 'team-a', name: 'ada' };
    meter.taskStarted(ref, 'u1', undefined, { start: 'create', at: 9_000 });
    now = 10_250;
    meter.modelRequested(ref, 'u1');
    now = 12_000;
    meter.modelRequested(ref, 'u1'); // the tool loop's next request
    // A warm task (no start handed over) is not a create or a wake.
    meter.taskStarted(ref, 'u1');
    meter.modelRequested(ref, 'u1');
    meter.taskStarted(ref, 'u1', undefined, { start: 'wake', at: 11_000 });
    now = 12_500;
    meter.modelRequested(ref, 'u1');
    const text = await metrics.registry.metrics();
    expect(sample(text, 'agentplane_agent_first_model_request_seconds_count{start="create"}')).to.match(/ 1$/);
    expect(sample(text, 'agentplane_agent_first_model_request_seconds_sum{start="create"}')).to.match(/ 1\.25$/);
    expect(sample(text, 'agentplane_agent_first_model_request_seconds_sum{start="wake"}')).to.match(/ 1\.5$/);
    expect(sample(text, 'agentplane_task_first_model_request_seconds_count')).to.match(/ 3$/);
  });

  it('reports each readiness check at scrape time, as /readyz sees it', async () => {
    const metrics = new Metrics();
    let storeUp = false;
    const app = Fastify();
    await app.register(
      systemRoutes(metrics, [
        { name: 'informers', check: async () => undefined },
        {
          name: 'event store',
          check: async () => {
            if (!storeUp) throw new Error('connection refused');
          },
        },
      ]),
    );
    try {
      const down = (await app.inject({ url: '/metrics' })).body;
      expect(sample(down, 'agentplane_ready{check="event store"}')).to.equal('agentplane_ready{check="event store"} 0');
      expect(sample(down, 'agentplane_ready{check="informers"}')).to.equal('agentplane_ready{check="informers"} 1');
      expect((await app.inject({ url: '/readyz' })).statusCode).to.equal(503);
      storeUp = true;
      const up = (await app.inject({ url: '/metrics' })).body;
      expect(sample(up, 'agentplane_ready{check="event store"}')).to.equal('agentplane_ready{check="event store"} 1');
    } finally {
      await app.close();
    }
  });
});
