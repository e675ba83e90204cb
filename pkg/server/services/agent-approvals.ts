// Tool-call approvals, the deciding side (both APIs): list an agent's approvals and decide one.
// A decision is written into the agent's status (a conditional write: of two deciders, one wins
// and the other gets 409); the agent controller announces it (`approval_decided`) and hands it to
// the worker (pkg/controller/approval-handoff.ts), so any replica decides alike and a decision
// made while the worker reconnects reaches it when it is back.

import type { Agent } from '../../api/agent.js';
import { type Approval, APPROVAL_ID_PATTERN, type ApprovalDecisionRequest, approvalDecisionRequestSchema, decideApproval } from '../../api/approval.js';
import { ApiError, conflict, invalid } from '../../api/errors.js';
import { validateSchema } from '../../api/validation.js';
import type { Registry } from '../../registry/registry.js';

export const APPROVAL_KIND = 'Approval';

export class AgentApprovals {
  constructor(private readonly agents: Registry<Agent>) {}

  /** The running task's approvals, pending first, then decided ones (newest request last in each). */
  async list(namespace: string, name: string): Promise<Approval[]> {
    const agent = await this.agents.mustGet(namespace, name);
    const all = agent.status.approvals ?? [];
    return [...all.filter((a) => !a.decision), ...all.filter((a) => a.decision)];
  }

  /** Decides a pending approval as `user`; 404 for an unknown id, 409 for one decided already. */
  async decide(namespace: string, name: string, id: string, body: unknown, user: string): Promise<Approval> {
    const causes = validateSchema(approvalDecisionRequestSchema, body);
    if (causes.length) throw invalid('ApprovalDecisionRequest', id, causes);
    if (!new RegExp(APPROVAL_ID_PATTERN).test(id)) throw unknownApproval(name, namespace, id);
    const req = body as ApprovalDecisionRequest;
    const reason = req.reason?.trim();
    let decided: Approval | undefined;
    await this.agents.updateStatus(namespace, name, (s) => {
      const r = decideApproval(s.approvals, id, { decision: req.decision, ...(reason ? { reason } : {}), decidedBy: user, at: new Date().toISOString() });
      if ('missing' in r) throw unknownApproval(name, namespace, id);
      if ('decided' in r) {
        const d = r.decided;
        throw conflict(
          `approval "${id}" of agent "${name}" was already decided: ${d.decision} by ${d.decidedBy} at ${d.decidedAt}; a decision cannot be changed`,
          { kind: APPROVAL_KIND, name: id },
        );
      }
      decided = r;
    });
    return decided!;
  }
}

function unknownApproval(name: string, namespace: string, id: string): ApiError {
  const message = `agent "${name}" in namespace "${namespace}" has no approval "${id}" in its running task (approvals end with their task; GET .../approvals lists them)`;
  return new ApiError('NotFound', 404, message, { kind: APPROVAL_KIND, name: id });
}
