#!/usr/bin/env node
// agentplane: the CLI. `agentplane serve` runs the service (embedded home by default); every other
// command is a client of a running server (pkg/cli). The service's heavy modules are imported only
// by `serve`, so client commands and shell completion start fast.

import { parseArgs } from 'node:util';
import { PluginError } from '../../pkg/plugin/loader.js';
import { readConfig } from './config-file.js';
import { FlagError, parseArgsOptions } from './flag.js';
import { SERVE_FLAG_LIST } from './serve-flags.js';
import { serveHelp } from './serve-help.js';
import { serveSettings } from './serve-settings.js';

function fail(msg: string): never {
  process.stderr.write(`agentplane: ${msg}\n`);
  process.exit(2);
}

/** The command line parsed by the flags' declarations (serve-flags.ts). */
function parseServeArgs(argv: string[]): Record<string, string | boolean | undefined> {
  try {
    // --no-<flag> for booleans (--no-metrics-auth).
    return parseArgs({ args: argv, strict: true, allowNegative: true, options: parseArgsOptions(SERVE_FLAG_LIST) }).values;
  } catch (err) {
    return fail(`${(err as Error).message}\n\n${serveHelp()}`);
  }
}

async function serve(argv: string[]): Promise<void> {
  const values = parseServeArgs(argv);
  if (values.help) {
    process.stdout.write(serveHelp());
    return;
  }
  const { checkOidcOptions } = await import('../../pkg/server/auth/oidc.js');
  const { startServer } = await import('./serve.js');
  let options;
  try {
    const env = process.env;
    const config = readConfig((values.config as string | undefined) ?? env.AGENTPLANE_CONFIG);
    options = serveSettings(
      { values, env, config },
      {
        checkOidcOptions,
        onLeaseLost: () => {
          process.stderr.write('agentplane: lost the leader Lease; exiting\n');
          process.exit(1);
        },
      },
    );
  } catch (err) {
    if (err instanceof FlagError) fail(err.message);
    throw err;
  }
  try {
    // Before the server: its spans need the provider (OTEL_*; docs/tracing.md). Off when unset.
    const { startTracing } = await import('../../pkg/observability/tracing.js');
    const tracing = await startTracing('agentplane');
    const server = await startServer(options);
    let closing = false;
    const shutdown = (): void => {
      if (closing) return;
      closing = true;
      server.logger.info('shutting down');
      void server
        .close()
        .then(() => tracing?.shutdown())
        .catch(() => undefined)
        .then(() => process.exit(0));
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
  } catch (err) {
    if (err instanceof PluginError) fail(err.message);
    fail(`cannot start: ${(err as Error).message}`);
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'serve') {
  await serve(rest);
} else {
  // Every other command is a client of a running server (docs/cli.md).
  const { runCli } = await import('../../pkg/cli/program.js');
  await runCli(process.argv.slice(2));
}
