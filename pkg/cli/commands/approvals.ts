// Tool-call approvals: `approvals <agent>` lists the running task's, `approve` and `deny` decide
// one (POST /api/v1/agents/:name/approvals/:id), and `run` asks on a terminal (askApproval).

import type { Command } from 'commander';
import type { Approval, ApprovalDecision } from '../../api/approval.js';
import type { AgentEvent } from '../../api/event.js';
import { ApiCallError } from '../client.js';
import type { EventRenderer } from '../event-renderer.js';
import { oneLine } from '../event-renderer.js';
import { age, renderTable } from '../output.js';
import { checkName, type Runner, type Session } from '../session.js';

const approvalsPath = (name: string, id = ''): string =>
  `/api/v1/agents/${encodeURIComponent(checkName('agent', name))}/approvals${id ? `/${encodeURIComponent(id)}` : ''}`;

export function registerApprovalCommands(program: Command, run: Runner): void {
  program
    .command('approvals')
    .description("an agent's tool-call approvals for its running task, pending first")
    .argument('<agent>')
    .option('-o, --output <format>', 'json')
    .action(run(list));
  for (const decision of ['allow', 'deny'] as const) {
    program
      .command(decision === 'allow' ? 'approve' : 'deny')
      .description(
        decision === 'allow' ? 'allow a tool call that waits for approval (it runs)' : 'deny a tool call that waits for approval (the model is told why)',
      )
      .argument('<agent>')
      .argument('<id>', 'the approval id (from `agentplane approvals <agent>` or the approval_requested event)')
      .option('--reason <text>', 'why; the model reads a denial’s reason')
      .action(
        run(async (s, name: string, id: string) => {
          const a = await decide(s, s.target.namespace, name, id, decision, (s.opts as { reason?: string }).reason);
          s.out(`approval/${a.id} of agent/${name}: ${decision === 'allow' ? 'allowed' : 'denied'} (${a.tool})\n`);
        }),
      );
  }
}

export async function decide(s: Session, ns: string, name: string, id: string, decision: ApprovalDecision, reason?: string): Promise<Approval> {
  const { body } = await s.client.call<Approval>('POST', approvalsPath(name, id), {
    query: { namespace: ns },
    body: { decision, ...(reason ? { reason } : {}) },
    kind: 'approval',
  });
  return body;
}

async function list(s: Session, name: string): Promise<void> {
  const { body } = await s.client.call<{ approvals: Approval[] }>('GET', approvalsPath(name), { query: { namespace: s.target.namespace }, kind: 'agent' });
  if ((s.opts as { output?: string }).output === 'json') return s.out(`${JSON.stringify(body.approvals, null, 2)}\n`);
  if (!body.approvals.length) return s.out(`agent/${name} has no approvals in its running task\n`);
  const rows = body.approvals.map((a) => [
    a.id,
    a.tool,
    oneLine(JSON.stringify(a.input ?? {}), 60),
    a.decision ? `${a.decision === 'allow' ? 'allowed' : 'denied'} by ${a.decidedBy}` : 'pending',
    a.decision ? '' : `in ${age(new Date().toISOString(), Date.parse(a.expiresAt))}`,
  ]);
  s.out(renderTable(['ID', 'TOOL', 'INPUT', 'STATE', 'EXPIRES'], rows));
}

/**
 * `run` on a terminal: asks whether to allow the call that waits. y allows, n denies, anything
 * else leaves it to someone else (or the timeout). A decision someone made first is said so.
 */
export async function askApproval(s: Session, renderer: EventRenderer, ns: string, name: string, ev: AgentEvent<'approval_requested'>): Promise<void> {
  const p = ev.payload;
  const { c } = s.style;
  renderer.pause();
  const stdin = process.stdin;
  const key = await new Promise<string>((resolve) => {
    stdin.setRawMode(true);
    stdin.resume();
    s.out(
      `\n${c.bold(`Allow ${p.tool}?`)} ${oneLine(JSON.stringify(p.input), 200)}\n  allow ${c.bold('[y]')}, deny ${c.bold('[n]')}, leave it for someone else ${c.bold('[any other key]')}? `,
    );
    stdin.once('data', (d: Buffer) => {
      stdin.setRawMode(false);
      stdin.pause();
      resolve(d.toString('utf8'));
    });
  });
  const decision = /^[yY]/.test(key) ? 'allow' : /^[nN]/.test(key) ? 'deny' : undefined;
  s.out(`${decision ?? 'left pending'}\n`);
  renderer.resume();
  if (!decision) return;
  try {
    await decide(s, ns, name, p.id, decision, 'decided at the terminal running the task');
  } catch (err) {
    if (!(err instanceof ApiCallError) || (err.status !== 409 && err.status !== 404)) throw err;
    renderer.note(c.dim(`not decided here: ${err.message}`));
  }
}
