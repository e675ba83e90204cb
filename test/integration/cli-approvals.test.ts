// The CLI's tool-call approvals, as the real compiled CLI in child processes against a real
// embedded server (scripted model, real workers): `run --require-approval` sets the policy,
// `approvals` lists, `approve`/`deny` decide (a second decision exits 4 with the server's words),
// and `run` on a pseudo-terminal (util-linux `script`) asks and decides.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { eventually, type Harness, startHarness } from '../support/harness.js';

const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
// eslint-disable-next-line no-control-regex -- \u001b starts the terminal escape sequences being stripped
const plain = (s: string): string => s.replace(/\u001b\[[0-9;?]*[a-zA-Z]/g, '');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

describe('agentplane CLI: approvals (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  const cli = (args: string[]): Promise<Result> =>
    new Promise((resolve) => {
      execFile(process.execPath, [MAIN, ...args], { env, timeout: 90_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    });
  const start = (args: string[]): { child: ChildProcess; out: () => string; exit: Promise<number | null> } => {
    const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    return { child, out: () => out, exit: new Promise((r) => child.on('exit', (code) => r(code))) };
  };
  const pendingId = (name: string): Promise<string> =>
    eventually(
      async () => {
        const r = await h.api('GET', `/api/v1/agents/${name}/approvals`);
        return r.status === 200 ? (r.body.approvals as { id: string; decision?: string }[]).find((a) => !a.decision)?.id : undefined;
      },
      60_000,
      `a pending approval of ${name}`,
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-cli-approvals-'));
    h = await startHarness();
    env = { ...process.env, AGENTPLANE_CLIENT_CONFIG: join(dir, 'config.yaml'), AGENTPLANE_SERVER: h.url };
    for (const k of ['AGENTPLANE_NAMESPACE', 'AGENTPLANE_TOKEN', 'AGENTPLANE_CONTEXT', 'NO_COLOR', 'FORCE_COLOR']) delete env[k];
  });
  after(async () => {
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('run --require-approval sets the policy; approvals lists; approve runs the call; a second decision exits 4', async () => {
    const run = start(['run', 'cli-gate', '@bash echo from-the-cli\n@say cli approved', '--require-approval', 'Bash', '--approval-timeout', '300']);
    const id = await pendingId('cli-gate');
    const agent = (await h.api('GET', '/api/v1/agents/cli-gate')).body;
    expect(agent.approval).to.deep.equal({ tools: ['Bash'], timeoutSeconds: 300 });

    const listed = await cli(['approvals', 'cli-gate']);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.match(/^ID\s+TOOL\s+INPUT\s+STATE\s+EXPIRES/);
    expect(listed.stdout).to.contain(id);
    expect(listed.stdout).to.match(/Bash\s+.*echo from-the-cli.*pending/);
    const described = await cli(['describe', 'cli-gate']);
    expect(described.stdout).to.match(/Approval:\s+tools Bash; timeout 300 s, then deny/);
    expect(described.stdout).to.contain(`${id} Bash pending`);

    const approved = await cli(['approve', 'cli-gate', id, '--reason', 'fine by me']);
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.stdout).to.equal(`approval/${id} of agent/cli-gate: allowed (Bash)\n`);
    expect(await run.exit).to.equal(0);
    expect(run.out()).to.contain(`waits for approval (id ${id}`);
    expect(run.out()).to.match(/✔ allowed Bash by system:anonymous: fine by me/);
    expect(run.out()).to.contain('from-the-cli');

    const again = await cli(['deny', 'cli-gate', id]);
    expect(again.code).to.equal(4);
    expect(again.stderr).to.contain(`no approval "${id}"`);
    const usage = await cli(['run', 'cli-gate', 'x', '--allow-command', 'ls*']);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.contain('go with --require-approval');
  });

  it('deny tells the model why, and the task goes on', async () => {
    const run = start(['run', 'cli-deny', '@bash echo must-not-run\n@say carried on', '--require-approval', 'Ba*']);
    const id = await pendingId('cli-deny');
    const denied = await cli(['deny', 'cli-deny', id, '--reason', 'not this one']);
    expect(denied.code, denied.stderr).to.equal(0);
    expect(denied.stdout).to.contain('denied (Bash)');
    expect(await run.exit).to.equal(0);
    expect(run.out()).to.match(/✖ denied Bash by system:anonymous: not this one/);
    expect(run.out()).to.contain('carried on');
    const events = (await h.api('GET', '/api/v1/agents/cli-deny/events?limit=200')).body.events as { type: string; payload: { output?: string } }[];
    expect(events.find((e) => e.type === 'tool_result')!.payload.output).to.contain('not this one');
  });

  it('run on a terminal asks, and "y" allows the call', async () => {
    const args = [process.execPath, MAIN, 'run', 'cli-pty', '@bash echo asked-at-the-terminal\n@say pty approved', '--require-approval', 'Bash'];
    const cmd = `stty cols 160 rows 40; ${args.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')}; echo EXIT=$?`;
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...env, SHELL: '/bin/bash' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    const exited = new Promise((r) => child.on('exit', r));
    try {
      await eventually(async () => plain(out).includes('Allow Bash?'), 60_000, 'the question');
      expect(plain(out)).to.contain('allow [y], deny [n], leave it for someone else [any other key]?');
      expect(plain(out)).to.contain('echo asked-at-the-terminal');
      child.stdin.write('y');
      await eventually(async () => out.includes('EXIT='), 60_000, 'the CLI to exit');
    } finally {
      child.stdin.end();
      await exited;
    }
    const text = plain(out);
    expect(text).to.contain('EXIT=0');
    expect(text).to.contain('pty approved');
    expect(text).to.match(/allowed Bash by system:anonymous: decided at the terminal running the task/);
  });
});
