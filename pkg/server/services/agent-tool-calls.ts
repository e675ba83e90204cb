// The server's side of the `agentplane` tools a manager agent's engine has (pkg/worker/
// agentplane-tools.ts): the worker relays each call over its control channel, and this answers it
// for the agent the worker's token speaks for, never for what the call claims. Only manager
// agents have the tools, and they reach only agents of their own namespace (docs/messages.md).

import { type Agent, agentPhase } from '../../api/agent.js';
import { type AgentSummary, type SendMessageInput, sendMessageInputSchema } from '../../api/agent-message.js';
import { ApiError } from '../../api/errors.js';
import type { ObjectRef } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import type { Registry } from '../../registry/registry.js';
import type { AgentMessages } from './agent-messages.js';

export interface ToolCaller {
  ref: ObjectRef;
  uid: string;
}

export interface ToolAnswer {
  isError: boolean;
  text: string;
}

/** Agents list_agents names at most (the model reads the answer: a namespace's worth). */
const LIST_MAX = 500;

const refused = (text: string): ToolAnswer => ({ isError: true, text });

export class AgentToolCalls {
  constructor(
    private readonly agents: Registry<Agent>,
    private readonly messages: AgentMessages,
  ) {}

  async answer(caller: ToolCaller, call: { tool: string; input: Record<string, unknown> }): Promise<ToolAnswer> {
    const me = await this.agents.get(caller.ref.namespace, caller.ref.name);
    if (!me || me.metadata.uid !== caller.uid || me.metadata.deletionTimestamp) return refused('your agent is gone');
    if (me.spec.role !== 'manager') return refused('only manager agents (role "manager") may use the agentplane tools');
    if (call.tool === 'list_agents') return this.listAgents(me);
    if (call.tool === 'send_message') return this.sendMessage(me, call.input);
    return refused(`unknown tool "${call.tool}"`);
  }

  private async listAgents(me: Agent): Promise<ToolAnswer> {
    const { items } = await this.agents.list({ namespace: me.metadata.namespace });
    const agents: AgentSummary[] = items
      .filter((a) => !a.metadata.deletionTimestamp)
      .slice(0, LIST_MAX)
      .map((a) => ({ name: a.metadata.name, status: agentPhase(a), role: a.spec.role, taskStatus: a.status.taskStatus || '' }));
    return { isError: false, text: JSON.stringify({ namespace: me.metadata.namespace, agents }) };
  }

  private async sendMessage(me: Agent, input: Record<string, unknown>): Promise<ToolAnswer> {
    const causes = validateSchema(sendMessageInputSchema, input);
    if (causes.length) return refused(`send_message: ${causes.map((c) => `${c.field} ${c.message}`).join('; ')}`);
    const { to, text } = input as unknown as SendMessageInput;
    const namespace = me.metadata.namespace;
    const slash = to.indexOf('/');
    const target = slash < 0 ? to : to.slice(slash + 1);
    if (slash >= 0 && to.slice(0, slash) !== namespace) {
      return refused(`refused: an agent may message only agents of its own namespace ("${namespace}"), not "${to}"`);
    }
    if (target === me.metadata.name) return refused('refused: an agent cannot message itself');
    try {
      const { response } = await this.messages.deliver(namespace, target, me.metadata.name, text, false);
      const how = {
        followUp: `into its running task ${response.task}`,
        task: `as its new task ${response.task}`,
        queued: 'queued: it sleeps and gets the message when it wakes',
      }[response.delivery];
      return { isError: false, text: `message delivered to "${target}" ${how}` };
    } catch (err) {
      if (err instanceof ApiError && err.code < 500)
        return refused(err.reason === 'NotFound' ? `no agent "${target}" in namespace "${namespace}"` : err.message);
      if (err instanceof ApiError) return refused(err.message);
      throw err;
    }
  }
}
