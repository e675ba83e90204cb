// `agentplane config`: named contexts (server, namespace, token) in the client config file.

import type { Command } from 'commander';
import { configPath, type Context, loadConfig, normalizeServer, saveConfig } from '../config.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderObject, renderTable } from '../output.js';

export function registerConfigCommands(
  program: Command,
  guard: (fn: (...args: never[]) => void | Promise<void>) => (...args: unknown[]) => Promise<void>,
): void {
  const config = program.command('config').description(`named contexts: server, namespace and token (file: ${displayPath()})`);
  const out = (t: string): void => void process.stdout.write(t);

  config
    .command('get-contexts')
    .description('list the contexts; * marks the current one')
    .action(
      guard(() => {
        const cfg = loadConfig(configPath());
        if (!cfg.contexts.length)
          return void process.stderr.write(`No contexts in ${configPath()}; add one with \`agentplane config set-context <name> --server <url>\`.\n`);
        out(
          renderTable(
            ['Current', 'Name', 'Server', 'Namespace', 'Token'],
            cfg.contexts.map((c) => [c.name === cfg.currentContext ? '*' : '', c.name, c.server ?? '', c.namespace ?? '', c.token ? 'set' : '']),
            '',
          ),
        );
      }),
    );

  config
    .command('current-context')
    .description('print the current context')
    .action(
      guard(() => {
        const cfg = loadConfig(configPath());
        if (!cfg.currentContext) throw new CliError('no current context is set', 'pick one with `agentplane config use-context <name>`', EXIT.USAGE);
        out(`${cfg.currentContext}\n`);
      }),
    );

  config
    .command('use-context')
    .description('make a context the current one')
    .argument('<name>')
    .action(
      guard((name: string) => {
        const path = configPath();
        const cfg = loadConfig(path);
        if (!cfg.contexts.some((c) => c.name === name)) {
          throw new CliError(
            `context "${name}" not found in ${path}`,
            cfg.contexts.length ? `known contexts: ${cfg.contexts.map((c) => c.name).join(', ')}` : 'create it with `agentplane config set-context`',
            EXIT.USAGE,
          );
        }
        saveConfig(path, { ...cfg, currentContext: name });
        out(`Switched to context "${name}".\n`);
      }),
    );

  config
    .command('set-context')
    .description('create a context, or change the given fields of one')
    .argument('<name>')
    .option('--server <url>', 'server address, e.g. http://127.0.0.1:8080')
    .option('--namespace <ns>', 'namespace for commands without -n')
    .option('--token <token>', 'bearer token ("" removes it)')
    .option('--current', 'also make it the current context')
    .action(
      guard((name: string, _o: unknown, cmd: Command) => {
        // --server, --namespace and --token are also the program's flags, which commander gives them to.
        const o = cmd.optsWithGlobals<{ server?: string; namespace?: string; token?: string; current?: boolean }>();
        const path = configPath();
        const cfg = loadConfig(path);
        const at = cfg.contexts.findIndex((c) => c.name === name);
        const ctx: Context = at >= 0 ? { ...cfg.contexts[at] } : { name };
        if (o.server !== undefined) ctx.server = normalizeServer(o.server);
        if (o.namespace !== undefined) ctx.namespace = o.namespace;
        if (o.token !== undefined) {
          if (o.token) ctx.token = o.token;
          else delete ctx.token;
        }
        const contexts = [...cfg.contexts];
        if (at >= 0) contexts[at] = ctx;
        else contexts.push(ctx);
        const current = o.current || !cfg.currentContext ? name : cfg.currentContext;
        saveConfig(path, { currentContext: current, contexts });
        out(`Context "${name}" ${at >= 0 ? 'modified' : 'created'}${current === name ? ' (current)' : ''}.\n`);
      }),
    );

  config
    .command('view')
    .description('print the config, tokens hidden')
    .action(
      guard(() => {
        const cfg = loadConfig(configPath());
        out(renderObject({ ...cfg, contexts: cfg.contexts.map((c) => (c.token ? { ...c, token: 'REDACTED' } : c)) }, 'yaml'));
      }),
    );
}

function displayPath(): string {
  try {
    return configPath();
  } catch {
    return '~/.config/agentplane/config.yaml';
  }
}
