// The attribute keys agentplane's spans carry (docs/tracing.md "Spans"): OpenTelemetry's
// semantic-convention names where one exists (gen_ai.*), `agentplane.*` for ours. Never a
// secret and never the instructions' text.

import type { Attributes } from '@opentelemetry/api';

export const ATTR_NAMESPACE = 'agentplane.namespace';
export const ATTR_AGENT = 'agentplane.agent';
export const ATTR_TASK = 'agentplane.task';
export const ATTR_RUNTIME = 'agentplane.runtime';
export const ATTR_WARM = 'agentplane.warm_pool.claimed';
export const ATTR_OPERATION = 'gen_ai.operation.name';
export const ATTR_PROVIDER = 'gen_ai.provider.name';
export const ATTR_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_RESPONSE_MODEL = 'gen_ai.response.model';
export const ATTR_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const ATTR_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ATTR_MCP_SERVER = 'agentplane.mcp.server';

/** The attributes that name an agent's task. */
export function taskAttributes(namespace: string, agent: string, task?: number): Attributes {
  return { [ATTR_NAMESPACE]: namespace, [ATTR_AGENT]: agent, ...(task !== undefined ? { [ATTR_TASK]: task } : {}) };
}
