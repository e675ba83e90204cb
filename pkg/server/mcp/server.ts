// The MCP server of one request (stateless: docs/mcp.md, docs/decisions.md "MCP server without
// sessions"): the tools of tools.ts, each call authorized as the REST mirror's request it stands
// for, with the API's own attributes (planFor) and authorizer, for the caller the auth filter
// authenticated. A refusal is a tool error naming the verb and the resource, in kube-apiserver's
// words (filter.ts `forbidden`); a service's ApiError is a tool error with its reason and code.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, isApiError } from '../../api/errors.js';
import { GROUP, VERSION } from '../../api/meta.js';
import type { FastifyBaseLogger } from 'fastify';
import { planFor, type RequestAttributes } from '../auth/attributes.js';
import type { DelegatedAuthorizer } from '../auth/authorizer.js';
import { forbidden } from '../auth/filter.js';
import type { UserInfo } from '../auth/user.js';
import { type McpServices, TOOLS, type ToolDef, type ToolRequest } from './tools.js';

export const MCP_SERVER_NAME = 'agentplane';
/** The version the server gives in its MCP initialize answer (package.json's). */
export const MCP_SERVER_VERSION = '0.1.0';

/** Who calls, as the auth filter found them; no authorizer when the server runs without auth. */
export interface McpCaller {
  user?: UserInfo;
  authorizer?: Pick<DelegatedAuthorizer, 'authorize'>;
  log: FastifyBaseLogger;
}

/** A fresh MCP server with agentplane's tools, for one HTTP request of `caller`. */
export function newMcpServer(services: McpServices, caller: McpCaller): McpServer {
  const mcp = new McpServer({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    mcp.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
      },
      (args: Record<string, unknown>) => callTool(tool, args, services, caller),
    );
  }
  return mcp;
}

const INSTRUCTIONS =
  'agentplane runs long-lived AI agents. create_agent starts an agent with a first task; run_task gives an existing agent a task ' +
  '(or a follow-up while it works); follow a task with get_events and `since` until task_completed, error or task_cancelled.';

async function callTool(tool: ToolDef, args: Record<string, unknown>, services: McpServices, caller: McpCaller): Promise<CallToolResult> {
  let req: ToolRequest;
  try {
    req = tool.request(args);
    const refusal = await authorize(req, caller);
    if (refusal) {
      caller.log.info({ tool: tool.name, user: caller.user?.username }, 'MCP tool call forbidden');
      return toolError(refusal);
    }
    const answer = await tool.run(req, services, caller.user?.username ?? 'system:anonymous');
    return { content: [{ type: 'text', text: answer.summary }], structuredContent: answer.structured };
  } catch (err) {
    if (isApiError(err)) return toolError(err);
    caller.log.error({ tool: tool.name, err }, 'MCP tool call failed');
    return toolError(new ApiError('InternalError', 500, `${tool.name} failed on the server; see its log`));
  }
}

/** The refusal of the first check the caller may not pass; undefined when all pass (or there is no auth). */
async function authorize(req: ToolRequest, caller: McpCaller): Promise<ApiError | undefined> {
  if (!caller.authorizer) return undefined;
  const user = caller.user;
  if (!user) return new ApiError('Unauthorized', 401, 'Unauthorized');
  for (const attrs of checksFor(req)) {
    const { allowed, reason } = await caller.authorizer.authorize(user, attrs);
    if (!allowed) return forbidden(user, attrs, reason);
  }
  return undefined;
}

/** What the REST filter would check for `req`; a POST of an agent by name is its create (create_agent never assigns). */
export function checksFor(req: ToolRequest): RequestAttributes[] {
  const search = new URLSearchParams(Object.entries(req.query).filter((e): e is [string, string] => typeof e[1] === 'string')).toString();
  const plan = planFor({ method: req.method, url: search ? `${req.path}?${search}` : req.path, query: req.query, hasBody: true, body: req.body });
  if ('needsBody' in plan) throw new Error(`the plan of ${req.method} ${req.path} asked for its body again`);
  const checks = [...plan.checks];
  if (plan.upsertAgent) {
    const { namespace } = plan.upsertAgent;
    checks.push({ resource: { verb: 'create', group: GROUP, version: VERSION, resource: 'agents', subresource: '', namespace, name: '' } });
  }
  return checks;
}

function toolError(err: ApiError): CallToolResult {
  const causes = err.details.causes?.map((c) => `${c.field}: ${c.message}`).join('; ');
  return {
    isError: true,
    content: [{ type: 'text', text: `${err.reason} (${err.code}): ${err.message}${causes && !err.message.includes(causes) ? ` (${causes})` : ''}` }],
  };
}
