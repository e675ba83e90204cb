// A task's spans in the worker (docs/tracing.md): the task itself, continuing the dispatch's
// trace (the task message's traceparent), and one span per tool call, from the engine's
// tool_call event to its tool_result. Without a traceparent (tracing off on the server) or
// with tracing off here, nothing is recorded.

import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { EventDraft } from '../api/event.js';
import type { TaskMessage } from '../api/worker-protocol.js';
import {
  ATTR_MCP_SERVER,
  ATTR_OPERATION,
  ATTR_PROVIDER,
  ATTR_REQUEST_MODEL,
  ATTR_TOOL_CALL_ID,
  ATTR_TOOL_NAME,
  taskAttributes,
} from '../observability/trace-attributes.js';
import { contextOf, traceparentOf, tracer } from '../observability/tracing.js';

const TERMINAL = new Set(['task_completed', 'task_cancelled', 'error']);

export class TaskTrace {
  private readonly span?: Span;
  private readonly tools = new Map<string, Span>();

  constructor(task: TaskMessage, namespace: string, agent: string) {
    const parent = contextOf(task.traceparent);
    if (!trace.getSpan(parent)) return;
    const attributes = {
      ...taskAttributes(namespace, agent, task.taskId),
      [ATTR_OPERATION]: 'invoke_agent',
      [ATTR_PROVIDER]: 'anthropic',
      [ATTR_REQUEST_MODEL]: task.model,
      'gen_ai.agent.name': agent,
    };
    this.span = tracer().startSpan('agentplane.task', { kind: SpanKind.INTERNAL, attributes }, parent);
  }

  /** The task span's traceparent, which the server's model proxy parents the task's model requests on. */
  get traceparent(): string | undefined {
    return this.span ? traceparentOf(trace.setSpan(context.active(), this.span)) : undefined;
  }

  /** Runs `fn` with the task span active (its log lines carry the trace id). */
  with<T>(fn: () => T): T {
    return this.span ? context.with(trace.setSpan(context.active(), this.span), fn) : fn();
  }

  /** Follows the task's events: a span per tool call; the task's end ends them all. */
  observe(event: EventDraft): void {
    if (!this.span) return;
    const p = event.payload as { id?: string; tool?: string; isError?: boolean; reason?: string };
    if (event.type === 'tool_call' && p.id && p.tool) {
      const mcp = /^mcp__(.+?)__/.exec(p.tool);
      const attributes = {
        [ATTR_OPERATION]: 'execute_tool',
        [ATTR_TOOL_NAME]: p.tool,
        [ATTR_TOOL_CALL_ID]: p.id,
        ...(mcp ? { [ATTR_MCP_SERVER]: mcp[1] } : {}),
      };
      this.tools.set(p.id, tracer().startSpan(`execute_tool ${p.tool}`, { attributes }, trace.setSpan(context.active(), this.span)));
    } else if (event.type === 'tool_result' && p.id) {
      const span = this.tools.get(p.id);
      this.tools.delete(p.id);
      if (p.isError) span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    } else if (TERMINAL.has(event.type)) {
      this.end(event.type === 'task_completed' ? undefined : (p.reason ?? event.type));
    }
  }

  /** Ends the task's span (and any tool call still open); `error` marks it failed or cancelled. */
  end(error?: string): void {
    for (const s of this.tools.values()) s.end();
    this.tools.clear();
    if (!this.span || !this.span.isRecording()) return;
    this.span.setAttribute('agentplane.task.outcome', error === undefined ? 'completed' : error);
    if (error !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.span.end();
  }
}
