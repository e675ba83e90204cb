// Checkpoint verbs: checkpoint create|ls|get|rm. A checkpoint copies an agent's workspace and
// conversation between two tasks; `agentplane run <new> "<task>" --from-checkpoint <agent>/<name>`
// starts a new agent from one (docs/checkpoints.md).

import type { Command } from 'commander';
import type { CheckpointResponse } from '../../api/checkpoint.js';
import { GROUP_VERSION, TABLE_ACCEPT } from '../client.js';
import { outputFormat, renderObject, renderServerTable, type ServerTable } from '../output.js';
import { checkName, listNamespace, type Runner, type Session } from '../session.js';
import { addOutputFlags } from './agents.js';

const checkpointsPath = (agent: string, name?: string): string =>
  `/api/v1/agents/${encodeURIComponent(checkName('agent', agent))}/checkpoints${name === undefined ? '' : `/${encodeURIComponent(checkName('checkpoint', name))}`}`;

/** A checkpoint as the REST mirror returned it, in the chosen output (text: one line). */
function printCheckpoint(s: Session, c: CheckpointResponse, said: string): void {
  const format = outputFormat(s.opts.output);
  if (format === 'json' || format === 'yaml') return s.out(renderObject(c, format));
  if (format === 'name') return s.out(`agentcheckpoint/${c.agent}.${c.name}\n`);
  s.out(`agentcheckpoint/${c.agent}.${c.name} ${said}\n`);
}

/** The server's Table of checkpoints (of one agent when given), or the REST objects for -o json|yaml. */
async function list(s: Session, agent: string | undefined): Promise<void> {
  const format = outputFormat(s.opts.output);
  const namespace = listNamespace(s);
  if ((format === 'json' || format === 'yaml') && agent !== undefined) {
    const { body } = await s.client.call<{ checkpoints: CheckpointResponse[] }>('GET', checkpointsPath(agent), { query: { namespace }, kind: 'checkpoint' });
    return s.out(renderObject(body, format));
  }
  const base = `/apis/${GROUP_VERSION}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/agentcheckpoints`;
  const query = agent === undefined ? {} : { fieldSelector: `spec.agent=${checkName('agent', agent)}` };
  if (format === 'json' || format === 'yaml') {
    const { body } = await s.client.call('GET', base, { query, kind: 'checkpoint', ...(namespace ? { ns: namespace } : {}) });
    return s.out(renderObject(body, format));
  }
  const { body } = await s.client.call<ServerTable>('GET', base, { query, accept: TABLE_ACCEPT, kind: 'checkpoint', ...(namespace ? { ns: namespace } : {}) });
  if (format === 'name') return body.rows.forEach((r) => s.out(`agentcheckpoint/${String(r.cells[0])}\n`));
  if (!body.rows.length) return s.err(`No checkpoints found${agent ? ` of agent ${agent}` : ''}${namespace ? ` in namespace ${namespace}` : ''}.\n`);
  s.out(renderServerTable(body, { wide: format === 'wide', allNamespaces: !namespace }));
}

export function registerCheckpointCommands(program: Command, run: Runner): void {
  const cp = program
    .command('checkpoint')
    .description("copies of an agent's workspace and conversation: create, ls, get, rm (start a new agent from one: run --from-checkpoint)");

  addOutputFlags(
    cp
      .command('create')
      .description('take a checkpoint of an agent (between two tasks: a running task ends first)')
      .argument('<agent>')
      .argument('<checkpoint>', "the checkpoint's name among the agent's checkpoints"),
    false,
  ).action(
    run(async (s, agent: string, name: string) => {
      const { status, body } = await s.client.call<CheckpointResponse>('POST', checkpointsPath(agent), {
        query: { namespace: s.target.namespace },
        body: { name: checkName('checkpoint', name) },
        kind: 'checkpoint',
      });
      const said =
        status === 202
          ? `requested: taken once the agent's running task ends (${body.message})`
          : body.phase === 'Ready'
            ? `taken (task ${body.task ?? 0})`
            : `failed: ${body.message}`;
      printCheckpoint(s, body, said);
      if (status !== 202 && body.phase === 'Ready' && outputFormat(s.opts.output) === undefined) {
        s.err(s.style.c.dim(`start a new agent from it: agentplane run <new-agent> "<task>" --from-checkpoint ${body.fromCheckpoint}\n`));
      }
    }),
  );

  addOutputFlags(cp.command('ls').alias('list').description('list checkpoints, of one agent when named').argument('[agent]'), true).action(
    run(async (s, agent?: string) => list(s, agent)),
  );

  addOutputFlags(cp.command('get').description('one checkpoint').argument('<agent>').argument('<checkpoint>'), false).action(
    run(async (s, agent: string, name: string) => {
      const { body } = await s.client.call<CheckpointResponse>('GET', checkpointsPath(agent, name), {
        query: { namespace: s.target.namespace },
        kind: 'checkpoint',
      });
      const format = outputFormat(s.opts.output);
      if (format === 'json' || format === 'yaml' || format === 'name') return printCheckpoint(s, body, '');
      const rows: [string, string][] = [
        ['Name', body.name],
        ['Agent', body.agent],
        ['Namespace', body.namespace],
        ['Phase', body.phase],
        ['Task', body.task === null ? '-' : String(body.task)],
        ['Taken', body.takenAt ?? '-'],
        ['Size', body.bytes === null ? '-' : `${body.bytes} bytes`],
        ['Start from it', `--from-checkpoint ${body.fromCheckpoint}`],
      ];
      if (body.message) rows.push(['Message', body.message]);
      for (const [k, v] of rows) s.out(`${`${k}:`.padEnd(15)}${v}\n`);
    }),
  );

  addOutputFlags(
    cp.command('rm').alias('delete').description('delete a checkpoint (agents started from it keep their copies)').argument('<agent>').argument('<checkpoint>'),
    false,
  ).action(
    run(async (s, agent: string, name: string) => {
      const { body } = await s.client.call<CheckpointResponse>('DELETE', checkpointsPath(agent, name), {
        query: { namespace: s.target.namespace },
        kind: 'checkpoint',
      });
      printCheckpoint(s, body, 'deleted');
    }),
  );
}
