// agentplane's own verbs as MCP tools (docs/mcp.md). Each tool is written as the REST mirror's
// request it stands for (`request`: method, path, query, body), so that it is authorized exactly
// as that request is (pkg/server/auth/attributes.ts, in server.ts) and reads its arguments with
// the same helpers; `run` then calls the service the REST route calls. No rule lives here.

import { z } from 'zod';
import { toAgentResponse } from '../../api/agent.js';
import { EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from '../../api/event.js';
import { intParam, namespaceOf, type Query, queryNamespaceOf } from '../params.js';
import { cancelResponse } from '../routes/agent-answers.js';
import type { AgentApprovals } from '../services/agent-approvals.js';
import type { AgentService } from '../services/agent-service.js';
import { pageQuery } from '../services/paging.js';
import type { SquadService } from '../services/squad-service.js';

/** The services the tools call: the ones the REST routes call. */
export interface McpServices {
  agents: AgentService;
  approvals: AgentApprovals;
  squads: SquadService;
}

/** The REST mirror's request a tool call stands for. */
export interface ToolRequest {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  query: Query;
  body?: unknown;
}

/** A tool's answer: the structured content, and one line of text for a person. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  summary: string;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  /** Only reads (MCP's readOnlyHint). */
  readOnly: boolean;
  input: z.ZodRawShape;
  output: z.ZodRawShape;
  request(args: Record<string, unknown>): ToolRequest;
  run(req: ToolRequest, services: McpServices, user: string): Promise<ToolAnswer>;
}

const name = z.string().describe("the agent's name");
const namespace = z.string().optional().describe('namespace; omitted: "default"');
const listNamespace = z.string().optional().describe('namespace to list; omitted: every namespace (the caller must be allowed to list them all)');
const obj = z.record(z.string(), z.unknown());
const q = (args: Record<string, unknown>, keys: string[]): Query => {
  const out: Query = {};
  for (const k of keys) {
    const v = args[k];
    // The input schemas give strings and integers only.
    if (typeof v === 'string' || typeof v === 'number') out[k] = String(v);
  }
  return out;
};
const seg = (s: unknown): string => encodeURIComponent(String(s));
const agentPath = (args: Record<string, unknown>, sub = ''): string => `/api/v1/agents/${seg(args.name)}${sub}`;

const listAgents: ToolDef = {
  name: 'list_agents',
  title: 'List agents',
  description: 'Lists agents with their status and task status (paged: pass `continue` from the previous answer).',
  readOnly: true,
  input: { namespace: listNamespace, limit: z.number().int().min(1).optional(), continue: z.string().optional() },
  output: { agents: z.array(obj), continue: z.string().optional() },
  request: (a) => ({ method: 'GET', path: '/api/v1/agents', query: q(a, ['namespace', 'limit', 'continue']) }),
  async run(req, s) {
    const { items, ...paging } = await s.agents.list(queryNamespaceOf(req.query), pageQuery(req.query));
    const agents = items.map(toAgentResponse);
    const lines = agents.map((a) => `${a.namespace}/${a.name}: ${a.status}${a.taskStatus ? ` (task ${a.taskStatus})` : ''}`);
    return { structured: { agents, ...paging }, summary: `${agents.length} agent(s)${lines.length ? `:\n${lines.join('\n')}` : ''}` };
  },
};

const getAgent: ToolDef = {
  name: 'get_agent',
  title: 'Get an agent',
  description: "One agent: its model, status, task status, the last task's message, pending approvals and spend.",
  readOnly: true,
  input: { name, namespace },
  output: { agent: obj },
  request: (a) => ({ method: 'GET', path: agentPath(a), query: q(a, ['namespace']) }),
  async run(req, s) {
    const agent = toAgentResponse(await s.agents.get(namespaceOf(req.query), nameOf(req)));
    return {
      structured: { agent },
      summary: `${agent.namespace}/${agent.name}: ${agent.status}, task ${agent.taskStatus || 'none'}${agent.lastTaskMessage ? `: ${agent.lastTaskMessage}` : ''}`,
    };
  },
};

