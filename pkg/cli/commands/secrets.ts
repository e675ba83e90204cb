// Secret verbs: secret set|ls|rm. Values go to the server and never come back: the server
// answers with names and keys only, and so does the CLI.

import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { SecretResponse } from '../../api/secret.js';
import { CliError, EXIT } from '../exit-codes.js';
import { age, outputFormat, renderObject, renderTable } from '../output.js';
import { checkName, listNamespace, type Runner } from '../session.js';
import { addOutputFlags } from './agents.js';

const collect = (v: string, all: string[]): string[] => [...all, v];

/** KEY=VALUE pairs, and --from-file KEY=PATH (the file's bytes as UTF-8). */
function secretData(pairs: string[], files: string[]): Record<string, string> {
  const data: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i < 1) throw new CliError(`"${p}" is not KEY=VALUE`, 'e.g. agentplane secret set github-token token=ghp_…', EXIT.USAGE);
    data[p.slice(0, i)] = p.slice(i + 1);
  }
  for (const f of files) {
    const i = f.indexOf('=');
    if (i < 1) throw new CliError(`--from-file "${f}" is not KEY=PATH`, undefined, EXIT.USAGE);
    try {
      data[f.slice(0, i)] = readFileSync(f.slice(i + 1), 'utf8');
    } catch (err) {
      throw new CliError(`cannot read ${f.slice(i + 1)}: ${(err as Error).message}`, undefined, EXIT.USAGE);
    }
  }
  if (!Object.keys(data).length) throw new CliError('a secret needs at least one KEY=VALUE (or --from-file KEY=PATH)', undefined, EXIT.USAGE);
  return data;
}

export function registerSecretCommands(program: Command, run: Runner): void {
  const secret = program.command('secret').description('credentials for connectors, stored encrypted: set, ls, rm');

  addOutputFlags(
    secret
      .command('set')
      .description('create or replace a secret (every key at once)')
      .argument('<name>')
      .argument('[pairs...]', 'KEY=VALUE')
      .option('--from-file <key=path>', "a key's value from a file (repeat for more)", collect, [])
      .option(
        '--allowed-url <prefix>',
        'a URL prefix the secret may be sent to (repeat for more; default: bound to the first connector naming it)',
        collect,
        [],
      ),
    false,
  ).action(
    run(async (s, name: string, pairs: string[]) => {
      const { fromFile = [], allowedUrl = [] } = s.opts;
      const body = { data: secretData(pairs, fromFile), ...(allowedUrl.length ? { allowedUrls: allowedUrl } : {}) };
      const { status, body: saved } = await s.client.call<SecretResponse>('PUT', `/api/v1/secrets/${encodeURIComponent(checkName('secret', name))}`, {
        query: { namespace: s.target.namespace },
        body,
        kind: 'secret',
      });
      const format = outputFormat(s.opts.output);
      if (format === 'json' || format === 'yaml') s.out(renderObject(saved, format));
      else s.out(`secret/${name} ${status === 201 ? 'created' : 'replaced'} (keys: ${saved.keys.join(', ')})\n`);
    }),
  );

  addOutputFlags(secret.command('ls').alias('list').description('list secrets: names, keys and where they may be sent, never values'), true).action(
    run(async (s) => {
      const namespace = listNamespace(s);
      const { body } = await s.client.call<{ secrets?: SecretResponse[] }>('GET', '/api/v1/secrets', { query: { namespace }, kind: 'secret' });
      const items = body.secrets ?? [];
      const format = outputFormat(s.opts.output);
      if (format === 'json' || format === 'yaml') return s.out(renderObject({ secrets: items }, format));
      if (format === 'name') return items.forEach((x) => s.out(`secret/${x.name}\n`));
      if (!items.length) return s.err(namespace ? `No secrets found in namespace ${namespace}.\n` : 'No secrets found.\n');
      const headers = ['Name', 'Keys', 'Age', ...(format === 'wide' ? ['Allowed URLs'] : [])];
      const rows = items.map((x): unknown[] => [x.name, x.keys.length, age(x.createdAt), ...(format === 'wide' ? [x.allowedUrls] : [])]);
      if (!namespace) {
        headers.unshift('Namespace');
        rows.forEach((r, i) => r.unshift(items[i].namespace));
      }
      s.out(renderTable(headers, rows));
    }),
  );

  secret
    .command('rm')
    .alias('delete')
    .description('delete secrets')
    .argument('<name...>')
    .action(
      run(async (s, names: string[]) => {
        for (const name of names) {
          await s.client.call('DELETE', `/api/v1/secrets/${encodeURIComponent(checkName('secret', name))}`, {
            query: { namespace: s.target.namespace },
            kind: 'secret',
          });
          s.out(`secret/${name} deleted\n`);
        }
      }),
    );
}
