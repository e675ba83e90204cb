// Budget verbs (docs/budgets.md): budget agent (an agent's own), and a namespace's Budgets:
// budget add|set|ls|rm.

import type { Command } from 'commander';
import type { AgentResponse } from '../../api/agent.js';
import { CliError, EXIT } from '../exit-codes.js';
import { outputFormat, renderObject } from '../output.js';
import { checkName, type Runner, type Session } from '../session.js';
import { addOutputFlags } from './agents.js';
import { describeBudget, describeSpend } from './budget-text.js';
import { show } from './listing.js';

export const BUDGETS = { rest: '/api/v1/budgets', key: 'budgets', plural: 'budgets', kind: 'budget' };

const budgetPath = (name: string): string => `/api/v1/budgets/${encodeURIComponent(checkName('budget', name))}`;

interface LimitFlags {
  maxTokens?: string;
  maxCostUsd?: string;
  onExceed?: string;
  perTask?: boolean;
  period?: string;
  clear?: boolean;
  output?: string;
}

/** The limits the flags give; the server checks them (a bad value is its 400, naming the field). */
function limits(o: LimitFlags): Record<string, unknown> {
  const num = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n)) throw new CliError(`${flag} must be a number, got "${v}"`, `e.g. ${flag} 50000`, EXIT.USAGE);
    return n;
  };
  const maxTokens = num('--max-tokens', o.maxTokens);
  const maxCostUsd = num('--max-cost-usd', o.maxCostUsd);
  return {
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    ...(o.onExceed !== undefined ? { onExceed: o.onExceed } : {}),
  };
}

const limitFlags = (cmd: Command): Command =>
  cmd
    .option('--max-tokens <n>', 'the most model tokens')
    .option('--max-cost-usd <usd>', 'the most model cost, in US dollars (list prices)')
    .option('--on-exceed <action>', 'Stop (end the task) or Pause (hold it until the budget is raised)');

export function registerBudgetCommands(program: Command, run: Runner): void {
  const budget = program
    .command('budget')
    .description("model spending limits the model proxy enforces mid-task: an agent's own (budget agent), its namespace's (add, set, ls, rm)");

  limitFlags(
    budget
      .command('agent')
      .description("set (or with --clear remove) an agent's own budget; shows its spend")
      .argument('<agent>')
      .option('--per-task', 'the limits apply to each task on its own (default: to all its tasks)')
      .option('--clear', 'remove the budget'),
  ).action(run(agentBudget));

  addOutputFlags(
    limitFlags(
      budget
        .command('add')
        .description('create a namespace Budget: every agent of the namespace together, per period')
        .argument('<name>')
        .requiredOption('--period <period>', 'day or month (UTC)'),
    ),
    false,
  ).action(
    run(async (s, name: string) => {
      const o = s.opts as LimitFlags;
      const body = { name: checkName('budget', name), namespace: s.target.namespace, period: o.period, onExceed: 'Stop', ...limits(o) };
      const { body: made } = await s.client.call('POST', BUDGETS.rest, { body, kind: 'budget', ns: s.target.namespace });
      const format = outputFormat(o.output);
      if (format === 'json' || format === 'yaml') s.out(renderObject(made, format));
      else s.out(`budget/${name} created\n`);
    }),
  );

  limitFlags(budget.command('set').description('change a namespace Budget (raise it to let paused tasks go on)').argument('<name>'))
    .option('--period <period>', 'day or month (UTC)')
    .action(
      run(async (s, name: string) => {
        const o = s.opts as LimitFlags;
        const body = { ...limits(o), ...(o.period ? { period: o.period } : {}) };
        if (!Object.keys(body).length) throw new CliError('nothing to change', 'give --max-tokens, --max-cost-usd, --on-exceed or --period', EXIT.USAGE);
        await s.client.call('PATCH', budgetPath(name), { query: { namespace: s.target.namespace }, body, kind: 'budget' });
        s.out(`budget/${name} updated\n`);
      }),
    );

  addOutputFlags(budget.command('ls').alias('list').description("the namespace's Budgets: period, limit, used, spend"), true).action(
    run(async (s) => show(s, BUDGETS)),
  );

  budget
    .command('rm')
    .alias('delete')
    .description('delete namespace Budgets')
    .argument('<name...>')
    .action(
      run(async (s, names: string[]) => {
        for (const name of names) {
          await s.client.call('DELETE', budgetPath(name), { query: { namespace: s.target.namespace }, kind: 'budget' });
          s.out(`budget/${name} deleted\n`);
        }
      }),
    );
}

async function agentBudget(s: Session, name: string): Promise<void> {
  const o = s.opts as LimitFlags;
  const path = `/api/v1/agents/${encodeURIComponent(checkName('agent', name))}`;
  const query = { namespace: s.target.namespace };
  const given = limits(o);
  let a: AgentResponse;
  if (o.clear) {
    a = (await s.client.call<AgentResponse>('PATCH', path, { query, body: { budget: null }, kind: 'agent' })).body;
  } else if (Object.keys(given).length || o.perTask) {
    const { body: now } = await s.client.call<AgentResponse>('GET', path, { query, kind: 'agent' });
    // Flags change what they name; the rest of the budget stays.
    const budget = { onExceed: 'Stop', ...now.budget, ...given, ...(o.perTask ? { perTask: true } : {}) };
    a = (await s.client.call<AgentResponse>('PATCH', path, { query, body: { budget }, kind: 'agent' })).body;
  } else a = (await s.client.call<AgentResponse>('GET', path, { query, kind: 'agent' })).body;
  s.out(`agent/${name}\n  Budget: ${describeBudget(a.budget)}\n  Spend:  ${describeSpend(a.spend)}\n`);
}
