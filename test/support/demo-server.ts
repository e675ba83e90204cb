// `agentplane serve --demo` as its own process on a free loopback port, with a scratch data dir:
// the server a newcomer runs (the scripted model built in), for clients that talk to it from
// outside (test/clients).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type ServerProcess, startServerProcess } from './server-process.js';

export interface DemoServer extends ServerProcess {
  stop(): Promise<void>;
}

export async function startDemoServer(args: string[] = []): Promise<DemoServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-demo-'));
  // --demo brings its own model: the model settings startServerProcess passes are not used.
  const server = await startServerProcess({ port: await freePort(), dataDir, model: { url: '', apiKey: '' }, args: ['--demo', ...args] });
  return {
    ...server,
    async stop() {
      server.child.kill('SIGTERM');
      const killer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
      await server.exited;
      clearTimeout(killer);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
