// A real MCP server for tests, on the official SDK (McpServer + Streamable HTTP transport, stateless:
// a fresh server and transport per request) over plain node:http on 127.0.0.1. It requires
// `Authorization: Bearer <token>` (or `<headerName>: <token>`), answers 401 otherwise, records
// every credential it was shown, and offers one tool: echo({text}) -> "echo: <text>".

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface TestMcpServerOptions {
  /** The credential it accepts. */
  token: string;
  /** Read the token from this header (raw value) instead of `Authorization: Bearer`. */
  headerName?: string;
}

export interface TestMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:PORT/mcp. */
  readonly url: string;
  /** Every credential presented (accepted or not), in order; "" when none was. */
  readonly tokensSeen: string[];
  /** Calls of the echo tool (its text argument). */
  readonly calls: string[];
  /** Requests refused with 401. */
  readonly refused: number;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createTestMcpServer(opts: TestMcpServerOptions): TestMcpServer {
  const tokensSeen: string[] = [];
  const calls: string[] = [];
  let refused = 0;
  let http: Server | undefined;
  let url = '';

  const newMcp = (): McpServer => {
    const mcp = new McpServer({ name: 'agentplane-test-echo', version: '1.0.0' });
    mcp.registerTool('echo', { description: 'Echoes the text back.', inputSchema: { text: z.string() } }, async ({ text }) => {
      calls.push(text);
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    });
    return mcp;
  };

  const credential = (req: IncomingMessage): string => {
    if (opts.headerName) {
      const v = req.headers[opts.headerName.toLowerCase()];
      return Array.isArray(v) ? v.join(',') : (v ?? '');
    }
    const auth = req.headers.authorization ?? '';
    return /^Bearer /i.test(auth) ? auth.slice(7) : auth;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const seen = credential(req);
    tokensSeen.push(seen);
    if (seen !== opts.token) {
      refused++;
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="mcp", error="invalid_token"' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'unauthorized' }, id: null }));
      return;
    }
    if (req.method !== 'POST') {
      // Stateless: no standalone SSE stream and no sessions to delete.
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const mcp = newMcp();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  };

  return {
    get url() {
      return url;
    },
    tokensSeen,
    calls,
    get refused() {
      return refused;
    },
    async start() {
      http = createServer((req, res) => {
        handle(req, res).catch(() => {
          if (!res.headersSent) res.writeHead(500).end();
          else res.end();
        });
      });
      await new Promise<void>((resolve, reject) => {
        http!.once('error', reject);
        http!.listen(0, '127.0.0.1', () => resolve());
      });
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    },
    async close() {
      const s = http;
      http = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}
