// The tool calls that wait for approval, read from the events the agent page already has: an
// approval_requested not yet followed by its approval_decided, in a task that has not ended.

import { isTaskEnd } from './task-events';
import type { AgentEvent } from './types';

export interface PendingApproval {
  id: string;
  tool: string;
  input: unknown;
  expiresAt: string;
  onTimeout: string;
  deciders: string;
}

export function pendingApprovals(events: readonly AgentEvent[]): PendingApproval[] {
  const pending = new Map<string, PendingApproval>();
  for (const e of events) {
    if (e.type === 'approval_requested') pending.set(String(e.payload.id), e.payload as PendingApproval);
    else if (e.type === 'approval_decided') pending.delete(String(e.payload.id));
    else if (isTaskEnd(e) || e.type === 'task_started') pending.clear();
  }
  return [...pending.values()];
}
