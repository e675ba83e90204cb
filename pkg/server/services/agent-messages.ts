// Messages to agents (docs/messages.md), behind POST /api/v1/agents/:name/messages, the aggregated
// API's agents/messages and a manager agent's send_message tool (agent-tool-calls.ts). A message
// goes where the receiver is: into its running task as a follow-up (stored on the agent and handed
// over by the agent controller, as steering is), as a new task on an idle agent, or queued on a
// sleeping one (an annotation the message controller turns into its next task once it is awake).
// Each delivery is recorded as a `message` event on the receiver and, when the sender is an agent
// of the namespace, on the sender.

import { AGENT_KIND, type Agent, ASLEEP, isBusy } from '../../api/agent.js';
import {
  MAX_QUEUED_MESSAGES,
  type MessageDelivery,
  type MessageRequest,
  messagePrompt,
  messageRequestSchema,
  type MessageResponse,
  queuedMessages,
  setQueuedMessages,
} from '../../api/agent-message.js';
import { isTrue } from '../../api/condition.js';
import { ApiError, conflict, invalid } from '../../api/errors.js';
import type { MessagePayload } from '../../api/event.js';
import { NAME_MAX_LENGTH } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { streamOf } from '../../controller/agent-controller.js';
import type { EventLog } from '../../registry/event-log.js';
import { type Registry, REST_OWNER } from '../../registry/registry.js';
import type { AgentService } from './agent-service.js';
import { FOLLOW_UP_WAIT_MS, handOverFollowUp, taskOver } from './agent-wait.js';

/** The agent changed between the read and the write (woke, took a task): look again. */
const LOOK_AGAIN = new Error('look again');

/** Asleep, or about to be (lifecycle Sleep on an idle agent): a message waits for the wake. */
const sleeping = (a: Agent): boolean => !isBusy(a) && (isTrue(a.status.conditions, ASLEEP) || a.spec.lifecycle === 'Sleep');

export interface Delivered {
  response: MessageResponse;
  /** 200 delivered, 202 queued. */
  code: 200 | 202;
}

export class AgentMessages {
  constructor(
    private readonly agents: Registry<Agent>,
    private readonly events: EventLog,
    private readonly service: AgentService,
    /** How long to wait for a running task's worker to take the message. */
    private readonly timeoutMs = FOLLOW_UP_WAIT_MS,
  ) {}

  /** POST …/messages: `body` checked, `from` defaulting to the authenticated user. */
  async send(namespace: string, name: string, body: unknown, user: string): Promise<Delivered> {
    const causes = validateSchema(messageRequestSchema, body);
    if (causes.length) throw invalid('MessageRequest', name, causes);
    const req = body as MessageRequest;
    return this.deliver(namespace, name, req.from ?? user, req.text, req.wake ?? false);
  }

  /** Delivers `text` from `from` to the agent `namespace/name`; 404 when it does not exist. */
  async deliver(namespace: string, name: string, from: string, text: string, wake: boolean): Promise<Delivered> {
    const content = messagePrompt(from, text);
    for (let attempt = 0; attempt < 4; attempt++) {
      const agent = await this.agents.mustGet(namespace, name);
      if (agent.metadata.deletionTimestamp) throw conflict(`agent "${name}" is being deleted and takes no messages`, { kind: AGENT_KIND, name });
      let outcome: { agent: Agent; delivery: MessageDelivery; task: number; woken?: boolean; pending?: boolean } | undefined;
      if (isBusy(agent)) outcome = await this.followUp(agent, content);
      else if (sleeping(agent)) outcome = await this.enqueue(agent, from, text, wake);
      else outcome = await this.newTask(agent, content);
      if (!outcome) continue; // the agent moved on between the read and the delivery
      await this.record(outcome.agent, from, text, outcome.delivery, outcome.task);
      const response: MessageResponse = { agent: name, namespace, from, delivery: outcome.delivery, task: outcome.task, woken: outcome.woken ?? false };
      return { response, code: outcome.delivery === 'queued' || outcome.pending ? 202 : 200 };
    }
    throw conflict(`agent "${name}" kept starting and ending tasks; send the message again`, { kind: AGENT_KIND, name });
  }

  /** Into the running task, as steering; undefined when the task ended without it. */
  private async followUp(agent: Agent, content: string) {
    const { namespace, name } = agent.metadata;
    const task = agent.spec.task;
    const handed = await handOverFollowUp(this.agents, { namespace, name }, task, { content }, this.timeoutMs);
    if (!handed.stored) return undefined;
    // Stored for the running task, which takes it at its next turn (a task held, say by an
    // approval, takes it later): accepted (202), not an error to send again.
    if (!handed.settled) return { agent: handed.agent, delivery: 'followUp' as const, task, pending: true };
    if (taskOver(handed.agent, task)) {
      // Taken just before the task ended, or dropped with it: its user_message tells which.
      const recent = await this.events.list(streamOf(handed.agent), { limit: 50 });
      const taken = recent.some((e) => e.task === task && e.type === 'user_message' && (e.payload as { content?: string }).content === content);
      if (!taken) return undefined;
    }
    return { agent: handed.agent, delivery: 'followUp' as const, task };
  }

  /** A new task on the idle agent; undefined when it became busy first. */
  private async newTask(agent: Agent, content: string) {
    const { namespace, name } = agent.metadata;
    try {
      const { agent: after } = await this.service.submitTask({ name, namespace, instructions: content });
      return { agent: after, delivery: 'task' as const, task: after.spec.task };
    } catch (err) {
      if (err instanceof ApiError && err.reason === 'Conflict') return undefined;
      throw err;
    }
  }

  /** Kept on the sleeping agent until it wakes; with `wake`, woken in the same write. */
  private async enqueue(agent: Agent, from: string, text: string, wake: boolean) {
    const { namespace, name } = agent.metadata;
    let full = false;
    const after = await this.agents
      .update(
        namespace,
        name,
        (a) => {
          if (!sleeping(a)) throw LOOK_AGAIN;
          const queued = queuedMessages(a);
          if (queued.length >= MAX_QUEUED_MESSAGES) {
            full = true;
            throw LOOK_AGAIN;
          }
          setQueuedMessages(a, [...queued, { from, text }]);
          if (wake) a.spec.lifecycle = 'Wake';
        },
        { owner: REST_OWNER },
      )
      .catch((err: unknown) => {
        if (err === LOOK_AGAIN && !full) return undefined;
        if (err === LOOK_AGAIN) {
          throw conflict(`agent "${name}" sleeps with ${MAX_QUEUED_MESSAGES} messages queued already; wake it (wake: true) to deliver them`, {
            kind: AGENT_KIND,
            name,
          });
        }
        throw err;
      });
    if (!after) return undefined;
    return { agent: after, delivery: 'queued' as const, task: after.spec.task, woken: wake };
  }

  /** The `message` events: the receiver's, and the sender's when it is an agent of the namespace. */
  private async record(receiver: Agent, from: string, text: string, delivery: MessageDelivery, task: number): Promise<void> {
    const { namespace, name } = receiver.metadata;
    const payload = (direction: MessagePayload['direction']): MessagePayload => ({ from, to: name, text, direction, delivery });
    await this.events.append(streamOf(receiver), { type: 'message', task: Math.max(1, task), payload: payload('received') });
    const sender = from.length <= NAME_MAX_LENGTH && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(from) ? await this.agents.get(namespace, from) : undefined;
    if (!sender || sender.metadata.deletionTimestamp) return;
    await this.events.append(streamOf(sender), { type: 'message', task: Math.max(1, sender.spec.task), payload: payload('sent') });
  }
}
