// /mcp: agentplane as an MCP server over Streamable HTTP (docs/mcp.md), on the MCP SDK's
// web-standard transport. Stateless: each POST gets a fresh server and transport, answers in
// JSON (no SSE stream) and issues no Mcp-Session-Id. GET (the server's own SSE stream) and DELETE
// (ending a session) are served by no route, so they get the API's 405 with `Allow: POST`, as the
// MCP specification provides for a server without them.
// The request has met the public listener's filters before it gets here: the browser guard
// (Host, Origin), the auth filter (authentication; each tool call is authorized in
// pkg/server/mcp/server.ts) and the rate limit.

import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MCP_PATH } from '../auth/attributes.js';
import type { DelegatedAuthorizer } from '../auth/authorizer.js';
import { newMcpServer } from '../mcp/server.js';
import type { McpServices } from '../mcp/tools.js';

export interface McpRouteOptions {
  services: McpServices;
  /** The API's authorizer; none when the server runs without authentication (loopback, no token file). */
  authorizer?: Pick<DelegatedAuthorizer, 'authorize'>;
}

export function mcpRoutes(opts: McpRouteOptions) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post(MCP_PATH, async (req, reply) => {
      const caller = { ...(req.user ? { user: req.user } : {}), ...(opts.authorizer ? { authorizer: opts.authorizer } : {}), log: req.log };
      const mcp = newMcpServer(opts.services, caller);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      try {
        await mcp.connect(transport);
        const res = await transport.handleRequest(webRequest(req), { parsedBody: req.body });
        return await send(reply, res);
      } finally {
        await transport.close();
        await mcp.close();
      }
    });
  };
}

/** The fastify request as the web-standard Request the transport reads (the body is given parsed). */
function webRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    // HTTP/2 pseudo-headers (:authority, :path...) are no headers a Request may hold.
    if (k.startsWith(':') || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
  }
  const host = req.headers.host ?? (req.headers[':authority'] as string | undefined) ?? 'localhost';
  let url: URL;
  try {
    url = new URL(req.url, `http://${host}`);
  } catch {
    url = new URL(MCP_PATH, 'http://localhost');
  }
  return new Request(url, { method: req.method, headers });
}

async function send(reply: FastifyReply, res: Response): Promise<FastifyReply> {
  void reply.status(res.status);
  const type = res.headers.get('content-type');
  if (type) void reply.header('content-type', type);
  const text = await res.text();
  return text ? reply.send(text) : reply.send();
}
