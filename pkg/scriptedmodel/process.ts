// `serve --demo`'s scripted model in its own process (main.ts), so that answering 50 engines'
// model requests (parsing their JSON, streaming SSE) is not done on the API server's event loop
// (docs/performance.md "API under load"). Started on loopback, stopped with the server; if it
// dies it is started again on the same port, so the URL the model proxy holds stays right.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('./main.js', import.meta.url));
/** How long a stop waits for the process to close its server before killing it. */
const STOP_GRACE_MS = 5_000;
const RESTART_DELAY_MS = 1_000;

export interface ScriptedModelProcess {
  url: string;
  port: number;
  /** The process's pid (it changes when the process is started again). */
  pid(): number | undefined;
  close(): Promise<void>;
}

export interface ScriptedModelProcessOptions {
  apiKey?: string;
  /** Told when the process exited without being asked to (it is started again a second later), or could not be started again. */
  onTrouble?(what: string): void;
}

/** Forks the scripted model on loopback; resolves once it listens. */
export async function startScriptedModelProcess(opts: ScriptedModelProcessOptions = {}): Promise<ScriptedModelProcess> {
  let closing = false;
  let child: ChildProcess;
  let restart: NodeJS.Timeout | undefined;

  const start = (port: number): Promise<{ url: string; port: number }> => {
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_SCRIPTED_MODEL_PORT: String(port) };
    if (opts.apiKey !== undefined) env.AGENTPLANE_SCRIPTED_MODEL_KEY = opts.apiKey;
    // No execArgv: an --inspect or --cpu-prof of the server is the server's alone.
    const c = fork(MAIN, [], { env, execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child = c;
    return new Promise((resolve, reject) => {
      const failed = (code: number | null, signal: NodeJS.Signals | null) =>
        reject(new Error(`the scripted model exited before it listened (${signal ?? `code ${code}`})`));
      c.once('exit', failed);
      // Kept: a later failed kill or send must not be an unhandled 'error' in the server.
      c.on('error', reject);
      c.once('message', (m: { url: string; port: number }) => {
        c.off('exit', failed);
        c.once('exit', (code, signal) => {
          if (closing || c !== child) return;
          opts.onTrouble?.(`the scripted model exited (${signal ?? `code ${code}`}); starting it again`);
          restart = setTimeout(() => {
            restart = undefined;
            if (!closing) start(m.port).catch((err: unknown) => opts.onTrouble?.(`the scripted model could not be started again: ${String(err)}`));
          }, RESTART_DELAY_MS);
        });
        resolve(m);
      });
    });
  };

  const first = await start(0);
  return {
    url: first.url,
    port: first.port,
    pid: () => child.pid,
    close: async () => {
      closing = true;
      clearTimeout(restart);
      const c = child;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      if (c.connected) c.disconnect();
      else c.kill('SIGTERM');
      const kill = setTimeout(() => c.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(kill);
    },
  };
}