const createAgent: ToolDef = {
  name: 'create_agent',
  title: 'Create an agent',
  description:
    'Creates an agent and starts its first task with `instructions` (POST /api/v1/agents). Refused when the agent exists: use run_task to give it a task.',
  readOnly: false,
  input: {
    name,
    namespace,
    instructions: z.string().describe('the first task'),
    model: z.string().optional(),
    systemPrompt: z.string().optional(),
    templateRef: z.string().optional(),
    connectors: z.array(z.string()).optional(),
    lifecycle: z.string().optional().describe('"", "Sleep" or "AutoDelete"'),
  },
  output: { agent: obj },
  // POST /api/v1/agents naming an agent: server.ts authorizes it as `create` on agents only,
  // since this tool never assigns a task to an existing agent.
  request: (a) => ({ method: 'POST', path: '/api/v1/agents', query: {}, body: a }),
  async run(req, s) {
    const { agent } = await s.agents.submitTask(req.body, { createOnly: true });
    const a = toAgentResponse(agent);
    return { structured: { agent: a }, summary: `agent ${a.namespace}/${a.name} created; its first task is ${a.taskStatus || 'pending'}` };
  },
};

const runTask: ToolDef = {
  name: 'run_task',
  title: 'Give an agent a task',
  description:
    'Sends `instructions` to an existing agent (PATCH /api/v1/agents/{name}): a new task when it is idle, a follow-up into its running task when it is busy. Read its progress with get_events.',
  readOnly: false,
  input: { name, namespace, instructions: z.string() },
  output: { agent: obj },
  request: (a) => ({ method: 'PATCH', path: agentPath(a), query: q(a, ['namespace']), body: { instructions: a.instructions } }),
  async run(req, s) {
    const { agent, pending } = await s.agents.patch(namespaceOf(req.query), nameOf(req), req.body);
    const a = toAgentResponse(agent);
    const taken = pending ? '; the follow-up is stored for its running task, which takes it at its next turn' : '';
    return { structured: { agent: a }, summary: `${a.namespace}/${a.name}: ${a.status}, task ${a.taskStatus || 'none'}${taken}` };
  },
};

const getEvents: ToolDef = {
  name: 'get_events',
  title: "Read an agent's events",
  description:
    "An agent's events, oldest first: task_started, text, tool_call, tool_result, approval_requested, task_completed, error... With `since` (an event's seq) only the newer ones: pass the last seq you saw to follow a task.",
  readOnly: true,
  input: {
    name,
    namespace,
    since: z.number().int().min(0).optional().describe('only events after this seq'),
    limit: z.number().int().min(1).optional().describe(`at most this many (default ${EVENTS_DEFAULT_LIMIT}, at most ${EVENTS_MAX_LIMIT})`),
  },
  output: { agent: z.string(), namespace: z.string(), events: z.array(obj) },
  request: (a) => ({ method: 'GET', path: agentPath(a, '/events'), query: q(a, ['namespace', 'since', 'limit']) }),
  async run(req, s) {
    const ns = namespaceOf(req.query);
    const limit = intParam(req.query, 'limit', { min: 1, max: EVENTS_MAX_LIMIT, default: EVENTS_DEFAULT_LIMIT, clamp: true })!;
    const since = intParam(req.query, 'since', { min: 0 });
    const events = since === undefined ? await s.agents.history(ns, nameOf(req), limit) : await s.agents.eventsAfter(ns, nameOf(req), since, limit);
    const last = events.at(-1);
    const summary = events.length ? `${events.length} event(s), seq ${events[0].seq} to ${last!.seq}; last: ${last!.type}` : 'no events';
    return { structured: { agent: nameOf(req), namespace: ns, events }, summary };
  },
};

