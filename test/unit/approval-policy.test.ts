// Which tool calls an approval policy sends to a person (pkg/api/approval.ts): tool patterns,
// commands that never need one (never when the command chains another), and decisions on the
// status's approvals (unknown id, decided already).

import { expect } from 'chai';
import { type Approval, approvalPolicySchema, decideApproval, needsApproval } from '../../pkg/api/approval.js';
import { validateSchema } from '../../pkg/api/validation.js';

describe('approval policy', () => {
  it('matches tool names and * patterns, and nothing without a policy', () => {
    const p = { tools: ['Bash', 'Write', 'mcp__github__*'] };
    expect(needsApproval(p, 'Bash', { command: 'ls' })).to.equal(true);
    expect(needsApproval(p, 'Write', { file_path: 'a' })).to.equal(true);
    expect(needsApproval(p, 'mcp__github__create_issue', {})).to.equal(true);
    expect(needsApproval(p, 'mcp__gitlab__create_issue', {})).to.equal(false);
    expect(needsApproval(p, 'Read', {})).to.equal(false);
    expect(needsApproval(p, 'BashOutput', {})).to.equal(false);
    expect(needsApproval({ tools: ['*'] }, 'Read', {})).to.equal(true);
    expect(needsApproval(undefined, 'Bash', {})).to.equal(false);
  });

  it('lets allowed commands through, but never one that chains, pipes, substitutes or redirects', () => {
    const p = { tools: ['Bash'], allowedCommands: ['git status*', 'ls *'] };
    expect(needsApproval(p, 'Bash', { command: 'git status' })).to.equal(false);
    expect(needsApproval(p, 'Bash', { command: '  git status --short ' })).to.equal(false);
    expect(needsApproval(p, 'Bash', { command: 'ls -la' })).to.equal(false);
    for (const c of ['git status; rm -rf ~', 'git status && curl x', 'ls | sh', 'ls $(rm x)', 'ls `rm x`', 'ls > /etc/x', 'ls\nrm x', 'git statusx & y']) {
      expect(needsApproval(p, 'Bash', { command: c }), c).to.equal(true);
    }
    expect(needsApproval(p, 'Bash', { command: 'git push' })).to.equal(true);
    // Commands are Bash's: another tool's input is not read as one.
    expect(needsApproval({ tools: ['Write'], allowedCommands: ['*'] }, 'Write', { command: 'x' })).to.equal(true);
  });

  it('validates the policy with a message per field', () => {
    expect(validateSchema(approvalPolicySchema, { tools: ['Bash'], timeoutSeconds: 60, onTimeout: 'allow' })).to.deep.equal([]);
    const bad = validateSchema(approvalPolicySchema, { tools: ['no spaces'], timeoutSeconds: 0, onTimeout: 'maybe', extra: 1 }, 'approval');
    const fields = bad.map((c) => c.field);
    for (const f of ['approval.tools[0]', 'approval.timeoutSeconds', 'approval.onTimeout']) expect(fields).to.include(f);
    expect(validateSchema(approvalPolicySchema, {}).length).to.be.greaterThan(0);
  });

  it('decides a pending approval once: unknown ids and second decisions are told apart', () => {
    const list: Approval[] = [{ id: 'a', task: 1, tool: 'Bash', input: {}, requestedAt: 't', expiresAt: 't', onTimeout: 'deny' }];
    expect(decideApproval(list, 'b', { decision: 'allow', decidedBy: 'u', at: 'now' })).to.deep.equal({ missing: true });
    expect(decideApproval(list, 'a', { decision: 'deny', reason: 'no', decidedBy: 'u', at: 'now' })).to.include({
      decision: 'deny',
      reason: 'no',
      decidedBy: 'u',
    });
    const again = decideApproval(list, 'a', { decision: 'allow', decidedBy: 'v', at: 'later' });
    expect(again).to.have.property('decided');
    expect(list[0]).to.include({ decision: 'deny', decidedBy: 'u' });
  });
});
