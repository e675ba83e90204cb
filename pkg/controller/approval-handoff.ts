// Tool-call approvals, the controller's part. The agent's status keeps the running task's
// approvals (added as their `approval_requested` events are ingested, decided by the approvals
// service on any replica), so a restart loses none. Each pass here:
//   - applies a policy's `onTimeout` to an approval past its deadline (the deadline is kept in the
//     status, so it holds across restarts);
//   - announces each decision once as an `approval_decided` event;
//   - hands it to the worker, again after the worker reconnects, until the worker answers, and
//     marks it handed over.
// In memory only: the decisions announced by this process (a restart may announce one twice
// when it stopped between the event and the status write that follows it).

import type { Agent } from '../api/agent.js';
import { type Approval, APPROVAL_TIMEOUT_DECIDER, decideApproval } from '../api/approval.js';
import type { AgentEvent, EventDraft } from '../api/event.js';
import type { ObjectRef } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime } from '../runtime/runtime.js';

/** How long a worker may take to answer a decision, and how soon one it did not take is sent again. */
const HANDOVER_TIMEOUT_MS = 10_000;
const HANDOVER_RETRY_MS = 500;

export interface ApprovalHandoffDeps {
  agents: Registry<Agent>;
  runtime: AgentRuntime;
  emit(agent: Agent, draft: EventDraft): Promise<AgentEvent | undefined>;
  now?: () => number;
}

export class ApprovalHandoff {
  private readonly announced = new Set<string>();

  constructor(private readonly d: ApprovalHandoffDeps) {}

  /**
   * Does what the agent's approvals need now; returns how soon to look again (the next deadline,
   * or a retry of a decision the worker could not take yet), or undefined when nothing waits.
   */
  async settle(agent: Agent, log: Logger): Promise<number | undefined> {
    const now = this.d.now?.() ?? Date.now();
    const mine = (a: Approval): boolean => a.task === agent.spec.task;
    if (agent.status.approvals?.some((a) => mine(a) && !a.decision && Date.parse(a.expiresAt) <= now)) agent = await this.expire(agent, now);
    const approvals = (agent.status.approvals ?? []).filter(mine);
    let retry = false;
    const toHand = approvals.filter((a) => a.decision && !a.handedOver);
    const worker = toHand.length ? await this.d.runtime.status(agent.metadata) : undefined;
    for (const a of toHand) {
      await this.announce(agent, a);
      if (worker?.phase !== 'Ready' || worker.runningTask !== agent.spec.task) continue; // its `ready` brings us back
      const taken = await this.d.runtime.approve(agent.metadata, a.task, { id: a.id, decision: a.decision!, reason: workerReason(a) }, HANDOVER_TIMEOUT_MS);
      if (taken === undefined) {
        retry = true;
        continue;
      }
      await this.mark(agent.metadata, a.id);
      log.info({ task: a.task, approval: a.id, decision: a.decision, taken }, 'approval decision handed over');
    }
    const pending = approvals.filter((a) => !a.decision).map((a) => Math.max(0, Date.parse(a.expiresAt) - now));
    const next = Math.min(...pending, retry ? HANDOVER_RETRY_MS : Infinity);
    return Number.isFinite(next) ? next + 10 : undefined;
  }

  /** The agent is gone or its task ended: what was announced for it is forgotten. */
  forget(ref: ObjectRef): void {
    const prefix = `${ref.namespace}/${ref.name}:`;
    for (const k of this.announced) if (k.startsWith(prefix)) this.announced.delete(k);
  }

  /** Applies each expired approval's default decision. */
  private expire(agent: Agent, now: number): Promise<Agent> {
    const at = new Date(now).toISOString();
    return this.d.agents.updateStatus(agent.metadata.namespace, agent.metadata.name, (s, cur) => {
      if (cur.metadata.uid !== agent.metadata.uid) return;
      for (const a of s.approvals ?? []) {
        if (a.decision || Date.parse(a.expiresAt) > now) continue;
        const seconds = Math.round((Date.parse(a.expiresAt) - Date.parse(a.requestedAt)) / 1000);
        decideApproval(s.approvals, a.id, { decision: a.onTimeout, reason: `nobody decided within ${seconds} s`, decidedBy: APPROVAL_TIMEOUT_DECIDER, at });
      }
    });
  }

  private async announce(agent: Agent, a: Approval): Promise<void> {
    const key = `${agent.metadata.namespace}/${agent.metadata.name}:${agent.metadata.uid}:${a.task}:${a.id}`;
    if (this.announced.has(key)) return;
    this.announced.add(key);
    const payload = { id: a.id, tool: a.tool, decision: a.decision!, ...(a.reason ? { reason: a.reason } : {}), decidedBy: a.decidedBy ?? '' };
    await this.d.emit(agent, { type: 'approval_decided', payload });
  }

  private async mark(ref: ObjectRef, id: string): Promise<void> {
    await this.d.agents.updateStatus(ref.namespace, ref.name, (s) => {
      const a = s.approvals?.find((x) => x.id === id);
      if (a) a.handedOver = true;
    });
  }
}

/** What the worker passes the engine (and a denial the model): who decided, and why. */
export function workerReason(a: Approval): string {
  const by = a.decidedBy === APPROVAL_TIMEOUT_DECIDER ? 'the approval timed out' : `${a.decision === 'allow' ? 'allowed' : 'denied'} by ${a.decidedBy}`;
  return a.reason ? `${by}: ${a.reason}` : by;
}
