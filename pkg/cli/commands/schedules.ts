// Schedule verbs (docs/schedules.md): schedule add|ls|get|rm|trigger|suspend|resume.

import type { Command } from 'commander';
import type { ScheduleResponse } from '../../api/schedule.js';
import { CliError, EXIT } from '../exit-codes.js';
import { outputFormat, renderObject } from '../output.js';
import { checkName, type Runner, type Session } from '../session.js';
import { addOutputFlags } from './agents.js';
import { show } from './listing.js';

export const SCHEDULES = { rest: '/api/v1/schedules', key: 'schedules', plural: 'schedules', kind: 'schedule' };

const schedulePath = (name: string): string => `/api/v1/schedules/${encodeURIComponent(checkName('schedule', name))}`;

interface AddFlags {
  agent: string;
  cron: string;
  instructions: string;
  timeZone?: string;
  concurrencyPolicy?: string;
  startingDeadlineSeconds?: string;
  suspend?: boolean;
  output?: string;
}

function addBody(s: Session, name: string, o: AddFlags): Record<string, unknown> {
  let deadline: number | undefined;
  if (o.startingDeadlineSeconds !== undefined) {
    deadline = Number(o.startingDeadlineSeconds);
    if (!Number.isInteger(deadline))
      throw new CliError(
        `--starting-deadline-seconds must be a whole number, got "${o.startingDeadlineSeconds}"`,
        'e.g. --starting-deadline-seconds 300',
        EXIT.USAGE,
      );
  }
  return {
    name: checkName('schedule', name),
    namespace: s.target.namespace,
    agent: o.agent,
    cron: o.cron,
    instructions: o.instructions,
    ...(o.timeZone !== undefined ? { timeZone: o.timeZone } : {}),
    ...(o.concurrencyPolicy !== undefined ? { concurrencyPolicy: o.concurrencyPolicy } : {}),
    ...(deadline !== undefined ? { startingDeadlineSeconds: deadline } : {}),
    ...(o.suspend ? { suspend: true } : {}),
  };
}

/** "Started (task 4) at …" / "Skipped at …: why". */
function describeRun(r: ScheduleResponse['lastRun']): string {
  if (!r) return '<none>';
  const task = r.task !== undefined ? ` (task ${r.task})` : '';
  return `${r.outcome}${task} at ${r.time}${r.triggered ? ', triggered' : ''}${r.reason ? `: ${r.reason}` : ''}`;
}

export function registerScheduleCommands(program: Command, run: Runner): void {
  const schedule = program.command('schedule').description('tasks given to an agent on a cron schedule (add, ls, get, rm, trigger, suspend, resume)');

  addOutputFlags(
    schedule
      .command('add')
      .description('create a schedule: each due time gives the agent a task')
      .argument('<name>')
      .requiredOption('--agent <agent>', 'the agent each run gives a task (same namespace)')
      .requiredOption('--cron <cron>', 'five cron fields, or six with seconds first, e.g. "0 6 * * 1-5"')
      .requiredOption('--instructions <text>', 'the task each run gives')
      .option('--time-zone <tz>', 'IANA time zone the cron is read in (default UTC)')
      .option('--concurrency-policy <policy>', 'when the agent is busy: Allow (queue behind its task), Forbid (skip) or Replace (cancel it)')
      .option('--starting-deadline-seconds <n>', 'a run this late after downtime is recorded as missed, never started')
      .option('--suspend', 'create it suspended'),
    false,
  ).action(
    run(async (s, name: string) => {
      const o = s.opts as unknown as AddFlags;
      const { body: made } = await s.client.call('POST', SCHEDULES.rest, { body: addBody(s, name, o), kind: 'schedule', ns: s.target.namespace });
      const format = outputFormat(o.output);
      if (format === 'json' || format === 'yaml') s.out(renderObject(made, format));
      else s.out(`schedule/${name} created\n`);
    }),
  );

  addOutputFlags(schedule.command('ls').alias('list').description('schedules: agent, cron, suspend, last and next run'), true).action(
    run(async (s) => show(s, SCHEDULES)),
  );

  addOutputFlags(schedule.command('get').description('one schedule (-o yaml for all of it)').argument('<name>'), true).action(
    run(async (s, name: string) => {
      if (s.opts.output) return show(s, SCHEDULES, checkName('schedule', name));
      const { body: sc } = await s.client.call<ScheduleResponse>('GET', schedulePath(name), { query: { namespace: s.target.namespace }, kind: 'schedule' });
      s.out(
        `schedule/${sc.name}\n  Agent:    ${sc.agent}\n  Cron:     ${sc.cron} (${sc.timeZone ?? 'UTC'})\n  Policy:   ${sc.concurrencyPolicy}\n` +
          `  Suspend:  ${sc.suspend}\n  Last run: ${describeRun(sc.lastRun)}\n  Next:     ${sc.nextScheduleTime ?? '<none>'}\n`,
      );
    }),
  );

  schedule
    .command('rm')
    .alias('delete')
    .description('delete schedules (tasks they started go on)')
    .argument('<name...>')
    .action(
      run(async (s, names: string[]) => {
        for (const name of names) {
          await s.client.call('DELETE', schedulePath(name), { query: { namespace: s.target.namespace }, kind: 'schedule' });
          s.out(`schedule/${name} deleted\n`);
        }
      }),
    );

  schedule
    .command('trigger')
    .description('run a schedule now (its concurrencyPolicy applies)')
    .argument('<name>')
    .action(
      run(async (s, name: string) => {
        const { body: sc } = await s.client.call<ScheduleResponse>('POST', `${schedulePath(name)}/trigger`, {
          query: { namespace: s.target.namespace },
          body: {},
          kind: 'schedule',
        });
        s.out(`schedule/${name} triggered: ${describeRun(sc.lastRun)}\n`);
      }),
    );

  for (const [verb, suspend] of [
    ['suspend', true],
    ['resume', false],
  ] as const) {
    schedule
      .command(verb)
      .description(suspend ? 'stop runs coming due (a trigger still runs)' : 'let runs come due again')
      .argument('<name>')
      .action(
        run(async (s, name: string) => {
          await s.client.call('PATCH', schedulePath(name), { query: { namespace: s.target.namespace }, body: { suspend }, kind: 'schedule' });
          s.out(`schedule/${name} ${suspend ? 'suspended' : 'resumed'}\n`);
        }),
      );
  }
}
