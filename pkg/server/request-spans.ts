// The root span of a task's trace (docs/tracing.md): the API request that starts or steers a
// task, on the REST mirror or the aggregated API. The agent's write inside it stamps the
// request's traceparent on the agent (pkg/registry/agent/strategy.ts), so the controller and
// the worker continue this trace after the response. Only these requests are traced: a trace
// per list or watch would bury the tasks'.

import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ATTR_AGENT, ATTR_NAMESPACE } from '../observability/trace-attributes.js';
import { tracer } from '../observability/tracing.js';

const GROUP = '/apis/agentplane.io/v1alpha1';
/** [method, path pattern, route]: the requests that can assign a task; the pattern's groups are the namespace and name. */
const TASK_REQUESTS: [string, RegExp, string][] = [
  ['POST', /^\/api\/v1\/agents$/, '/api/v1/agents'],
  ['PATCH', /^\/api\/v1\/agents\/([^/]+)$/, '/api/v1/agents/:name'],
  ['POST', new RegExp(`^${GROUP}/namespaces/([^/]+)/agents$`), `${GROUP}/namespaces/:namespace/agents`],
  ['PUT', new RegExp(`^${GROUP}/namespaces/([^/]+)/agents/([^/]+)$`), `${GROUP}/namespaces/:namespace/agents/:name`],
  ['PATCH', new RegExp(`^${GROUP}/namespaces/([^/]+)/agents/([^/]+)$`), `${GROUP}/namespaces/:namespace/agents/:name`],
];

function taskRoute(method: string, path: string): { route: string; namespace?: string; name?: string } | undefined {
  for (const [m, re, route] of TASK_REQUESTS) {
    if (m !== method) continue;
    const g = re.exec(path);
    if (!g) continue;
    // The REST mirror's PATCH has the name only; the aggregated API's, both.
    if (g.length === 2) return { route, name: decodeURIComponent(g[1]) };
    if (g.length === 3) return { route, namespace: decodeURIComponent(g[1]), name: decodeURIComponent(g[2]) };
    return { route };
  }
  return undefined;
}

/** Where the agent is, once the body is parsed (POST /api/v1/agents names it there). */
function agentOf(req: FastifyRequest, found: { namespace?: string; name?: string }): Record<string, string> {
  const body = (req.body ?? {}) as { name?: unknown; namespace?: unknown; metadata?: { name?: unknown } };
  const query = (req.query ?? {}) as { namespace?: unknown };
  const name = found.name ?? (typeof body.name === 'string' ? body.name : typeof body.metadata?.name === 'string' ? body.metadata.name : undefined);
  const namespace =
    found.namespace ?? (typeof query.namespace === 'string' ? query.namespace : typeof body.namespace === 'string' ? body.namespace : 'default');
  return { [ATTR_NAMESPACE]: namespace, ...(name ? { [ATTR_AGENT]: name } : {}) };
}

export function installRequestSpans(app: FastifyInstance): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', (req, _reply, done) => {
    const path = req.url.split('?', 1)[0];
    const found = taskRoute(req.method, path);
    if (found) {
      // A caller's own traceparent makes the task part of its trace.
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const attributes = { 'http.request.method': req.method, 'http.route': found.route, 'url.path': path };
      spans.set(req, tracer().startSpan(`${req.method} ${found.route}`, { kind: SpanKind.SERVER, attributes }, parent));
      (req as { taskRoute?: typeof found }).taskRoute = found;
    }
    done();
  });
  // After the body is parsed: the handler (and the agent's write) runs inside the span.
  app.addHook('preHandler', (req, _reply, done) => {
    const span = spans.get(req);
    if (!span) return done();
    span.setAttributes(agentOf(req, (req as { taskRoute?: { namespace?: string; name?: string } }).taskRoute ?? {}));
    context.with(trace.setSpan(context.active(), span), done);
  });
  const end = (req: FastifyRequest, status?: number): void => {
    const span = spans.get(req);
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
