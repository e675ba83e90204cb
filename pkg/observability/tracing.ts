// OpenTelemetry traces (docs/tracing.md): configured only by the standard OTEL_* environment
// variables, off when no OTLP endpoint is set. Off, nothing is registered: the API's no-op
// tracer makes every span below free, and no exporter is loaded.

import { context, propagation, ROOT_CONTEXT, trace, type Attributes, type Context, type Span, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

type Env = Record<string, string | undefined>;

/** The OTLP protocols agentplane exports with (OTEL_EXPORTER_OTLP_PROTOCOL). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

export interface Tracing {
  /** Exports what is still queued and stops. */
  shutdown(): Promise<void>;
  forceFlush(): Promise<void>;
}

/** Whether the environment turns tracing on: an OTLP endpoint, and not disabled. */
export function tracingEnabled(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the specification names them (default parentbased_always_on). */
export function samplerFromEnv(env: Env = process.env): Sampler {
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default:
      throw new Error(`OTEL_TRACES_SAMPLER "${env.OTEL_TRACES_SAMPLER}" is not one agentplane supports`);
  }
}

async function exporterFromEnv(env: Env): Promise<SpanExporter> {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  // Loaded only when tracing is on; each reads the endpoint, headers, timeout and compression
  // from the OTEL_EXPORTER_OTLP_* variables itself.
  if (protocol === 'http/protobuf') return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}" is not supported: use ${OTLP_PROTOCOLS.join(' or ')}`);
}

/**
 * Registers the tracer provider, the W3C trace-context propagator and the async context manager
 * when the environment turns tracing on; undefined (nothing registered) when it does not.
 * `service` is the default service.name (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win).
 */
export async function startTracing(service: string, env: Env = process.env): Promise<Tracing | undefined> {
  if (!tracingEnabled(env)) return undefined;
  const sampler = samplerFromEnv(env);
  const exporter = await exporterFromEnv(env);
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY ?? '1000');
  const provider = new TracerProvider({
    sampler,
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }).merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: Number.isFinite(delay) ? delay : 1000 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    shutdown: () => provider.shutdown(),
    forceFlush: () => provider.forceFlush(),
  };
}

export const tracer = (): ReturnType<typeof trace.getTracer> => trace.getTracer('agentplane');

/** The W3C traceparent of `ctx` (default: the active context), or undefined when no span is recording there. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** The context a W3C traceparent continues (the root context for none or a malformed one). */
export function contextOf(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/** Ends `span` after `fn`, recording a throw as its error. */
export async function inSpan<T>(span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(context.active(), span), fn);
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** `fn` in a span under `parent` (a traceparent); `fn` alone when there is none, so no stray root traces. */
export function spanUnder<T>(traceparent: string | undefined, name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  const parent = contextOf(traceparent);
  if (!trace.getSpan(parent)) return fn();
  return inSpan(tracer().startSpan(name, { attributes }, parent), fn);
}

/** `fn` in a child span of the active one; `fn` alone when no span is active. */
export function childSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!trace.getActiveSpan()) return fn();
  return inSpan(tracer().startSpan(name, { attributes }), fn);
}

/** Adds attributes to the active span, if any (a warm-pool claim inside the worker start). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** trace_id and span_id of the active span, for log lines (logger.ts); {} without one. */
export function logIds(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * The OTEL_* settings a worker gets from the server, to export its spans as the server does
 * (docs/tracing.md); `headers: false` leaves out the OTLP headers (a pod's ConfigMap is no place for a collector's token).
 */
export function otelEnv(env: NodeJS.ProcessEnv = process.env, opts: { headers?: boolean } = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('OTEL_') || v === undefined) continue;
    if (opts.headers === false && k.includes('HEADERS')) continue;
    out[k] = v;
  }
  return out;
}