const cancelTask: ToolDef = {
  name: 'cancel_task',
  title: "Cancel an agent's task",
  description: "Cancels the agent's running task (POST /api/v1/agents/{name}/cancel); nothing happens when none runs.",
  readOnly: false,
  input: { name, namespace },
  output: { agent: obj, cancelled: z.boolean(), message: z.string() },
  request: (a) => ({ method: 'POST', path: agentPath(a, '/cancel'), query: q(a, ['namespace']) }),
  async run(req, s) {
    const { agent, settled, running } = await s.agents.cancel(namespaceOf(req.query), nameOf(req));
    const { cancelled, message, ...rest } = cancelResponse(agent, settled, running);
    return { structured: { agent: rest, cancelled, message }, summary: message };
  },
};

const listApprovals: ToolDef = {
  name: 'list_approvals',
  title: "List an agent's approvals",
  description: "The tool calls of the agent's running task that wait for a person's decision (pending first), and the decided ones.",
  readOnly: true,
  input: { name, namespace },
  output: { agent: z.string(), namespace: z.string(), approvals: z.array(obj) },
  request: (a) => ({ method: 'GET', path: agentPath(a, '/approvals'), query: q(a, ['namespace']) }),
  async run(req, s) {
    const ns = namespaceOf(req.query);
    const approvals = await s.approvals.list(ns, nameOf(req));
    const pending = approvals.filter((a) => !a.decision);
    const lines = pending.map((a) => `${a.id}: ${a.tool} ${JSON.stringify(a.input).slice(0, 200)}`);
    return {
      structured: { agent: nameOf(req), namespace: ns, approvals },
      summary: `${pending.length} pending, ${approvals.length - pending.length} decided${lines.length ? `:\n${lines.join('\n')}` : ''}`,
    };
  },
};

const decideApproval: ToolDef = {
  name: 'decide_approval',
  title: 'Decide an approval',
  description:
    "Allows or denies a tool call that waits for a person's decision (POST /api/v1/agents/{name}/approvals/{id}); the decision is yours, recorded with your user name.",
  readOnly: false,
  input: {
    name,
    namespace,
    id: z.string().describe('the approval id, from list_approvals'),
    decision: z.enum(['allow', 'deny']),
    reason: z.string().optional(),
  },
  output: { approval: obj },
  request: (a) => ({
    method: 'POST',
    path: agentPath(a, `/approvals/${seg(a.id)}`),
    query: q(a, ['namespace']),
    body: { decision: a.decision, ...(a.reason !== undefined ? { reason: a.reason } : {}) },
  }),
  async run(req, s, user) {
    const id = decodeURIComponent(req.path.split('/').at(-1)!);
    const approval = await s.approvals.decide(namespaceOf(req.query), nameOf(req), id, req.body, user);
    return { structured: { approval }, summary: `approval ${id} of ${nameOf(req)}: ${approval.decision}` };
  },
};

const listSquads: ToolDef = {
  name: 'list_squads',
  title: 'List squads',
  description: 'Lists squads (agents that run together) with their members.',
  readOnly: true,
  input: { namespace: listNamespace, limit: z.number().int().min(1).optional(), continue: z.string().optional() },
  output: { squads: z.array(obj), continue: z.string().optional() },
  request: (a) => ({ method: 'GET', path: '/api/v1/squads', query: q(a, ['namespace', 'limit', 'continue']) }),
  async run(req, s) {
    const { items, ...paging } = await s.squads.list(queryNamespaceOf(req.query), pageQuery(req.query));
    const squads = await Promise.all(items.map((x) => s.squads.toResponse(x)));
    return {
      structured: { squads, ...paging },
      summary: `${squads.length} squad(s)${squads.length ? `: ${squads.map((x) => `${x.namespace}/${x.name}`).join(', ')}` : ''}`,
    };
  },
};

/** Every tool, in the order tools/list gives them. */
export const TOOLS: readonly ToolDef[] = [listAgents, getAgent, createAgent, runTask, getEvents, cancelTask, listApprovals, decideApproval, listSquads];

/** The agent's name from a request's path (/api/v1/agents/{name}[/...]). */
function nameOf(req: ToolRequest): string {
  return decodeURIComponent(req.path.split('/')[4] ?? '');
}
