// The metrics added for the Grafana dashboard and alerts (docs/observability.md): the create/wake
// start timed to the task's first model request, the readiness checks' last results as a gauge
// (no check run by a scrape), and the series that exist from boot.

import { expect } from 'chai';
import Fastify, { type FastifyInstance } from 'fastify';

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

  /** systemRoutes with an informers check that passes and an event store check as `store` says, counting the store's checks. */
  async function readinessApp(metrics: Metrics, readinessRefreshMs = 60_000) {
    const state = { store: 'down' as 'up' | 'down' | 'hung', calls: 0 };
    const app = Fastify();
    const store = async (): Promise<void> => {
      state.calls++;
      if (state.store === 'down') throw new Error('connection refused');
      if (state.store === 'hung') await new Promise(() => {});
    };
    await app.register(
      systemRoutes(
        metrics,
        [
          { name: 'informers', check: async () => undefined },
          { name: 'event store', check: store },
        ],
        { readinessRefreshMs },
      ),
    );
    return { app, state };
  }
  const scrape = async (app: FastifyInstance, check: string): Promise<string | undefined> =>
    sample((await app.inject({ url: '/metrics' })).body, `agentplane_ready{check="${check}"}`)
      ?.split(' ')
      .pop();

  it('reports the last result of the readiness checks, and a scrape runs none', async () => {
    const metrics = new Metrics();
    const { app, state } = await readinessApp(metrics);
    try {
      expect((await app.inject({ url: '/readyz' })).statusCode).to.equal(503);
      expect(await scrape(app, 'event store')).to.equal('0');
      expect(await scrape(app, 'informers')).to.equal('1');
      // Scrapes neither run the checks nor wait on a store that hangs.
      state.store = 'hung';
      const calls = state.calls;
      for (let i = 0; i < 3; i++) expect(await scrape(app, 'event store')).to.equal('0');
      expect(state.calls, 'checks run by scrapes').to.equal(calls);
      // The gauge flips with the next result, not with the store.
      state.store = 'up';
      expect(await scrape(app, 'event store')).to.equal('0');
      expect((await app.inject({ url: '/readyz' })).statusCode).to.equal(200);
      expect(await scrape(app, 'event store')).to.equal('1');
    } finally {
      await app.close();
    }
  });

  it('runs the readiness checks on a timer without /readyz, until the server closes', async () => {
    const metrics = new Metrics();
    const { app, state } = await readinessApp(metrics, 20);
    state.store = 'up';
    try {
      await app.ready();
      await until(async () => (await scrape(app, 'event store')) === '1');
      state.store = 'down';
      await until(async () => (await scrape(app, 'event store')) === '0');
    } finally {
      await app.close();
    }
    const calls = state.calls;
    await new Promise((r) => setTimeout(r, 100));
    expect(state.calls, 'checks after close').to.equal(calls);
  });
});

async function until(cond: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
