// The CLI as a user runs it: dist/cmd/agentplane/main.js in a child process with pipes for its
// output, against a test's server, with its config file in a directory of the test's (never the
// user's) and none of the caller's own AGENTPLANE_* settings.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliTarget {
  /** Where the CLI keeps its config (cli-config.yaml): a directory removed with the test's. */
  configDir: string;
  server?: string;
  token?: string;
  /** More variables (or undefined to unset one). */
  env?: NodeJS.ProcessEnv;
}

const OWN_SETTINGS = ['AGENTPLANE_SERVER', 'AGENTPLANE_NAMESPACE', 'AGENTPLANE_TOKEN', 'AGENTPLANE_CONTEXT', 'NO_COLOR', 'FORCE_COLOR'];

/** The environment of a CLI run for `t`. */
export function cliEnv(t: CliTarget): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_CLIENT_CONFIG: join(t.configDir, 'cli-config.yaml') };
  for (const k of OWN_SETTINGS) delete env[k];
  if (t.server) env.AGENTPLANE_SERVER = t.server;
  if (t.token) env.AGENTPLANE_TOKEN = t.token;
  return { ...env, ...t.env };
}

/** One run; its exit code (-1 when it was killed, for example at the timeout) and output. */
export function runCli(env: NodeJS.ProcessEnv, args: string[], timeout = 90_000, node = process.execPath): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(node, [CLI_MAIN, ...args], { env, timeout, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** `cli('agent', 'ls')` against `t`. */
export const cliFor =
  (t: CliTarget) =>
  (...args: string[]): Promise<CliResult> =>
    runCli(cliEnv(t), args);
