// The Python client (clients/python, agentplane-client) against a real `serve --demo` server on
// loopback: its pytest suite (clients/python/tests) in a cached virtualenv with the client
// installed as a user's pip would (test/support/python-client.ts).

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { type DemoServer, startDemoServer } from '../support/demo-server.js';
import { PYTHON_CLIENT, pythonClientPython } from '../support/python-client.js';

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: PYTHON_CLIENT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    for (const s of [child.stdout, child.stderr]) s.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('typed clients: Python (agentplane-client) against a real server', function () {
  // Generous: a task's worker and engine start in seconds on a quiet machine, far slower on a busy one.
  this.timeout(400_000);
  let python: string;
  let server: DemoServer;

  before(async function () {
    this.timeout(600_000); // a first run installs the packages from PyPI
    python = pythonClientPython();
    server = await startDemoServer();
  });
  after(async () => server?.stop());

  it('passes its pytest suite: a task followed over the WebSocket, agents, connectors, secrets, squads, schedules, typed refusals, the README example', async () => {
    const { code, out } = await run(
      python,
      ['-P', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', join(PYTHON_CLIENT, 'tests')],
      { AGENTPLANE_URL: server.url, PYTHONDONTWRITEBYTECODE: '1' },
      360_000,
    );
    expect(code, out).to.equal(0);
    expect(out).to.match(/\b5 passed\b/);
  });
});
