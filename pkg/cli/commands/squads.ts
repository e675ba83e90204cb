// Squad verbs: squad create|add|rm|break-up|ls|get.

import type { Command } from 'commander';
import type { SquadResponse } from '../../api/squad.js';
import { age, indent, outputFormat, renderObject, renderTable } from '../output.js';
import { checkName, type Runner, type Session } from '../session.js';
import { addOutputFlags } from './agents.js';
import { show } from './listing.js';

export const SQUADS = { rest: '/api/v1/squads', key: 'squads', plural: 'squads', kind: 'squad' };

const squadPath = (name: string, sub = ''): string => `/api/v1/squads/${encodeURIComponent(checkName('squad', name))}${sub}`;

/** Prints a squad as the REST mirror returned it, in the chosen output (text: one line and its members). */
function printSquad(s: Session, squad: SquadResponse, said: string): void {
  const format = outputFormat(s.opts.output);
  if (format === 'json' || format === 'yaml') return s.out(renderObject(squad, format));
  s.out(`squad/${squad.name} ${said}\n`);
}

export function registerSquadCommands(program: Command, run: Runner): void {
  const squad = program.command('squad').description('groups of agents sharing one pod: create, add, rm, break-up, ls, get');

  addOutputFlags(squad.command('ls').alias('list').description('list squads (phase, members, age)'), true).action(run(async (s) => show(s, SQUADS)));

  addOutputFlags(squad.command('get').description("a squad and its members' phases").argument('<squad>'), false).action(
    run(async (s, name: string) => {
      const format = outputFormat(s.opts.output);
      if (format !== undefined && format !== 'wide') return show(s, SQUADS, checkName('squad', name));
      await show(s, SQUADS, checkName('squad', name));
      const { body } = await s.client.call<SquadResponse>('GET', squadPath(name), { query: { namespace: s.target.namespace }, kind: 'squad' });
      s.out('\nMembers:\n');
      s.out(
        indent(
          renderTable(
            ['Agent', 'Phase', 'Task'],
            body.members.map((m) => [m.name, m.phase, m.taskStatus]),
          ),
        ),
      );
      if (body.breakUpRequested) s.out('\nBreak-up requested: the squad dissolves once every member sleeps.\n');
      if (body.orphanedSince) s.out(`\nOrphaned for ${age(body.orphanedSince)} (deleted after ${body.orphanTTL}).\n`);
    }),
  );

  addOutputFlags(
    squad
      .command('create')
      .description('create a squad of sleeping agents (at least two; put them to sleep with `agentplane sleep`)')
      .argument('<squad>')
      .argument('<agents...>')
      .option('--orphan-ttl <duration>', 'how long an empty squad is kept, e.g. 30m (server default 10m)'),
    false,
  ).action(
    run(async (s, name: string, agents: string[]) => {
      const body = {
        name: checkName('squad', name),
        namespace: s.target.namespace,
        members: agents.map((a) => ({ ref: { name: checkName('agent', a) } })),
        ...(s.opts.orphanTtl ? { orphanTTL: s.opts.orphanTtl } : {}),
      };
      const { body: created } = await s.client.call<SquadResponse>('POST', '/api/v1/squads', { body, kind: 'squad', ns: s.target.namespace });
      printSquad(s, created, `created with ${agents.join(', ')}`);
    }),
  );

  addOutputFlags(squad.command('add').description('add a sleeping agent to a squad').argument('<squad>').argument('<agent>'), false).action(
    run(async (s, name: string, agent: string) => {
      const { body } = await s.client.call<SquadResponse>('POST', squadPath(name, '/members'), {
        query: { namespace: s.target.namespace },
        body: { ref: { name: checkName('agent', agent) } },
        kind: 'squad',
      });
      printSquad(s, body, `gained agent/${agent}`);
    }),
  );

  addOutputFlags(
    squad.command('rm').description('remove an agent from a squad (it becomes solo, workspace kept)').argument('<squad>').argument('<agent>'),
    false,
  ).action(
    run(async (s, name: string, agent: string) => {
      const { body } = await s.client.call<SquadResponse>('DELETE', squadPath(name, `/members/${encodeURIComponent(checkName('agent', agent))}`), {
        query: { namespace: s.target.namespace },
        kind: 'squad',
      });
      printSquad(s, body, `lost agent/${agent}`);
    }),
  );

  addOutputFlags(squad.command('break-up').description('dissolve a squad once every member sleeps (members become solo)').argument('<squad>'), false).action(
    run(async (s, name: string) => {
      const { body } = await s.client.call<SquadResponse>('POST', squadPath(name, '/break-up'), { query: { namespace: s.target.namespace }, kind: 'squad' });
      printSquad(s, body, 'marked for break-up');
    }),
  );
}
