// Agent verbs: ls, get, describe, logs, cancel, sleep, wake, steer, rm.

import type { Command } from 'commander';
import type { AgentResponse } from '../../api/agent.js';
import type { ApprovalPolicy } from '../../api/approval.js';
import type { AgentEvent, EventPayloads } from '../../api/event.js';
import { EventRenderer, oneLine } from '../event-renderer.js';
import { CliError, EXIT } from '../exit-codes.js';
import { followAgent } from '../follow.js';
import { age, indent, renderTable } from '../output.js';
import { checkName, type Runner, type Session } from '../session.js';
import { taskNumber } from './agent-task.js';
import { describeBudget, describeSpend } from './budget-text.js';
import { show } from './listing.js';

export const AGENTS = { rest: '/api/v1/agents', key: 'agents', plural: 'agents', kind: 'agent' };

const agentPath = (name: string, sub = ''): string => `/api/v1/agents/${encodeURIComponent(checkName('agent', name))}${sub}`;

export function addOutputFlags(cmd: Command, list: boolean): Command {
  cmd.option('-o, --output <format>', 'wide, json, yaml or name');
  if (list) cmd.option('-A, --all-namespaces', 'every namespace the token may see');
  return cmd;
}

export function registerAgentCommands(program: Command, run: Runner): void {
  addOutputFlags(program.command('ls').alias('list').description('list agents (status, task, model, age)'), true).action(run(async (s) => show(s, AGENTS)));

  addOutputFlags(program.command('get').description('show agents as a table; one agent when named').argument('[agent]'), true).action(
    run(async (s, name?: string) => show(s, AGENTS, name === undefined ? undefined : checkName('agent', name))),
  );

  program
    .command('describe')
    .description("an agent's settings, status and recent events")
    .argument('<agent>')
    .option('--events <n>', 'recent events to show', '10')
    .action(run(describe));

  program
    .command('logs')
    .description("an agent's events: the latest task's by default; -f follows them live")
    .argument('<agent>')
    .option('-f, --follow', 'keep printing new events as they come (Ctrl-C to stop)')
    .option('--since <duration>', 'events newer than this, e.g. 30s, 10m, 2h (any task)')
    .option('--tail <n>', 'the last n events (any task)')
    .option('--task <n>', "this task's events")
    .option('--json', 'raw events, one JSON object per line')
    .action(run(logs));

  program
    .command('cancel')
    .description("cancel an agent's running task (the agent stays, idle)")
    .argument('<agent>')
    .action(
      run(async (s, name: string) => {
        const { status, body } = await s.client.call<{ cancelled?: boolean; taskStatus?: string }>('POST', agentPath(name, '/cancel'), {
          query: { namespace: s.target.namespace },
          kind: 'agent',
        });
        // Cancel is idempotent: an idle agent answers 200 with cancelled: false.
        if (body.cancelled === false) s.out(`agent/${name}: nothing to cancel (no task is running)\n`);
        else
          s.out(
            status === 202
              ? `agent/${name}: cancel requested (the worker has not confirmed yet; task ${body.taskStatus})\n`
              : `agent/${name}: task cancelled\n`,
          );
      }),
    );

  const lifecycle = (value: string, said: string) =>
    run(async (s, name: string) => {
      await s.client.call('PATCH', agentPath(name), { query: { namespace: s.target.namespace }, body: { lifecycle: value }, kind: 'agent' });
      s.out(`agent/${name} ${said}\n`);
    });
  program
    .command('sleep')
    .description('put an agent to sleep (after its task, if busy); a new task wakes it')
    .argument('<agent>')
    .action(lifecycle('Sleep', 'asked to sleep'));
  program.command('wake').description('wake a sleeping agent').argument('<agent>').action(lifecycle('Wake', 'woken'));

  program
    .command('steer')
    .description('send a follow-up into the running task (a new task when the agent is idle)')
    .argument('<agent>')
    .argument('<text>')
    .action(
      run(async (s, name: string, text: string) => {
        // An idle agent takes the text as a new task: the task number tells which happened.
        const before = await taskNumber(s, name);
        const { body, status } = await s.client.call<AgentResponse>('PATCH', agentPath(name), {
          query: { namespace: s.target.namespace },
          body: { instructions: text },
          kind: 'agent',
        });
        const after = await taskNumber(s, name);
        if (before !== undefined && after !== undefined && after > before) {
          s.out(`agent/${name} was idle: started task ${after} with it (follow it with \`agentplane logs -f ${name} -n ${s.target.namespace}\`)\n`);
        } else if (status === 202) {
          s.out(`agent/${name}: the running task is in a long step; it takes the follow-up at its next turn (do not send it again)\n`);
        } else s.out(`agent/${name} steered (task ${body.taskStatus})\n`);
      }),
    );

  program
    .command('rm')
    .alias('delete')
    .description('delete agents with their workspaces and events')
    .argument('<agent...>')
    .action(
      run(async (s, names: string[]) => {
        for (const name of names) {
          const { status } = await s.client.call('DELETE', agentPath(name), { query: { namespace: s.target.namespace }, kind: 'agent' });
          s.out(status === 202 ? `agent/${name} deletion started (clean-up still running)\n` : `agent/${name} deleted\n`);
        }
      }),
    );
}

