// Connector verbs: connector add|ls|rm|tools.

import type { Command } from 'commander';
import type { ConnectorTool } from '../../api/connector.js';
import { CliError, EXIT } from '../exit-codes.js';
import { outputFormat, renderObject, renderTable } from '../output.js';
import { checkName, type Runner } from '../session.js';
import { addOutputFlags } from './agents.js';
import { show } from './listing.js';

export const CONNECTORS = { rest: '/api/v1/connectors', key: 'connectors', plural: 'connectors', kind: 'connector' };

const connectorPath = (name: string, sub = ''): string => `/api/v1/connectors/${encodeURIComponent(checkName('connector', name))}${sub}`;

export function registerConnectorCommands(program: Command, run: Runner): void {
  const connector = program.command('connector').description('MCP tool servers agents attach by name: add, ls, rm, tools');

  addOutputFlags(
    connector
      .command('add')
      .description('create a connector')
      .argument('<name>')
      .requiredOption('--url <url>', 'the MCP server (streamable HTTP)')
      .option('--service <label>', 'service kind label, e.g. github')
      .option('--display-name <text>', 'human-readable name')
      .option('--secret <secret/key>', 'the stored secret and key holding its credential (agentplane secret set)')
      .option('--auth-type <type>', 'bearer (default) or header')
      .option('--header-name <name>', 'the header carrying the credential, with --auth-type header'),
    false,
  ).action(
    run(async (s, name: string) => {
      const o = s.opts as { url: string; service?: string; displayName?: string; secret?: string; authType?: string; headerName?: string; output?: string };
      let auth = {};
      if (o.secret !== undefined) {
        const m = /^([^/]+)\/(.+)$/.exec(o.secret);
        if (!m) throw new CliError(`--secret must be <secret>/<key>, got "${o.secret}"`, 'e.g. --secret github-token/token', EXIT.USAGE);
        auth = { authSecretName: m[1], authSecretKey: m[2] };
      }
      const body = {
        name: checkName('connector', name),
        namespace: s.target.namespace,
        url: o.url,
        ...(o.service ? { service: o.service } : {}),
        ...(o.displayName ? { displayName: o.displayName } : {}),
        ...auth,
        ...(o.authType ? { authType: o.authType } : {}),
        ...(o.headerName ? { headerName: o.headerName } : {}),
      };
      const { body: created } = await s.client.call('POST', '/api/v1/connectors', { body, kind: 'connector', ns: s.target.namespace });
      const format = outputFormat(o.output);
      if (format === 'json' || format === 'yaml') s.out(renderObject(created, format));
      else s.out(`connector/${name} created\n`);
    }),
  );

  addOutputFlags(connector.command('ls').alias('list').description('list connectors (service, URL, status, age)'), true).action(
    run(async (s) => show(s, CONNECTORS)),
  );

  connector
    .command('rm')
    .alias('delete')
    .description('delete connectors')
    .argument('<name...>')
    .option('--force', 'detach it from the agents that list it first')
    .action(
      run(async (s, names: string[]) => {
        for (const name of names) {
          await s.client.call('DELETE', connectorPath(name), {
            query: { namespace: s.target.namespace, force: s.opts.force ? 'true' : undefined },
            kind: 'connector',
          });
          s.out(`connector/${name} deleted\n`);
        }
      }),
    );

  addOutputFlags(connector.command('tools').description('the tools a connector offers, as its server lists them now').argument('<name>'), false).action(
    run(async (s, name: string) => {
      const { body } = await s.client.call<ConnectorTool[] | { tools?: ConnectorTool[] }>('GET', connectorPath(name, '/tools'), {
        query: { namespace: s.target.namespace },
        kind: 'connector',
      });
      const format = outputFormat(s.opts.output);
      if (format === 'json' || format === 'yaml') return s.out(renderObject(body, format));
      const tools: { name: string; description?: string }[] = Array.isArray(body) ? body : (body.tools ?? []);
      if (format === 'name') return tools.forEach((t) => s.out(`${t.name}\n`));
      if (!tools.length) return s.err(`connector/${name} lists no tools.\n`);
      s.out(
        renderTable(
          ['Name', 'Description'],
          tools.map((t) => [t.name, format === 'wide' ? t.description : (t.description ?? '').split('\n')[0].slice(0, 80)]),
        ),
      );
    }),
  );
}
