// The worker's side of tool-call approvals. The engine runs with bypassPermissions (its sandbox is
// the boundary, docs/security.md), so its permission callback is never asked; a PreToolUse hook
// is, before every tool call, and may take as long as it needs. For a tool the agent's policy
// holds, the hook reports an `approval_requested` event and waits for the server's decision
// (an `approval` message): allow runs the tool, deny hands the model the refusal as the tool's
// result and the task goes on. The timeout is the server's (it survives a restart of the server);
// here a call waits until a decision comes or the task ends.

import { isDeepStrictEqual } from 'node:util';
import type { HookCallbackMatcher, HookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { type ApprovalDecision, type ApprovalPolicy, MAX_APPROVAL_TIMEOUT_SECONDS, needsApproval } from '../api/approval.js';
import type { EventDraft } from '../api/event.js';
import type { CarriedApproval } from '../api/worker-protocol.js';

type Emit = (draft: EventDraft) => void;

interface Decision {
  decision: ApprovalDecision;
  reason?: string;
}

/**
 * The engine's hook timeout: past the longest approval timeout the server applies, so the
 * server's decision (its default at the deadline) always comes first.
 */
const HOOK_TIMEOUT_SECONDS = MAX_APPROVAL_TIMEOUT_SECONDS + 24 * 3600;

export class ApprovalGate {
  private policy?: ApprovalPolicy;
  private emit?: Emit;
  private readonly waiting = new Map<string, (d: Decision) => void>();
  /** A task run again after a restart: the approvals it had, not yet taken by a repeated call. */
  private carried: CarriedApproval[] = [];

  /** The running task's policy and event sink; none between tasks (nothing is held then). */
  begin(policy: ApprovalPolicy | undefined, emit: Emit, carried: CarriedApproval[] = []): void {
    this.policy = policy;
    this.emit = emit;
    this.carried = carried.map((c) => ({ ...c }));
  }

  /** The task ended: a call still waiting is refused (its turn is being interrupted anyway). */
  end(): void {
    this.policy = undefined;
    this.emit = undefined;
    this.carried = [];
    for (const resolve of [...this.waiting.values()]) resolve({ decision: 'deny', reason: 'the task ended before a decision' });
    this.waiting.clear();
  }

  /** A decision from the server: true when a tool call waited for it. */
  decide(id: string, d: Decision): boolean {
    const resolve = this.waiting.get(id);
    const carried = this.carried.find((c) => c.id === id && !c.decision);
    if (!resolve && carried) {
      // Decided before the task run again reached the call: its repeat takes the decision.
      Object.assign(carried, d);
      return true;
    }
    if (!resolve) return false;
    this.waiting.delete(id);
    resolve(d);
    return true;
  }

  /** The engine's hooks: one PreToolUse hook for every tool. */
  hooks(): { PreToolUse: HookCallbackMatcher[] } {
    return { PreToolUse: [{ hooks: [(input, _id, { signal }) => this.preToolUse(input, signal)], timeout: HOOK_TIMEOUT_SECONDS }] };
  }

  private async preToolUse(input: Parameters<HookCallbackMatcher['hooks'][number]>[0], signal: AbortSignal): Promise<HookJSONOutput> {
    if (input.hook_event_name !== 'PreToolUse') return {};
    const emit = this.emit;
    if (!emit || !needsApproval(this.policy, input.tool_name, input.tool_input)) return {};
    // A call repeated by a task run again takes the approval the first one had (asked once).
    const i = this.carried.findIndex((c) => c.tool === input.tool_name && isDeepStrictEqual(c.input, input.tool_input));
    const carried = i >= 0 ? this.carried.splice(i, 1)[0] : undefined;
    const id = carried?.id ?? input.tool_use_id;
    const decided = carried?.decision
      ? Promise.resolve<Decision>({ decision: carried.decision, ...(carried.reason ? { reason: carried.reason } : {}) })
      : new Promise<Decision>((resolve) => {
          this.waiting.set(id, resolve);
          signal.addEventListener('abort', () => this.decide(id, { decision: 'deny', reason: 'the tool call was interrupted' }), { once: true });
        });
    // The server adds the deadline and who may decide (WorkerEventPayloads in worker-protocol-schema.ts).
    if (!carried) emit({ type: 'approval_requested', payload: { id, tool: input.tool_name, input: input.tool_input } });
    const d = await decided;
    // The reason is the server's words (who decided and why, or the timeout): the model reads a denial's.
    const why = d.reason ? ` (${d.reason})` : '';
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: d.decision,
        permissionDecisionReason: d.decision === 'allow' ? `approved${why}` : `This tool call was not approved${why}. Do not try it again; go on without it.`,
      },
    };
  }
}
