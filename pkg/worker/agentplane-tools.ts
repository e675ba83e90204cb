// The `agentplane` MCP server a manager agent's engine gets, in the worker's own process (the
// Claude Agent SDK's createSdkMcpServer): its tools act on agentplane for the agent. A tool here
// holds nothing and decides nothing: each call is relayed to the server over the worker's control
// channel (a `call` message), where the server acts for the agent the worker's token speaks for,
// within its namespace (pkg/server/services/agent-tool-calls.ts, docs/messages.md). It runs in the
// worker, inside the same sandbox, and the engine's PreToolUse hook (the approval policy) is asked
// before each call as before any tool, so it opens no way around either (docs/security.md).
// One file for the server so that more tools can join it.

import { createSdkMcpServer, tool, type McpSdkServerConfigWithInstance } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';
import { MESSAGE_TEXT_MAX_LENGTH } from '../api/agent-message.js';
import type { CallMessage } from '../api/worker-protocol.js';

/** The MCP server's name: the engine names its tools `mcp__agentplane__<tool>`. */
export const AGENTPLANE_MCP_SERVER = 'agentplane';

/** Relays one call to the server; resolves with what the model reads. */
export type ServerCall = (tool: CallMessage['tool'], input: Record<string, unknown>) => Promise<{ isError: boolean; text: string }>;

const asResult = (a: { isError: boolean; text: string }) => ({ content: [{ type: 'text' as const, text: a.text }], ...(a.isError ? { isError: true } : {}) });

/** A new server instance (one per engine session: an instance serves one engine's transport). */
export function agentplaneToolServer(call: ServerCall): McpSdkServerConfigWithInstance {
  return createSdkMcpServer({
    name: AGENTPLANE_MCP_SERVER,
    version: '1.0.0',
    tools: [
      tool(
        'send_message',
        'Send a message to another agent of your namespace. It reaches the agent as a follow-up in its running task, as a new task when it is idle, ' +
          'or waits until it wakes when it sleeps. The receiver sees who sent it.',
        {
          to: z.string().min(1).describe("the receiving agent's name (an agent of your own namespace)"),
          text: z.string().min(1).max(MESSAGE_TEXT_MAX_LENGTH).describe('the message'),
        },
        async (args) => asResult(await call('send_message', { to: args.to, text: args.text })),
        { alwaysLoad: true },
      ),
      tool(
        'list_agents',
        "List the agents of your namespace: each one's name, status (Running, Sleeping, ...), role and its task's status.",
        {},
        async () => asResult(await call('list_agents', {})),
        { alwaysLoad: true, annotations: { readOnlyHint: true } },
      ),
    ],
  });
}
