// pkg/server/request-spans.ts: the requests that start or steer a task (the routes flagged
// `config: { startsTask }` where they are registered) open the root span of the task's trace,
// named by the matched route; no other request is traced. Exercised through the real route
// plugins, so a task-starting route that lost its flag (or one that gained it) fails here.

import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../pkg/api/errors.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { createApp } from '../../pkg/server/app.js';
import { type AggregatedApiDeps, aggregatedApiRoutes } from '../../pkg/server/aggregated/index.js';
import { agentRoutes } from '../../pkg/server/routes/agents.js';
import { systemRoutes } from '../../pkg/server/routes/system.js';
import type { AgentService } from '../../pkg/server/services/agent-service.js';

const G = '/apis/agentplane.io/v1alpha1';

describe('request spans (the roots of task traces)', () => {
  const exporter = new InMemorySpanExporter();
  let app: FastifyInstance;

  before(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
    // Services that refuse everything: only the routes and their flags are under test.
    const refuse = async (): Promise<never> => {
      throw new ApiError('Conflict', 409, 'refused by the test');
    };
    const service = new Proxy({}, { get: () => refuse }) as AgentService;
    app = await createApp({ logger: createLogger({ level: 'silent' }), metrics: new Metrics() });
    await app.register(systemRoutes(new Metrics()));
    await app.register(agentRoutes(service));
    await app.register(aggregatedApiRoutes({ reads: {}, agentService: service } as unknown as AggregatedApiDeps));
  });
  after(async () => {
    await app?.close();
    trace.disable();
    context.disable();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());

  const send = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: { 'content-type': 'application/json', ...headers },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });

  it('opens one server span per task-starting request, named by its route, with the agent', async () => {
    await send('POST', '/api/v1/agents?namespace=team-a', { name: 'ada', instructions: 'x' });
    await send('PATCH', '/api/v1/agents/ada', { instructions: 'y' });
    await send('POST', `${G}/namespaces/team-b/agents`, { metadata: { name: 'bo' } });
    await send('PUT', `${G}/namespaces/team-b/agents/bo`, { metadata: { name: 'bo' } });
    await send('PATCH', `${G}/namespaces/team-b/agents/bo`, {}, { 'content-type': 'application/merge-patch+json' });
    const spans = exporter
      .getFinishedSpans()
      .map((s): Record<string, unknown> => ({ name: s.name, kind: s.kind, root: !s.parentSpanContext, ...s.attributes }));
    expect(spans).to.have.length(5);
    expect(spans[0]).to.deep.equal({
      kind: 1, // SpanKind.SERVER
      root: true,
      'http.response.status_code': 409,
      name: 'POST /api/v1/agents',
      'http.request.method': 'POST',
      'http.route': '/api/v1/agents',
      'url.path': '/api/v1/agents',
      'agentplane.namespace': 'team-a',
      'agentplane.agent': 'ada',
    });
    expect(spans[1]).to.deep.include({ name: 'PATCH /api/v1/agents/:name', 'agentplane.namespace': 'default', 'agentplane.agent': 'ada' });
    expect(spans[2]).to.deep.include({
      name: `POST ${G}/namespaces/:namespace/agents`,
      'http.route': `${G}/namespaces/:namespace/agents`,
      'url.path': `${G}/namespaces/team-b/agents`,
      'agentplane.namespace': 'team-b',
      'agentplane.agent': 'bo',
    });
    expect(spans[3]).to.deep.include({ name: `PUT ${G}/namespaces/:namespace/agents/:name`, 'agentplane.namespace': 'team-b', 'agentplane.agent': 'bo' });
    expect(spans[4]).to.deep.include({ name: `PATCH ${G}/namespaces/:namespace/agents/:name`, 'http.route': `${G}/namespaces/:namespace/agents/:name` });
  });

  it("continues a caller's traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await send('POST', '/api/v1/agents', { name: 'ada' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    const [span] = exporter.getFinishedSpans();
    expect(span.spanContext().traceId).to.equal(traceId);
    expect(span.parentSpanContext?.spanId).to.equal('00f067aa0ba902b7');
  });

  it('traces no other request, on the same routes or others', async () => {
    await send('GET', '/api/v1/agents');
    await send('GET', '/api/v1/agents/ada');
    await send('DELETE', '/api/v1/agents/ada');
    await send('POST', '/api/v1/agents/ada/cancel');
    await send('GET', `${G}/namespaces/team-b/agents`);
    await send('DELETE', `${G}/namespaces/team-b/agents`);
    await send('GET', `${G}/namespaces/team-b/agents/bo`);
    await send('DELETE', `${G}/namespaces/team-b/agents/bo`);
    await send('POST', `${G}/namespaces/team-b/squads`, { metadata: { name: 'sq' } });
    await send('PATCH', `${G}/namespaces/team-b/squads/sq`, {}, { 'content-type': 'application/merge-patch+json' });
    await send('POST', `${G}/namespaces/team-b/agents/bo/messages`, { text: 'hi' });
    await send('POST', '/api/v1/nowhere', {});
    await send('GET', '/healthz');
    expect(exporter.getFinishedSpans().map((s) => s.name)).to.deep.equal([]);
  });
});