async function describe(s: Session, name: string): Promise<void> {
  const ns = s.target.namespace;
  const { body: a } = await s.client.call<AgentResponse>('GET', agentPath(name), { query: { namespace: ns }, kind: 'agent' });
  const n = Math.min(200, Math.max(1, Number(s.opts.events) || 10));
  const { body: h } = await s.client.call<{ events: AgentEvent[] }>('GET', agentPath(name, '/events'), { query: { namespace: ns, limit: n }, kind: 'agent' });
  const none = (v: string | string[] | null | undefined): string =>
    v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length) ? '<none>' : Array.isArray(v) ? v.join(', ') : String(v);
  const rows: [string, string | string[] | undefined][] = [
    ['Name', a.name],
    ['Namespace', a.namespace],
    ['Status', a.status === 'Queued' && a.queuePosition ? `Queued: position ${a.queuePosition} in namespace ${a.namespace}'s line` : a.status],
    ['Priority', String(a.priority ?? 0)],
    ['Task', a.taskStatus],
    ['Last Message', a.lastTaskMessage],
    ['Model', a.model],
    ['Role', a.role],
    ['Template', a.templateRef],
    ['Connectors', a.connectors],
    ['Lifecycle', a.lifecycle],
    ['Approval', a.approval ? approvalLine(a.approval) : undefined],
    ['Approvals', a.approvals?.map((x) => `${x.id} ${x.tool} ${x.decision ? `${x.decision} by ${x.decidedBy}` : 'pending'}`)],
    ['Budget', describeBudget(a.budget)],
    ['Spend', describeSpend(a.spend)],
    ['Created', a.createdAt ? `${a.createdAt} (${age(a.createdAt)} ago)` : undefined],
  ];
  for (const [k, v] of rows) s.out(`${`${k}:`.padEnd(14)}${none(v)}\n`);
  s.out('Events:\n');
  const evs = [...h.events].sort((x, y) => x.seq - y.seq);
  if (!evs.length) s.out('  <none>\n');
  else
    s.out(
      indent(
        renderTable(
          ['Seq', 'Task', 'Type', 'Age', 'Detail'],
          evs.map((e) => [e.seq, e.task, e.type, age(e.timestamp), detail(e)]),
        ),
      ),
    );
}

/** One line about an event, for describe's table. */
function detail(e: AgentEvent): string {
  switch (e.type) {
    case 'tool_call': {
      const p = e.payload as EventPayloads['tool_call'];
      return `${p.tool} ${oneLine(JSON.stringify(p.input), 60)}`;
    }
    case 'tool_result': {
      const p = e.payload as EventPayloads['tool_result'];
      return `${p.tool}${p.isError ? ' (error)' : ''}: ${oneLine(String(p.output), 60)}`;
    }
    case 'task_completed': {
      const p = e.payload as EventPayloads['task_completed'];
      return `${p.turns} turns, $${Number(p.cost_usd ?? 0).toFixed(4)}: ${oneLine(String(p.result), 60)}`;
    }
    default: {
      const p = e.payload as unknown as Record<string, unknown>;
      const v = p.content ?? p.instructions ?? p.message ?? p.reason;
      return typeof v === 'string' ? oneLine(v, 70) : '';
    }
  }
}

