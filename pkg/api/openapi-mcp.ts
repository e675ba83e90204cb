// The OpenAPI paths of /mcp, agentplane's MCP server (docs/mcp.md): JSON-RPC 2.0 messages over
// Streamable HTTP. The messages themselves are the MCP specification's (validated by the MCP
// SDK); the document names the statuses a client can get.

import type { OpenAPIV3 } from 'openapi-types';
import { errors, json, ref, type Schema } from './openapi-common.js';

const jsonRpcMessage: Schema = {
  type: 'object',
  description: 'a JSON-RPC 2.0 message of the MCP protocol (initialize, tools/list, tools/call, notifications...)',
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { oneOf: [{ type: 'string' }, { type: 'integer' }], nullable: true },
    method: { type: 'string' },
    params: { type: 'object' },
    result: { type: 'object' },
    error: { type: 'object', properties: { code: { type: 'integer' }, message: { type: 'string' } } },
  },
};

export function mcpComponents(): Record<string, Schema> {
  return {
    McpMessage: jsonRpcMessage,
    McpMessages: { oneOf: [ref('McpMessage'), { type: 'array', items: ref('McpMessage'), minItems: 1 }] },
  };
}

/** Refusals of the MCP SDK's transport: a JSON-RPC error without an id, or the REST error body of the filters before it. */
const mcpErrors = (...codes: number[]): Record<string, OpenAPIV3.ResponseObject> =>
  Object.fromEntries(codes.map((c) => [String(c), { description: 'error', content: json({ anyOf: [ref('Error'), ref('McpMessage')] }) }]));

export function mcpPaths(): OpenAPIV3.PathsObject {
  return {
    '/mcp': {
      post: {
        operationId: 'mcp',
        description:
          "MCP over Streamable HTTP, stateless (no Mcp-Session-Id): a JSON-RPC message or batch in, the answer as JSON. The client must accept both application/json and text/event-stream (else 406). GET (a stream of the server's own) and DELETE (ending a session) are 405 with `Allow: POST`: the server has neither. Every tool call is authorized as the REST request it stands for; a refusal is a tool result with isError (docs/mcp.md).",
        requestBody: { required: true, content: json(ref('McpMessages')) },
        responses: {
          '200': { description: 'the JSON-RPC answer(s)', content: json(ref('McpMessages')) },
          '202': { description: 'notifications or responses only: accepted, nothing to answer' },
          ...mcpErrors(400, 406, 415),
          ...errors(401, 403, 413, 429),
        },
      },
    },
  };
}
