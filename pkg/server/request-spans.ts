// The root span of a task's trace (docs/tracing.md): the API request that starts or steers a
// task, on the REST mirror or the aggregated API. The agent's write inside it stamps the
// request's traceparent on the agent (pkg/registry/agent/strategy.ts), so the controller and
// the worker continue this trace after the response. Only these requests are traced: a trace
// per list or watch would bury the tasks'. Which requests those are, each route says itself
// where it is registered (`config: { startsTask }`): there is no second routing table here.

import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ATTR_AGENT, ATTR_NAMESPACE } from '../observability/trace-attributes.js';
import { tracer } from '../observability/tracing.js';

/** Which requests of a route start or steer a task: `true` for all of them. */
export type StartsTask =
  | true
  | {
      /** The methods that do (a route registered with app.all serves several). */
      methods: readonly string[];
      /** On a route shared by kinds (the aggregated API's `:resource`): the kinds whose writes do. */
      resources?: readonly string[];
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's requests are the root spans of tasks' traces (request-spans.ts). */
    startsTask?: StartsTask;
  }
}

interface TaskRoute {
  route: string;
  namespace?: string;
  name?: string;
}

/** The matched route, when its flag says this request starts a task; the namespace and name from its path. */
function taskRoute(req: FastifyRequest): TaskRoute | undefined {
  const flag = req.routeOptions.config?.startsTask;
  const url = req.routeOptions.url;
  if (!flag || url === undefined) return undefined;
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  if (flag !== true && !flag.methods.includes(req.method)) return undefined;
  if (flag !== true && flag.resources && !flag.resources.includes(params.resource ?? '')) return undefined;
  // The kind in the span's route, as a route of its own would have it (one of a few: no cardinality).
  const route = flag !== true && flag.resources && params.resource ? url.replace(':resource', params.resource) : url;
  return {
    route,
    ...(params.namespace !== undefined ? { namespace: params.namespace } : {}),
    ...(params.name !== undefined ? { name: params.name } : {}),
  };
}

/** Where the agent is, once the body is parsed (POST /api/v1/agents names it there). */
function agentOf(req: FastifyRequest, found: TaskRoute): Record<string, string> {
  const body = (req.body ?? {}) as { name?: unknown; namespace?: unknown; metadata?: { name?: unknown } };
  const query = (req.query ?? {}) as { namespace?: unknown };
  const name = found.name ?? (typeof body.name === 'string' ? body.name : typeof body.metadata?.name === 'string' ? body.metadata.name : undefined);
  const namespace =
    found.namespace ?? (typeof query.namespace === 'string' ? query.namespace : typeof body.namespace === 'string' ? body.namespace : 'default');
  return { [ATTR_NAMESPACE]: namespace, ...(name ? { [ATTR_AGENT]: name } : {}) };
}

export function installRequestSpans(app: FastifyInstance): void {
  const spans = new WeakMap<FastifyRequest, { span: Span; found: TaskRoute }>();
  app.addHook('onRequest', (req, _reply, done) => {
    const found = taskRoute(req);
    if (found) {
      const path = req.url.split('?', 1)[0];
      // A caller's own traceparent makes the task part of its trace.
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const attributes = { 'http.request.method': req.method, 'http.route': found.route, 'url.path': path };
      spans.set(req, { span: tracer().startSpan(`${req.method} ${found.route}`, { kind: SpanKind.SERVER, attributes }, parent), found });
    }
    done();
  });
  // After the body is parsed: the handler (and the agent's write) runs inside the span.
  app.addHook('preHandler', (req, _reply, done) => {
    const traced = spans.get(req);
    if (!traced) return done();
    traced.span.setAttributes(agentOf(req, traced.found));
    context.with(trace.setSpan(context.active(), traced.span), done);
  });
  const end = (req: FastifyRequest, status?: number): void => {
    const span = spans.get(req)?.span;
    if (!span) return;
    spans.delete(req);
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (status === undefined || status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  app.addHook('onResponse', (req, reply, done) => {
    end(req, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (req, done) => {
    end(req);
    done();
  });
}
