// The agent's memory tools: an in-process MCP server `memory` in the worker (the SDK's
// createSdkMcpServer), so the model reads and writes the memories it has attached
// (docs/skills-and-memories.md). Each call goes to the server's memory endpoint on the
// worker-facing listener with the agent's credential; the server checks the memory is attached
// and updates it through the registry, so the next task (of this agent or any other that
// attaches it) starts with the new text.

import { createSdkMcpServer, tool } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';
import { MEMORY_KIND } from '../api/memory.js';
import { MEMORY_TOOL_PATH } from '../api/worker-protocol.js';

export const MEMORY_SERVER = 'memory';

export interface MemoryToolsEnv {
  /** The server (or, sandboxed, the relay to it). */
  serverUrl?: string;
  /** The agent's credential, sent as the engine sends it (the relay replaces a placeholder). */
  apiKey?: string;
  /** The attached memories' names, for the tools' descriptions. */
  names: string[];
}

type Result = { content: { type: 'text'; text: string }[]; isError?: boolean };

async function call(env: MemoryToolsEnv, name: string, init: RequestInit): Promise<Result> {
  const url = new URL(`${MEMORY_TOOL_PATH}/${encodeURIComponent(name)}`, env.serverUrl ?? 'http://127.0.0.1');
  try {
    const r = await fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), ...(env.apiKey ? { 'x-api-key': env.apiKey } : {}) } });
    const body = (await r.json().catch(() => ({}))) as { text?: string; error?: string };
    if (!r.ok) return { content: [{ type: 'text', text: `${MEMORY_KIND} "${name}": ${body.error ?? `HTTP ${r.status}`}` }], isError: true };
    return { content: [{ type: 'text', text: body.text ?? '' }] };
  } catch (err) {
    return { content: [{ type: 'text', text: `agentplane is unreachable: ${err instanceof Error ? err.message : String(err)}` }], isError: true };
  }
}

/** The `memory` server for a task with memories (the engine names its tools mcp__memory__memory_read and mcp__memory__memory_write). */
export function memoryServer(env: MemoryToolsEnv): ReturnType<typeof createSdkMcpServer> {
  const list = env.names.join(', ');
  const name = z.string().describe(`the memory's name: one of ${list}`);
  return createSdkMcpServer({
    name: MEMORY_SERVER,
    version: '1.0.0',
    alwaysLoad: true,
    tools: [
      tool(
        'memory_read',
        `Reads an attached memory's current text (others may have written it since the task began). Attached: ${list}.`,
        { name },
        async (a) => call(env, a.name, { method: 'GET' }),
      ),
      tool(
        'memory_write',
        `Replaces an attached memory's whole text; the next task of every agent that attaches it starts with it. Attached: ${list}. Read it first and keep what still holds.`,
        { name, text: z.string().describe('the new text, whole') },
        async (a) => {
          const r = await call(env, a.name, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: a.text }) });
          return r.isError ? r : { content: [{ type: 'text', text: `memory "${a.name}" written (${Buffer.byteLength(a.text)} bytes)` }] };
        },
      ),
    ],
  });
}
