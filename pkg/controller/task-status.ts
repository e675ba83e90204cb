// How an event changes an agent's status: a pure function, so the rule is testable on its own.

import type { AgentStatus } from '../api/agent.js';
import { APPROVAL_INPUT_MAX_BYTES } from '../api/approval.js';
import { addTaskSpend, spendOf } from '../api/budget.js';
import { type AgentEvent, isTerminal, type TaskSpend } from '../api/event.js';
import { capEventSize } from '../api/event-size.js';

const MAX_MESSAGE = 200;

/**
 * Whether the event moves the task's state (taskStatus, sessionId, its approvals), not only its
 * message: written before the event counts as handled, so a restart finds it in the status.
 */
export function changesTaskState(ev: AgentEvent): boolean {
  return ev.type === 'task_started' || ev.type === 'approval_requested' || isTerminal(ev.type);
}

/**
 * Whether the event, not changing the task's state, sets the message: applying it after another
 * such event gives the same status as applying it alone. The rest (thinking, tool results) leave
 * the status as it is.
 */
export function movesMessage(ev: AgentEvent): boolean {
  return ev.type === 'text' || ev.type === 'user_message' || ev.type === 'tool_call';
}

export function applyEvent(status: AgentStatus, ev: AgentEvent): void {
  // A task's approvals live as long as the task: a new one starts with none (a task run again
  // after a restart keeps its own), an ended one keeps none.
  if (ev.type === 'task_started') status.approvals = status.approvals?.filter((a) => a.task === ev.task);
  if (isTerminal(ev.type) || status.approvals?.length === 0) delete status.approvals;
  if (isTerminal(ev.type)) addSpend(status, ev);
  switch (ev.type) {
    case 'approval_requested': {
      const p = ev.payload as AgentEvent<'approval_requested'>['payload'];
      if (status.approvals?.some((a) => a.id === p.id)) break;
      const input = capEventSize({ type: 'tool_call', payload: { id: p.id, tool: p.tool, input: p.input } }, APPROVAL_INPUT_MAX_BYTES).payload.input;
      const entry = { id: p.id, task: ev.task, tool: p.tool, input, requestedAt: ev.timestamp, expiresAt: p.expiresAt, onTimeout: p.onTimeout };
      status.approvals = [...(status.approvals ?? []), entry];
      status.lastTaskMessage = line(`Waiting for approval: ${describeToolCall(p.tool, p.input)}`);
      break;
    }
    case 'task_started': {
      const p = ev.payload as AgentEvent<'task_started'>['payload'];
      status.taskStatus = 'InProgress';
      status.lastTaskMessage = line(`Started: ${p.instructions}`);
      break;
    }
    case 'text': {
      const p = ev.payload as AgentEvent<'text'>['payload'];
      status.lastTaskMessage = line(p.content);
      break;
    }
    case 'user_message': {
      const p = ev.payload as AgentEvent<'user_message'>['payload'];
      status.lastTaskMessage = line(`Follow-up: ${p.content}`);
      break;
    }
    case 'tool_call': {
      const p = ev.payload as AgentEvent<'tool_call'>['payload'];
      status.lastTaskMessage = line(describeToolCall(p.tool, p.input));
      break;
    }
    case 'task_completed': {
      const p = ev.payload as AgentEvent<'task_completed'>['payload'];
      status.taskStatus = 'Complete';
      status.sessionId = p.session_id || status.sessionId;
      status.lastTaskMessage = line(p.result || 'Completed');
      break;
    }
    case 'task_cancelled': {
      const p = ev.payload as AgentEvent<'task_cancelled'>['payload'];
      status.taskStatus = 'Cancelled';
      status.lastTaskMessage = line(`Cancelled: ${p.reason}`);
      break;
    }
    case 'error': {
      const p = ev.payload as AgentEvent<'error'>['payload'];
      status.taskStatus = 'Error';
      status.lastTaskMessage = line(`Error: ${p.message}`);
      break;
    }
    default:
      break;
  }
}

/** A task's end adds what it spent, as the model proxy metered it, to the agent's spend (budgets). */
function addSpend(status: AgentStatus, ev: AgentEvent): void {
  const p = ev.payload as TaskSpend;
  const byModel = p.model_usage ?? (p.usage ? { unknown: p.usage } : undefined);
  if (!byModel) return;
  status.spend = addTaskSpend(status.spend, spendOf(byModel), new Date(ev.timestamp));
}

/** One line describing a tool call, the way a person would read it in `kubectl get -o wide`. */
export function describeToolCall(tool: string, input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  const detail = [i.description, i.command, i.file_path, i.path, i.pattern, i.url].find((v) => typeof v === 'string');
  return detail ? `${tool}: ${String(detail)}` : tool;
}

function line(s: string): string {
  const first = s.trim().split(/\r?\n/, 1)[0] ?? '';
  // No more UTF-16 units than the limit: no more code points either (every event of a stream is
  // folded into the status, so the common case stays cheap).
  if (first.length <= MAX_MESSAGE) return first;
  // Cut by code points, not UTF-16 units, so no character is split in half.
  const chars = [...first];
  return chars.length > MAX_MESSAGE ? `${chars.slice(0, MAX_MESSAGE - 1).join('')}…` : first;
}
