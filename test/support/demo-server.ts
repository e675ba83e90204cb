// `agentplane serve --demo` as its own process on a free loopback port, with a scratch data dir:
// the server a newcomer runs (the scripted model built in), for clients that talk to it from
// outside (test/clients).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type ServerProcess, startServerProcess } from './server-process.js';

export interface DemoServer {
  url: string;
  /** Stops the process and starts a new one on the same port and data dir (its agents kept). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDemoServer(args: string[] = []): Promise<DemoServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-demo-'));
  const port = await freePort();
  // --demo brings its own model: the model settings startServerProcess passes are not used.
  const start = (): Promise<ServerProcess> => startServerProcess({ port, dataDir, model: { url: '', apiKey: '' }, args: ['--demo', ...args] });
  const end = async (p: ServerProcess): Promise<void> => {
    p.child.kill('SIGTERM');
    const killer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
    await p.exited;
    clearTimeout(killer);
  };
  let current = await start();
  return {
    url: current.url,
    async restart() {
      await end(current);
      current = await start();
    },
    async stop() {
      await end(current);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
