// `agentplane run <agent> "<task>"`: send the task (creating the agent if it does not exist),
// then follow the task live until it ends. Exit codes in exit-codes.ts (docs/cli.md).
//
// Ctrl-C (`--on-interrupt`): on a terminal it asks whether to cancel the task or detach from
// it; elsewhere it cancels, because nobody can answer and a task nobody watches still spends
// model tokens. A second Ctrl-C while asked, or while the cancel is confirmed, detaches.
//
// A tool call that waits for approval (the agent's `approval` policy, --require-approval) is
// asked about on a terminal: allow, deny, or leave it to someone else (approvals.ts).

import type { Command } from 'commander';
import type { ApprovalPolicy } from '../../api/approval.js';
import type { AgentEvent } from '../../api/event.js';
import { ApiCallError } from '../client.js';
import { EventRenderer, type Outcome, outcomeOf } from '../event-renderer.js';
import { CliError, EXIT } from '../exit-codes.js';
import { followAgent } from '../follow.js';
import { checkName, type Runner, type Session } from '../session.js';
import { taskNumber } from './agent-task.js';
import { askApproval } from './approvals.js';

const INTERRUPT_MODES = ['ask', 'cancel', 'detach'] as const;
type InterruptMode = (typeof INTERRUPT_MODES)[number];

const collect = (v: string, all: string[]): string[] => [...all, v];

export function registerRun(program: Command, run: Runner): void {
  program
    .command('run')
    .description('send a task to an agent (creating it if missing) and follow it live')
    .argument('<agent>', 'agent name (created when it does not exist)')
    .argument('<task>', 'the task, in words')
    .option('--model <model>', 'model for the agent')
    .option('--connector <name>', 'attach a connector (repeat for more)', collect, [])
    .option('--skill <name>', 'attach a skill (repeat for more; agentplane skill ls)', collect, [])
    .option('--memory <name>', 'attach a memory (repeat for more; agentplane memory ls)', collect, [])
    .option('--system-prompt <text>', 'custom system prompt')
    .option('--role <role>', 'manager or worker')
    .option('--template <name>', 'pod template (templateRef)')
    .option('--priority <n>', "place in the namespace's line when the task waits for a cap: higher first (-1000 to 1000, default 0)")
    .option('--require-approval <tool>', 'a tool (or pattern, e.g. "mcp__github__*") whose calls wait for a person (repeat for more)', collect, [])
    .option('--allow-command <pattern>', 'a Bash command pattern that never needs approval (repeat for more)', collect, [])
    .option('--approval-timeout <seconds>', 'how long a call waits for a decision (default 600)')
    .option('--on-approval-timeout <decision>', 'allow or deny (default) once the timeout passes')
    .option('--from-checkpoint <agent/checkpoint>', "a new agent starts with that checkpoint's files and conversation (agentplane checkpoint ls)")
    .option('--json', 'print the raw events, one JSON object per line')
    .option('--on-interrupt <what>', 'what Ctrl-C does: ask, cancel or detach (default: ask on a terminal, else cancel)')
    .addHelpText('after', '\nExit codes: 0 completed, 1 failed (error event), 3 cancelled, 4 refused by the server, 5 server unreachable, 130 detached.\n')
    .action(run(runTask));
}

