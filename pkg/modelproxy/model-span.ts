// A model request's span (docs/tracing.md), under the span of the task that made it: the
// worker named its task span on the task's first event (pkg/observability/task-traces.ts).
// The request's body is read for its model only when there is such a span; nothing of the
// prompt and no header is recorded.

import { type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ServerResponse } from 'node:http';
import type { ObjectRef } from '../api/meta.js';
import { taskTraces } from '../observability/task-traces.js';
import { ATTR_OPERATION, ATTR_PROVIDER, ATTR_REQUEST_MODEL, taskAttributes } from '../observability/trace-attributes.js';
import { contextOf, tracer } from '../observability/tracing.js';

function modelOf(body: Buffer): string | undefined {
  try {
    const model = (JSON.parse(body.toString('utf8')) as { model?: unknown }).model;
    return typeof model === 'string' ? model.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}

/** Starts the request's span when its task is traced; it ends with the response. */
export function traceModelRequest(ref: ObjectRef, path: string, body: Buffer, res: ServerResponse): Span | undefined {
  const parent = contextOf(taskTraces.get(ref));
  if (!trace.getSpan(parent)) return undefined;
  const model = modelOf(body);
  const operation = path.startsWith('/v1/messages/count_tokens') ? 'count_tokens' : 'chat';
  const attributes = {
    ...taskAttributes(ref.namespace, ref.name),
    [ATTR_OPERATION]: operation,
    [ATTR_PROVIDER]: 'anthropic',
    ...(model ? { [ATTR_REQUEST_MODEL]: model } : {}),
    'url.path': path,
  };
  const span = tracer().startSpan(model ? `${operation} ${model}` : operation, { kind: SpanKind.CLIENT, attributes }, parent);
  res.on('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 400 || !res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  return span;
}