/** `30s`, `10m`, `2h`, `1d`, `1h30m` in milliseconds. */
export function parseDuration(raw: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let at = 0;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
  for (let m = re.exec(raw); m; m = re.exec(raw)) {
    total += Number(m[1]) * unit[m[2] as keyof typeof unit];
    at = re.lastIndex;
  }
  if (!raw || at !== raw.length) throw new CliError(`"${raw}" is not a duration`, 'write it as 30s, 10m, 2h, 1d or 1h30m', EXIT.USAGE);
  return total;
}

const positiveInt = (flag: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${flag} must be a whole number of at least 1, got "${raw}"`, undefined, EXIT.USAGE);
  return n;
};

/** Reads history backwards (200 a page) until `enough` says stop; oldest first. */
async function history(s: Session, name: string, enough: (evs: AgentEvent[]) => boolean): Promise<AgentEvent[]> {
  const got: AgentEvent[] = [];
  let before: number | undefined;
  for (let page = 0; page < 1000; page++) {
    const { body } = await s.client.call<{ events: AgentEvent[] }>('GET', agentPath(name, '/events'), {
      query: { namespace: s.target.namespace, limit: 200, before },
      kind: 'agent',
    });
    const evs = [...body.events].sort((a, b) => a.seq - b.seq);
    got.unshift(...evs);
    if (evs.length < 200 || enough(got)) break;
    before = evs[0].seq;
  }
  return got;
}

async function logs(s: Session, name: string): Promise<void> {
  checkName('agent', name);
  const { since, tail, task, follow, json } = s.opts as { since?: string; tail?: string; task?: string; follow?: boolean; json?: boolean };
  const cutoff = since !== undefined ? Date.now() - parseDuration(since) : undefined;
  const n = tail !== undefined ? positiveInt('--tail', tail) : undefined;
  const only = task !== undefined ? positiveInt('--task', task) : undefined;
  let pick: (evs: AgentEvent[]) => AgentEvent[];
  let enough: (evs: AgentEvent[]) => boolean;
  if (n !== undefined || cutoff !== undefined) {
    pick = (evs) => {
      const recent = cutoff !== undefined ? evs.filter((e) => Date.parse(e.timestamp) >= cutoff) : evs;
      return n !== undefined ? recent.slice(-n) : recent;
    };
    enough = (evs) => (n !== undefined && evs.length >= n && cutoff === undefined) || (cutoff !== undefined && Date.parse(evs[0].timestamp) < cutoff);
  } else {
    // One task's events: the one asked for, else the latest one's.
    pick = (evs) => {
      const t = only ?? evs.at(-1)?.task;
      return evs.filter((e) => e.task === t);
    };
    enough = (evs) => (only !== undefined ? evs[0].task < only : evs[0].task < evs.at(-1)!.task);
  }
  const shown = pick(await history(s, name, enough));
  const renderer = new EventRenderer({
    style: s.style,
    write: s.out,
    spinners: Boolean(follow) && s.style.interactive,
    callLines: Boolean(follow) && !s.style.interactive,
  });
  const print = (ev: AgentEvent): void => {
    if (json) s.out(`${JSON.stringify(ev)}\n`);
    else renderer.event(ev);
  };
  shown.forEach(print);
  if (!follow) return;
  const last = shown.at(-1)?.seq ?? (await history(s, name, () => true)).at(-1)?.seq ?? 0;
  const f = followAgent(s.client, s.target.namespace, name, last, (ev) => {
    print(ev);
    return false;
  });
  const quit = (): void => {
    renderer.close();
    f.stop();
  };
  process.once('SIGINT', quit);
  process.once('SIGTERM', quit);
  await f.done;
}

/** The approval policy in one line, as describe shows it. */
function approvalLine(p: ApprovalPolicy): string {
  const parts = [`tools ${p.tools.join(', ')}`];
  if (p.allowedCommands?.length) parts.push(`commands allowed without asking: ${p.allowedCommands.join(', ')}`);
  parts.push(`timeout ${p.timeoutSeconds ?? 600} s, then ${p.onTimeout ?? 'deny'}`);
  return parts.join('; ');
}