async function runTask(s: Session, name: string, task: string): Promise<void> {
  checkName('agent', name);
  const o = s.opts as {
    model?: string;
    connector: string[];
    systemPrompt?: string;
    role?: string;
    template?: string;
    json?: boolean;
    onInterrupt?: string;
  };
  const interactive = s.style.interactive && Boolean(process.stdin.isTTY);
  const mode = (o.onInterrupt ?? (interactive ? 'ask' : 'cancel')) as InterruptMode;
  if (!INTERRUPT_MODES.includes(mode))
    throw new CliError(`--on-interrupt must be one of ${INTERRUPT_MODES.join(', ')}, got "${o.onInterrupt}"`, undefined, EXIT.USAGE);
  if (mode === 'ask' && !interactive) throw new CliError('--on-interrupt ask needs a terminal to ask on', 'use cancel or detach', EXIT.USAGE);

  const ns = s.target.namespace;
  const body = {
    name,
    namespace: ns,
    instructions: task,
    ...(o.model ? { model: o.model } : {}),
    ...(o.connector.length ? { connectors: o.connector } : {}),
    ...(o.systemPrompt ? { systemPrompt: o.systemPrompt } : {}),
    ...(o.role ? { role: o.role } : {}),
    ...(o.template ? { templateRef: o.template } : {}),
    ...checkedSettings(s.opts as unknown as RunFlags),
  };
  // Events after the stream's last one before this task are this task's (or later ones').
  const since = await lastSeq(s, name);
  const { status } = await s.client.call('POST', '/api/v1/agents', { body, kind: 'agent', ns });
  // The task number tells this task's end from an earlier one's (unknown: the first end event will do).
  const number = await taskNumber(s, name);
  const { c } = s.style;
  if (!o.json) s.err(c.dim(`${status === 201 ? 'created' : 'tasked'} agent/${name} in namespace ${ns}${number ? `, task ${number}` : ''}\n`));

  const renderer = new EventRenderer({ style: s.style, write: s.out, spinners: !o.json && s.style.interactive, callLines: !o.json && !s.style.interactive });
  let outcome: Outcome | undefined;
  // One question at a time: approvals asked for together are asked in turn.
  let asking = Promise.resolve();
  const f = followAgent(s.client, ns, name, since, (ev: AgentEvent) => {
    if (number !== undefined && ev.task < number) return false;
    if (o.json) s.out(`${JSON.stringify(ev)}\n`);
    else renderer.event(ev);
    if (ev.type === 'approval_requested' && interactive && !o.json) {
      asking = asking
        .then(() => askApproval(s, renderer, ns, name, ev as AgentEvent<'approval_requested'>))
        .catch((err: unknown) => s.err(`agentplane: could not decide: ${(err as Error).message}\n`));
    }
    outcome = outcomeOf(ev.type);
    return outcome !== undefined;
  });

  let detached = false;
  let interrupted = false;
  const detach = (): void => {
    detached = true;
    renderer.close();
    s.err(`\ndetached: agent/${name} goes on with its task; follow it with \`agentplane logs -f ${name} -n ${ns}\`\n`);
    f.stop();
  };
  const cancel = async (): Promise<void> => {
    if (o.json) s.err('cancelling the task…\n');
    else renderer.note(c.yellow('cancelling the task…'));
    try {
      await s.client.call('POST', `/api/v1/agents/${encodeURIComponent(name)}/cancel`, { query: { namespace: ns }, kind: 'agent' });
    } catch (err) {
      // 409: it ended meanwhile; its end event is on its way.
      if (!(err instanceof ApiCallError && err.status === 409)) throw err;
    }
  };
  const onSigint = (): void => {
    if (interrupted) return detach();
    interrupted = true;
    const act = async (): Promise<void> => {
      const choice = mode === 'ask' ? await ask(s, renderer) : mode;
      if (choice === 'detach') return detach();
      if (choice === 'cancel') return cancel();
      interrupted = false; // kept watching
    };
    act().catch((err: unknown) => {
      s.err(`agentplane: could not cancel: ${(err as Error).message}\n`);
      detach();
    });
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', detach);
  try {
    await f.done;
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', detach);
    renderer.close();
  }
  if (detached) process.exitCode = EXIT.DETACHED;
  else if (outcome === 'failed') process.exitCode = EXIT.TASK_FAILED;
  else if (outcome === 'cancelled') process.exitCode = EXIT.TASK_CANCELLED;
}

/** The newest event's seq; 0 for an agent that does not exist yet (or has no events). */
async function lastSeq(s: Session, name: string): Promise<number> {
  try {
    const { body } = await s.client.call<{ events: AgentEvent[] }>('GET', `/api/v1/agents/${encodeURIComponent(name)}/events`, {
      query: { namespace: s.target.namespace, limit: 1 },
      kind: 'agent',
    });
    return Math.max(0, ...body.events.map((e) => e.seq));
  } catch (err) {
    if (err instanceof ApiCallError && err.status === 404) return 0;
    throw err;
  }
}

/** Asks on the terminal: c cancels, d (or Ctrl-C again) detaches, anything else keeps watching. */
function ask(s: Session, renderer: EventRenderer): Promise<'cancel' | 'detach' | 'continue'> {
  renderer.pause();
  const { c } = s.style;
  const stdin = process.stdin;
  return new Promise((resolve) => {
    // Raw mode before the question: a key typed the moment it shows must not sit in the
    // terminal's line buffer waiting for Enter.
    stdin.setRawMode(true);
    stdin.resume();
    s.out(
      `\n${c.bold('Interrupted.')} Cancel the task ${c.bold('[c]')}, detach and leave it running ${c.bold('[d]')}, or keep watching ${c.bold('[any other key]')}? `,
    );
    stdin.once('data', (d: Buffer) => {
      stdin.setRawMode(false);
      stdin.pause();
      const key = d.toString('utf8');
      // eslint-disable-next-line no-control-regex -- \x03 is the Ctrl-C byte a raw-mode terminal sends
      const choice = /^[cCyY\r\n]/.test(key) ? 'cancel' : /^[dD\x03]/.test(key) ? 'detach' : 'continue';
      s.out(`${choice}\n`);
      renderer.resume();
      resolve(choice);
    });
  });
}

/** `--priority`, `--from-checkpoint` and the approval flags as the request's fields, checked. */
type RunFlags = ApprovalFlags & { priority?: string; fromCheckpoint?: string; skill: string[]; memory: string[] };

function checkedSettings(o: RunFlags): {
  priority?: number;
  approval?: ApprovalPolicy;
  fromCheckpoint?: string;
  skills?: string[];
  memories?: string[];
} {
  const priority = o.priority === undefined ? undefined : Number(o.priority);
  if (priority !== undefined && !Number.isInteger(priority))
    throw new CliError(`--priority must be a whole number, got "${o.priority}"`, undefined, EXIT.USAGE);
  const approval = approvalPolicy(o);
  return {
    ...(priority !== undefined ? { priority } : {}),
    ...(approval ? { approval } : {}),
    ...(o.fromCheckpoint ? { fromCheckpoint: o.fromCheckpoint } : {}),
    ...(o.skill.length ? { skills: o.skill } : {}),
    ...(o.memory.length ? { memories: o.memory } : {}),
  };
}

interface ApprovalFlags {
  requireApproval: string[];
  allowCommand: string[];
  approvalTimeout?: string;
  onApprovalTimeout?: string;
}

/** The agent's approval policy from the flags; none without --require-approval. */
function approvalPolicy(o: ApprovalFlags): ApprovalPolicy | undefined {
  const timeout = o.approvalTimeout === undefined ? undefined : Number(o.approvalTimeout);
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0))
    throw new CliError(`--approval-timeout must be a whole number of seconds, got "${o.approvalTimeout}"`, undefined, EXIT.USAGE);
  if (o.onApprovalTimeout !== undefined && o.onApprovalTimeout !== 'allow' && o.onApprovalTimeout !== 'deny')
    throw new CliError(`--on-approval-timeout must be allow or deny, got "${o.onApprovalTimeout}"`, undefined, EXIT.USAGE);
  if (!o.requireApproval.length) {
    if (o.allowCommand.length || timeout !== undefined || o.onApprovalTimeout)
      throw new CliError('--allow-command, --approval-timeout and --on-approval-timeout go with --require-approval', undefined, EXIT.USAGE);
    return undefined;
  }
  return {
    tools: o.requireApproval,
    ...(o.allowCommand.length ? { allowedCommands: o.allowCommand } : {}),
    ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
    ...(o.onApprovalTimeout ? { onTimeout: o.onApprovalTimeout } : {}),
  };
}
