// The `agentplane` client commands, run as the real compiled CLI in child processes against a
// real embedded server (scripted model, real workers): every verb, `run` streaming to a pipe and
// to a pseudo-terminal (util-linux `script` gives it a real pty), --json, contexts, completion,
// and the error exits (unknown agent, unreachable server, 401 against a server with a token file).

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, realpathSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { tokenFileYaml } from '../support/tokens.js';
import { busyFor, eventually, type Harness, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { runCli } from '../support/cli.js';

const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
const ESC = '\u001b[';
const SPINNER_FRAME = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
/** Terminal output without its escape sequences. */
// eslint-disable-next-line no-control-regex -- \u001b starts the terminal escape sequences being stripped
const plain = (s: string): string => s.replace(/\u001b\[[0-9;?]*[a-zA-Z]/g, '');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** A closed port on loopback: bound once, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** This Node and every other `node` on PATH (each real file once). */
function nodesOnPath(): string[] {
  const found = new Map<string, string>([[realpathSync(process.execPath), process.execPath]]);
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = join(dir || '.', 'node');
    try {
      accessSync(candidate, constants.X_OK);
      const real = realpathSync(candidate);
      if (!found.has(real)) found.set(real, candidate);
    } catch {
      // none here
    }
  }
  return [...found.values()];
}

describe('agentplane CLI (integration)', function () {
  this.timeout(120_000);

  let h: Harness;
  let dir: string;
  let mcp: TestMcpServer;
  /** The environment of every CLI run: the server, and a config file of this test's own. */
  let env: NodeJS.ProcessEnv;

  const baseEnv = (): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_CLIENT_CONFIG: join(dir, 'config.yaml') };
    for (const k of ['AGENTPLANE_SERVER', 'AGENTPLANE_NAMESPACE', 'AGENTPLANE_TOKEN', 'AGENTPLANE_CONTEXT', 'NO_COLOR', 'FORCE_COLOR']) delete e[k];
    return e;
  };

  /** Runs the CLI with stdout and stderr as pipes. */
  const cli = (args: string[], more: NodeJS.ProcessEnv = {}, timeout = 90_000, node = process.execPath): Promise<Result> =>
    runCli({ ...env, ...more }, args, timeout, node);

  /** A CLI process left running, its output collected. */
  const start = (args: string[]): { child: ChildProcess; out: () => string; exit: Promise<number | null> } => {
    const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    return { child, out: () => out, exit };
  };

  /** Runs the CLI on a pseudo-terminal (script(1)); its output as the terminal got it. */
  const inPty = (args: string[]): Promise<Result> => {
    const cmd = `stty cols 120 rows 40; ${[process.execPath, MAIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')}`;
    return new Promise<Result>((resolve) => {
      execFile('script', ['-qfec', cmd, '/dev/null'], { env: { ...env, SHELL: '/bin/bash' }, timeout: 90_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout: String(stdout), stderr: String(stderr) }),
      );
    });
  };

  const noStackTrace = (r: Result): void => {
    expect(r.stderr).not.to.match(/^\s+at .+:\d+:\d+\)?$/m);
  };

  const agentStatus = async (name: string): Promise<{ status: string; taskStatus: string }> => (await h.api('GET', `/api/v1/agents/${name}`)).body;
  const waitIdle = (name: string): Promise<unknown> =>
    eventually(async () => ['Complete', 'Error', 'Cancelled'].includes((await agentStatus(name)).taskStatus), 60_000, `${name} idle`);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-cli-'));
    h = await startHarness();
    mcp = createTestMcpServer({ token: 'mcp-token-7d1e' });
    await mcp.start();
    env = { ...baseEnv(), AGENTPLANE_SERVER: h.url };
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('run', () => {
    it('creates the agent and streams to a pipe: text, one line per tool call, a summary; no ANSI escapes; exit 0', async () => {
      const r = await cli(['run', 'alpha', '@bash echo cli-hello\n@say all finished']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.include('created agent/alpha in namespace default');
      expect(r.stdout).to.match(/^✔ Bash echo cli-hello → cli-hello$/m);
      expect(r.stdout).to.match(/^all finished$/m);
      expect(r.stdout).to.match(/^✔ task 1 completed · 2 turns · \$\d+\.\d{4} · [\d.]+m?s$/m);
      expect(r.stdout + r.stderr).not.to.include(ESC);
      expect(r.stdout).not.to.match(SPINNER_FRAME);
      expect((await agentStatus('alpha')).taskStatus).to.equal('Complete');
    });

    it('tasks an existing agent; --json prints the raw events, one per line, of that task only', async () => {
      const r = await cli(['run', 'alpha', '@say second one', '--json']);
      expect(r.code, r.stderr).to.equal(0);
      const events = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; task: number; agentName: string });
      expect(events[0]).to.include({ type: 'task_started', task: 2, agentName: 'alpha' });
      expect(events.at(-1)).to.include({ type: 'task_completed', task: 2 });
      expect(events.every((e) => e.task === 2)).to.equal(true);
    });

    // The end event can arrive with the stream's handshake, before the socket is handed over:
    // `run` must stop there too, not wait on a socket it no longer reads (a race: loop it).
    // Every Node on PATH runs it (the machine's as well as the project's: the README lets the
    // CLI run on either), and Node 20 lost this race one run in thirty.
    it('ends every time on an existing idle agent, piped or --json, under each Node on PATH (40 runs)', async () => {
      const nodes = nodesOnPath();
      for (let i = 0; i < 40; i++) {
        const json = i % 2 === 1;
        const node = nodes[Math.floor(i / 2) % nodes.length];
        const r = await cli(['run', 'looper', `@say loop ${i}`, ...(json ? ['--json'] : [])], {}, 20_000, node);
        expect(r.code, `run ${i}${json ? ' --json' : ''} with ${node} did not end: ${r.stderr}`).to.equal(0);
        expect(r.stdout).to.include(`loop ${i}`);
      }
    });

    it('without a terminal, prints a line when a tool call starts, before its result', async () => {
      const f = start(['run', 'epsilon', `@bash ${busyFor(3)}\n@say slow one done`]);
      await eventually(async () => /^▸ Bash /m.test(f.out()), 30_000, 'the call line');
      expect(f.out(), 'the result comes later').not.to.match(/^✔ Bash /m);
      expect(await f.exit).to.equal(0);
      expect(f.out()).to.match(/^▸ Bash [^\n]*\n(?:.*\n)*✔ Bash /m);
    });

    // script(1) runs the command with $SHELL. dash, the usual /bin/sh, dies of the terminal's
    // SIGINT while it waits for the CLI (bash waits to see whether the child handled it), and
    // script ends with its shell: keys typed after Ctrl-C would go nowhere.
    const ptyEnv = (): NodeJS.ProcessEnv => ({ ...env, SHELL: '/bin/bash' });

    it('streams to a pseudo-terminal with colours and spinner frames while a tool runs', async () => {
      const cmd = `stty cols 120 rows 40; ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} run beta '@bash ${busyFor(2).replace(/'/g, "'\\''")}\n@say pty done'`;
      const r = await new Promise<Result>((resolve) => {
        execFile('script', ['-qfec', cmd, '/dev/null'], { env: ptyEnv(), timeout: 90_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout: String(stdout), stderr: String(stderr) }),
        );
      });
      expect(r.code, r.stdout).to.equal(0);
      expect(r.stdout).to.include(`${ESC}32m✔`); // a green tick
      expect(r.stdout).to.match(SPINNER_FRAME);
      expect(r.stdout).to.include('pty done');
      expect(r.stdout).to.include('task 1 completed');
    });

    it('exits 1 when the task ends with an error event', async () => {
      const r = await cli(['run', 'gamma', '@fail 400 invalid_request_error broken-on-purpose']);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.match(/✖ task 1 failed: .*broken-on-purpose/);
    });

    it('on SIGINT without a terminal cancels the task and exits 3', async () => {
      const run = start(['run', 'delta', `@bash ${busyFor(30)}\n@say never`]);
      await eventually(
        async () => (await agentStatus('delta').catch(() => ({ taskStatus: '' }))).taskStatus === 'InProgress' && run.out().includes('created agent/delta'),
        30_000,
        'delta busy',
      );
      await eventually(
        async () => (await h.api('GET', '/api/v1/agents/delta/events')).body.events.some((e: { type: string }) => e.type === 'tool_call'),
        30_000,
        'delta tool call',
      );
      run.child.kill('SIGINT');
      expect(await run.exit).to.equal(3);
      expect(run.out()).to.include('cancelling the task');
      expect(run.out()).to.match(/task 1 cancelled/);
      expect((await agentStatus('delta')).taskStatus).to.equal('Cancelled');
    });

    /** Runs a long task on a pseudo-terminal, presses Ctrl-C while its tool spins, answers `key`; the terminal's output, ending `EXIT=<code>`. */
    const interruptOnPty = async (agent: string, key: string): Promise<string> => {
      const cmd = `stty cols 120 rows 40; ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} run ${agent} '@bash ${busyFor(30).replace(/'/g, "'\\''")}\n@say never'; echo EXIT=$?`;
      const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: ptyEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += String(d)));
      const exited = new Promise((r) => child.on('exit', r));
      try {
        await eventually(async () => SPINNER_FRAME.test(out), 60_000, 'the tool call spinning');
        child.stdin.write('\u0003'); // the terminal turns it into SIGINT
        await eventually(async () => out.includes('Interrupted.'), 20_000, 'the question');
        expect(plain(out)).to.include('Cancel the task [c], detach and leave it running [d], or keep watching');
        child.stdin.write(key);
        await eventually(async () => out.includes('EXIT='), 30_000, 'the CLI to exit');
      } finally {
        child.stdin.end();
        await exited;
      }
      return plain(out);
    };

    it('on Ctrl-C in a terminal asks; "d" detaches (exit 130) and the task goes on', async () => {
      const out = await interruptOnPty('epsilon', 'd');
      expect(out).to.include('detached: agent/epsilon goes on with its task');
      expect(out).to.include('EXIT=130');
      expect((await agentStatus('epsilon')).taskStatus).to.equal('InProgress');
      expect((await cli(['cancel', 'epsilon'])).code).to.equal(0);
    });

    it('on Ctrl-C in a terminal asks; "c" cancels the task on the server and exits 3', async () => {
      const out = await interruptOnPty('eta', 'c');
      expect(out).to.include('cancelling the task');
      expect(out).to.match(/■ task 1 cancelled/);
      expect(out).to.include('EXIT=3');
      expect((await agentStatus('eta')).taskStatus).to.equal('Cancelled');
      const events = (await h.api('GET', '/api/v1/agents/eta/events')).body.events as { type: string }[];
      expect(events.at(-1)?.type).to.equal('task_cancelled');
    });

    it('refuses a task to a busy agent with the server message, a hint and exit 4', async () => {
      await h.api('POST', '/api/v1/agents', { name: 'delta', instructions: `@bash ${busyFor(30)}\n@say never` });
      const r = await cli(['run', 'delta', 'another']);
      expect(r.code).to.equal(4);
      expect(r.stderr).to.include('error: agent "delta" is busy with a task');
      expect(r.stderr).to.include('hint: wait for the task');
      noStackTrace(r);
    });
  });

  describe('agent verbs', () => {
    it('steer sends a follow-up into the running task', async () => {
      const r = await cli(['steer', 'delta', 'and also this']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.include('agent/delta steered');
      await eventually(
        async () =>
          (await h.api('GET', '/api/v1/agents/delta/events')).body.events.some(
            (e: { type: string; payload: { content?: string } }) => e.type === 'user_message' && e.payload.content === 'and also this',
          ),
        30_000,
        'user_message',
      );
    });

    it('cancel cancels the running task; then steer on the idle agent says it started a new task; cancel on an idle agent says there is nothing to cancel', async () => {
      const r = await cli(['cancel', 'delta']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/agent\/delta: (task cancelled|cancel requested)/);
      await waitIdle('delta');
      const steered = await cli(['steer', 'delta', '@say a fresh start']);
      expect(steered.code, steered.stderr).to.equal(0);
      expect(steered.stdout).to.match(/^agent\/delta was idle: started task \d+ with it/m);
      expect(steered.stdout).not.to.include('steered');
      await waitIdle('delta');
      // Idempotent, as the API is: nothing running is not a failure.
      const again = await cli(['cancel', 'delta']);
      expect(again.code, again.stderr).to.equal(0);
      expect(again.stdout).to.include('agent/delta: nothing to cancel (no task is running)');
    });

    it('ls and get print kubectl-like tables with the server columns; -o wide, json, yaml and name; -A', async () => {
      const ls = await cli(['ls']);
      expect(ls.code, ls.stderr).to.equal(0);
      const lines = ls.stdout.trim().split('\n');
      expect(lines[0]).to.match(/^NAME\s{3,}STATUS\s{3,}TASK\s{3,}MODEL\s{3,}AGE$/);
      expect(lines.find((l) => l.startsWith('alpha '))).to.match(/^alpha\s+Running\s+Complete\s+\S+\s+\d+(s|m)/);

      const wide = await cli(['ls', '-o', 'wide']);
      expect(wide.stdout.split('\n')[0]).to.match(/AGE\s+MESSAGE$/);
      expect(wide.stdout).to.include('second one');

      await h.api('POST', '/api/v1/agents', { name: 'other-ns', namespace: 'team-b', instructions: '@say hi' });
      const all = await cli(['ls', '-A']);
      expect(all.stdout.split('\n')[0]).to.match(/^NAMESPACE\s+NAME\s+STATUS/);
      expect(all.stdout).to.match(/^team-b\s+other-ns\s/m);
      expect(all.stdout).to.match(/^default\s+alpha\s/m);
      expect((await cli(['ls'])).stdout).not.to.include('other-ns');
      expect((await cli(['ls', '-n', 'team-b'])).stdout).to.match(/^other-ns\s/m);

      const json = JSON.parse((await cli(['get', 'alpha', '-o', 'json'])).stdout);
      expect(json).to.include({ name: 'alpha', namespace: 'default', taskStatus: 'Complete' });
      const yaml = (await cli(['get', 'alpha', '-o', 'yaml'])).stdout;
      expect(yaml).to.match(/^name: alpha$/m);
      const list = JSON.parse((await cli(['ls', '-o', 'json'])).stdout);
      expect(list.agents.map((a: { name: string }) => a.name)).to.include.members(['alpha', 'beta']);
      expect((await cli(['ls', '-o', 'name'])).stdout).to.match(/^agent\/alpha$/m);

      const one = await cli(['get', 'alpha']);
      expect(one.stdout.trim().split('\n')).to.have.length(2);
      const bad = await cli(['ls', '-o', 'xml']);
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.include('unknown output format "xml"');
    });

    it('describe shows settings, status and recent events', async () => {
      const r = await cli(['describe', 'alpha']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^Name:\s+alpha$/m);
      expect(r.stdout).to.match(/^Task:\s+Complete$/m);
      expect(r.stdout).to.match(/^Events:$/m);
      expect(r.stdout).to.match(/task_completed\s+\S+\s+\d+ turns?, \$/);
      // On a terminal the prompt that follows starts on a line of its own.
      const tty = await inPty(['describe', 'alpha']);
      expect(tty.code, tty.stdout).to.equal(0);
      expect(tty.stdout).to.match(/task_completed[^\n]*\r\n$/);
    });

    it('logs prints the latest task, --task another, --tail, --since and --json', async () => {
      const latest = await cli(['logs', 'alpha']);
      expect(latest.code, latest.stderr).to.equal(0);
      expect(latest.stdout).to.include('▶ task 2: @say second one');
      expect(latest.stdout).not.to.include('cli-hello');
      const first = await cli(['logs', 'alpha', '--task', '1']);
      expect(first.stdout).to.match(/^✔ Bash echo cli-hello → cli-hello$/m);
      expect(first.stdout).not.to.include('second one');
      const tail = await cli(['logs', 'alpha', '--tail', '2', '--json']);
      const evs = tail.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string });
      expect(evs.map((e) => e.type)).to.deep.equal(['text', 'task_completed']);
      const since = await cli(['logs', 'alpha', '--since', '1h']);
      expect(since.stdout).to.include('cli-hello');
      expect(since.stdout).to.include('second one');
      const bad = await cli(['logs', 'alpha', '--since', 'yesterday']);
      expect(bad.code).to.equal(2);
    });

    it('logs -f follows new events live until interrupted', async () => {
      const f = start(['logs', 'alpha', '-f']);
      await eventually(async () => f.out().includes('task 2 completed'), 30_000, 'history printed');
      await h.api('POST', '/api/v1/agents', { name: 'alpha', instructions: '@say live three' });
      await eventually(async () => f.out().includes('task 3 completed'), 60_000, 'live task followed');
      expect(f.out()).to.include('live three');
      f.child.kill('SIGINT');
      expect(await f.exit).to.equal(0);
    });

    it('sleep and wake', async () => {
      expect((await cli(['sleep', 'alpha'])).code).to.equal(0);
      await eventually(async () => (await agentStatus('alpha')).status === 'Sleeping', 30_000, 'alpha asleep');
      expect((await cli(['ls'])).stdout).to.match(/^alpha\s+Sleeping\s/m);
      const wake = await cli(['wake', 'alpha']);
      expect(wake.code, wake.stderr).to.equal(0);
      expect(wake.stdout).to.include('agent/alpha woken');
      await eventually(async () => (await agentStatus('alpha')).status !== 'Sleeping', 30_000, 'alpha awake');
    });
  });

  describe('squads', () => {
    it('create, ls, get, add, rm and break-up', async () => {
      for (const a of ['beta', 'gamma', 'delta']) {
        await waitIdle(a);
        expect((await cli(['sleep', a])).code).to.equal(0);
      }
      await eventually(
        async () => (await Promise.all(['beta', 'gamma', 'delta'].map(agentStatus))).every((a) => a.status === 'Sleeping'),
        30_000,
        'all asleep',
      );

      const created = await cli(['squad', 'create', 'crew', 'beta', 'gamma', '--orphan-ttl', '30m']);
      expect(created.code, created.stderr).to.equal(0);
      expect(created.stdout).to.include('squad/crew created with beta, gamma');
      const ls = await cli(['squad', 'ls']);
      expect(ls.stdout.split('\n')[0]).to.match(/^NAME\s+PHASE\s+MEMBERS\s+AGE$/);
      expect(ls.stdout).to.match(/^crew\s+\S+\s+2\s/m);

      expect((await cli(['squad', 'add', 'crew', 'delta'])).stdout).to.include('squad/crew gained agent/delta');
      const got = await cli(['squad', 'get', 'crew']);
      expect(got.stdout).to.match(/^crew\s+\S+\s+3\s/m);
      expect(got.stdout).to.match(/^\s+delta\s+\S+/m);
      expect((await inPty(['squad', 'get', 'crew'])).stdout, 'a newline at the end on a terminal').to.match(/delta[^\n]*\r\n$/);
      const json = JSON.parse((await cli(['squad', 'get', 'crew', '-o', 'json'])).stdout);
      expect(json.members.map((m: { name: string }) => m.name)).to.deep.equal(['beta', 'gamma', 'delta']);

      expect((await cli(['squad', 'rm', 'crew', 'delta'])).stdout).to.include('squad/crew lost agent/delta');
      const brk = await cli(['squad', 'break-up', 'crew']);
      expect(brk.code, brk.stderr).to.equal(0);
      expect(brk.stdout).to.include('squad/crew marked for break-up');
      await eventually(async () => (await h.api('GET', '/api/v1/squads/crew')).status === 404, 30_000, 'squad dissolved');
      const gone = await cli(['squad', 'get', 'crew']);
      expect(gone.code).to.equal(4);
      expect(gone.stderr).to.include('hint: see what exists with `agentplane squad ls -n default`');
    });
  });

  describe('secrets and connectors', () => {
    it('secret set, ls (never the value) and rm', async () => {
      const set = await cli(['secret', 'set', 'mcp-cred', 'token=mcp-token-7d1e']);
      expect(set.code, set.stderr).to.equal(0);
      expect(set.stdout).to.include('secret/mcp-cred created (keys: token)');
      expect((await cli(['secret', 'set', 'scratch', 'a=1', 'b=2'])).stdout).to.include('created');
      const ls = await cli(['secret', 'ls']);
      expect(ls.stdout.split('\n')[0]).to.match(/^NAME\s+KEYS\s+AGE$/);
      expect(ls.stdout).to.match(/^scratch\s+2\s/m);
      expect(ls.stdout).not.to.include('mcp-token-7d1e');
      expect((await cli(['secret', 'rm', 'scratch'])).stdout).to.include('secret/scratch deleted');
      expect((await cli(['secret', 'ls'])).stdout).not.to.include('scratch');
      const bad = await cli(['secret', 'set', 'x', 'novalue']);
      expect(bad.code).to.equal(2);
    });

    it('connector add, ls, tools and rm', async () => {
      const add = await cli(['connector', 'add', 'echo', '--url', mcp.url, '--service', 'test', '--secret', 'mcp-cred/token']);
      expect(add.code, add.stderr).to.equal(0);
      expect(add.stdout).to.include('connector/echo created');
      const ls = await cli(['connector', 'ls']);
      expect(ls.stdout.split('\n')[0]).to.match(/^NAME\s+SERVICE\s+URL\s+STATUS\s+AGE$/);
      expect(ls.stdout).to.match(/^echo\s+test\s+http:\/\/127\.0\.0\.1/m);
      const tools = await cli(['connector', 'tools', 'echo']);
      expect(tools.code, tools.stderr).to.equal(0);
      expect(tools.stdout).to.match(/^echo\s+Echoes the text back\.$/m);
      expect((await cli(['connector', 'rm', 'echo'])).stdout).to.include('connector/echo deleted');
      expect((await cli(['connector', 'ls'])).stderr).to.include('No connectors found');
    });

    it('run --model and a repeated --connector: the agent carries both, and its task calls each connector', async () => {
      for (const c of ['echo1', 'echo2']) expect((await cli(['connector', 'add', c, '--url', mcp.url, '--secret', 'mcp-cred/token'])).code).to.equal(0);
      const model = 'claude-haiku-4-5';
      const task = '@tool mcp__echo1__echo {"text":"via one"}\n@tool mcp__echo2__echo {"text":"via two"}\n@say both used';
      const r = await cli(['run', 'zeta', '--model', model, '--connector', 'echo1', '--connector', 'echo2', '--priority', '7', task]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^✔ mcp__echo1__echo .*→ echo: via one$/m);
      expect(r.stdout).to.match(/^✔ mcp__echo2__echo .*→ echo: via two$/m);
      expect(r.stdout).to.match(/^✔ task 1 completed/m);
      const agent = JSON.parse((await cli(['get', 'zeta', '-o', 'json'])).stdout);
      expect(agent).to.deep.include({ model, connectors: ['echo1', 'echo2'], priority: 7 });
      expect(mcp.calls).to.include.members(['via one', 'via two']);
      // The engine asked the model named by --model, offering both connectors' tools.
      const asked = h.model.requests.filter((q) => q.hasTools && q.lastUserText.includes('via one'));
      expect(asked).to.not.deep.equal([]);
      for (const q of asked) {
        expect(q.model).to.equal(model);
        expect(q.tools).to.include.members(['mcp__echo1__echo', 'mcp__echo2__echo']);
      }
    });
  });

  describe('contexts', () => {
    it('set-context, get-contexts, use-context; the context gives server and namespace', async () => {
      const ctxEnv = { AGENTPLANE_SERVER: '' };
      const port = await closedPort();
      expect((await cli(['config', 'set-context', 'local', '--server', h.url], ctxEnv)).stdout).to.include('Context "local" created (current)');
      expect((await cli(['config', 'set-context', 'team-b', '--server', h.url, '--namespace', 'team-b'], ctxEnv)).code).to.equal(0);
      expect((await cli(['config', 'set-context', 'nowhere', '--server', `127.0.0.1:${port}`], ctxEnv)).code).to.equal(0);
      const path = join(dir, 'config.yaml');
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      expect(readFileSync(path, 'utf8')).to.include('currentContext: local');

      const list = await cli(['config', 'get-contexts'], ctxEnv);
      expect(list.stdout).to.match(/^\*\s+local\s+http:\/\/127\.0\.0\.1:\d+/m);
      expect(list.stdout).to.match(/^\s+team-b\s+\S+\s+team-b/m);

      expect((await cli(['ls'], ctxEnv)).stdout).to.match(/^alpha\s/m);
      expect((await cli(['config', 'use-context', 'team-b'], ctxEnv)).stdout).to.include('Switched to context "team-b"');
      expect((await cli(['ls'], ctxEnv)).stdout).to.match(/^other-ns\s/m);
      expect((await cli(['ls', '--context', 'local'], ctxEnv)).stdout).to.match(/^alpha\s/m);
      expect((await cli(['ls', '-n', 'default'], ctxEnv)).stdout).to.match(/^alpha\s/m);
      expect((await cli(['config', 'current-context'], ctxEnv)).stdout.trim()).to.equal('team-b');

      const unreachable = await cli(['ls', '--context', 'nowhere'], ctxEnv);
      expect(unreachable.code).to.equal(5);
      expect(unreachable.stderr).to.include(`cannot reach the agentplane server at http://127.0.0.1:${port}`);

      const unknown = await cli(['ls', '--context', 'mars'], ctxEnv);
      expect(unknown.code).to.equal(2);
      expect(unknown.stderr).to.include('context "mars" not found');
      expect(unknown.stderr).to.include('known contexts: local, team-b, nowhere');
      expect((await cli(['config', 'use-context', 'local'], ctxEnv)).code).to.equal(0);
    });

    it('honours XDG_CONFIG_HOME when AGENTPLANE_CLIENT_CONFIG is not set', async () => {
      const xdg = join(dir, 'xdg');
      const r = await cli(['config', 'set-context', 'x', '--server', h.url], { AGENTPLANE_CLIENT_CONFIG: '', XDG_CONFIG_HOME: xdg });
      expect(r.code, r.stderr).to.equal(0);
      expect(readFileSync(join(xdg, 'agentplane', 'config.yaml'), 'utf8')).to.include('name: x');
    });

    it('without XDG_CONFIG_HOME, reads and writes ~/.config/agentplane/config.yaml under HOME', async () => {
      const home = join(dir, 'home');
      const homeEnv = { HOME: home, AGENTPLANE_CLIENT_CONFIG: undefined, XDG_CONFIG_HOME: undefined, AGENTPLANE_SERVER: undefined };
      const r = await cli(['config', 'set-context', 'home-ctx', '--server', h.url, '--namespace', 'team-b'], homeEnv);
      expect(r.code, r.stderr).to.equal(0);
      const path = join(home, '.config', 'agentplane', 'config.yaml');
      expect(readFileSync(path, 'utf8')).to.include('currentContext: home-ctx');
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      expect(statSync(join(home, '.config', 'agentplane')).mode & 0o777).to.equal(0o700);
      // The context found there gives server and namespace.
      const ls = await cli(['ls'], homeEnv);
      expect(ls.code, ls.stderr).to.equal(0);
      expect(ls.stdout).to.match(/^other-ns\s/m);
    });
  });

  describe('completion', () => {
    it('prints scripts for bash, zsh and fish; __complete lists commands, flags and agent names from the server', async () => {
      for (const shell of ['bash', 'zsh', 'fish']) {
        const r = await cli(['completion', shell]);
        expect(r.code).to.equal(0);
        expect(r.stdout).to.include('agentplane __complete');
      }
      expect((await cli(['completion', 'tcsh'])).code).to.equal(2);
      expect((await cli(['__complete', ''])).stdout.split('\n')).to.include.members(['run', 'ls', 'squad', 'connector', 'secret', 'config']);
      expect((await cli(['__complete', 'squad', ''])).stdout.split('\n')).to.include.members(['create', 'add', 'rm', 'break-up', 'ls', 'get']);
      expect((await cli(['__complete', 'logs', 'al'])).stdout.trim()).to.equal('alpha');
      expect((await cli(['__complete', 'describe', '-n', 'team-b', ''])).stdout.trim()).to.equal('other-ns');
      expect((await cli(['__complete', 'logs', '--f'])).stdout).to.include('--follow');
      expect((await cli(['__complete', 'ls', '-o', ''])).stdout.split('\n')).to.include.members(['wide', 'json', 'yaml']);
      // Nothing, and no error text, when the server is away.
      const away = await cli(['__complete', 'get', ''], { AGENTPLANE_SERVER: `127.0.0.1:${await closedPort()}` });
      expect(away).to.deep.include({ code: 0, stdout: '', stderr: '' });
    });

    /** Runs a shell with this CLI on PATH as `agentplane` (so the scripts' `agentplane __complete` is the real CLI); its stdout. */
    const inShell = async (shell: string, args: string[], more: NodeJS.ProcessEnv = {}): Promise<string> => {
      const bin = join(dir, 'bin');
      mkdirSync(bin, { recursive: true });
      if (!existsSync(join(bin, 'agentplane'))) symlinkSync(MAIN, join(bin, 'agentplane'));
      return new Promise<string>((resolve, reject) =>
        execFile(
          shell,
          args,
          { env: { ...env, HOME: join(dir, 'home'), PATH: `${bin}:${process.env.PATH}`, ...more }, timeout: 60_000 },
          (err, stdout, stderr) => (err ? reject(new Error(`${shell}: ${err.message}\n${stderr}`)) : resolve(String(stdout))),
        ),
      );
    };
    /** The completion script for `shell`, saved in the test's folder. */
    const scriptFile = async (shell: string): Promise<string> => {
      const file = join(dir, `completion.${shell}`);
      writeFileSync(file, (await cli(['completion', shell])).stdout);
      return file;
    };

    it('the bash script completes agent names through the CLI on PATH', async () => {
      const file = await scriptFile('bash');
      const complete = (words: string): Promise<string> =>
        inShell('bash', [
          '-c',
          `source ${file}; COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _agentplane; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ]);
      expect((await complete('agentplane describe al')).trim()).to.equal('alpha');
      expect((await complete("agentplane describe -n team-b ''")).trim()).to.equal('other-ns');
    });

    it('the fish script completes agent names in a real fish', async () => {
      const file = await scriptFile('fish');
      const complete = async (line: string): Promise<string[]> =>
        (await inShell('fish', ['--no-config', '-c', `source ${file}; complete -C ${JSON.stringify(line)}`]))
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('\t')[0]);
      expect(await complete('agentplane describe al')).to.deep.equal(['alpha']);
      expect(await complete('agentplane describe -n team-b ')).to.deep.equal(['other-ns']);
      expect(await complete('agentplane squad ')).to.include.members(['create', 'add', 'break-up']);
    });

    it('the zsh script completes agent names in a real interactive zsh (zsh/zpty), and offers nothing when nothing matches', async () => {
      const file = await scriptFile('zsh');
      // An interactive zsh on a pseudo-terminal with compinit and the script sourced; after Tab,
      // Ctrl-X runs a widget that writes the edited line to a file.
      const zdot = join(dir, 'zdot');
      mkdirSync(zdot, { recursive: true });
      writeFileSync(
        join(zdot, '.zshrc'),
        `PS1='> '\nbindkey -e\nautoload -Uz compinit && compinit -u -D\nsource ${file}\n` +
          `dump-buffer() { print -r -- "$BUFFER" >| "$DUMP" }\nzle -N dump-buffer\nbindkey '^X' dump-buffer\nprint zsh-ready\n`,
      );
      const driver = [
        'zmodload zsh/zpty',
        'zpty z zsh -d -i',
        "zpty -r z _ '*zsh-ready*'",
        'zpty -w -n z "$1"$\'\\t\\C-x\'',
        'for i in {1..300}; do [[ -e $DUMP ]] && break; sleep 0.1; done',
        'zpty -d z',
        'cat $DUMP',
      ].join('\n');
      let n = 0;
      const complete = async (line: string, more: NodeJS.ProcessEnv = {}): Promise<string> =>
        (await inShell('zsh', ['-f', '-c', driver, 'zsh', line], { ZDOTDIR: zdot, DUMP: join(zdot, `buffer-${++n}`), ...more })).replace(/\n$/, '');
      expect(await complete('agentplane describe al')).to.equal('agentplane describe alpha ');
      expect(await complete('agentplane describe -n team-b ')).to.equal('agentplane describe -n team-b other-ns ');
      expect(await complete('agentplane squad break')).to.equal('agentplane squad break-up ');
      // No server: no candidate at all (the line is left as typed, no empty word inserted).
      expect(await complete('agentplane describe ', { AGENTPLANE_SERVER: `127.0.0.1:${await closedPort()}` })).to.equal('agentplane describe ');
    });
  });

  describe('errors', () => {
    it('an unknown agent: the server message, a hint, exit 4, no stack trace', async () => {
      for (const args of [
        ['describe', 'nope'],
        ['get', 'nope'],
        ['logs', 'nope'],
        ['rm', 'nope'],
      ]) {
        const r = await cli(args);
        expect(r.code, args.join(' ')).to.equal(4);
        expect(r.stderr).to.include('error: Agent "nope" not found in namespace "default"');
        expect(r.stderr).to.include('hint: see what exists with `agentplane ls -n default`');
        noStackTrace(r);
      }
    });

    it('an unreachable server: the address tried, exit 5', async () => {
      const port = await closedPort();
      const r = await cli(['ls'], { AGENTPLANE_SERVER: `http://127.0.0.1:${port}` });
      expect(r.code).to.equal(5);
      expect(r.stderr).to.include(`error: cannot reach the agentplane server at http://127.0.0.1:${port} (ECONNREFUSED)`);
      expect(r.stderr).to.include('hint: start one with `agentplane serve`');
      noStackTrace(r);
      const run = await cli(['--server', `127.0.0.1:${port}`, 'run', 'x', 'y']);
      expect(run.code).to.equal(5);
      expect(run.stderr).to.include(`http://127.0.0.1:${port}`);
    });

    it('usage mistakes exit 2', async () => {
      const r = await cli(['bogus']);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.include("unknown command 'bogus'");
      expect((await cli(['run', 'only-a-name'])).code).to.equal(2);
      const badName = await cli(['run', 'Bad_Name', 'x']);
      expect(badName.code).to.equal(2);
      expect(badName.stderr).to.include('agent name "Bad_Name" is not valid');
      const badPriority = await cli(['run', 'agent-x', 'x', '--priority', 'high']);
      expect(badPriority.code).to.equal(2);
      expect(badPriority.stderr).to.include('--priority must be a whole number, got "high"');
    });

    it('rm deletes agents', async () => {
      const r = await cli(['rm', 'alpha']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/agent\/alpha (deleted|deletion started)/);
      await eventually(async () => (await h.api('GET', '/api/v1/agents/alpha')).status === 404, 30_000, 'alpha gone');
    });
  });

  describe('against a server with a token file', () => {
    let secured: Harness;
    const TOKEN = 'cli-admin-0c9b8a7d6e5f';
    before(async () => {
      const tokenFile = join(dir, 'tokens.yaml');
      writeFileSync(tokenFile, tokenFileYaml([{ user: 'admin', token: TOKEN }]));
      secured = await startHarness({ tokenFile });
    });
    after(async () => {
      await secured?.close();
    });

    it('without a token or with a wrong one: 401 with a hint, exit 4; with the token it works (flag, env, context)', async () => {
      const none = await cli(['ls'], { AGENTPLANE_SERVER: secured.url });
      expect(none.code).to.equal(4);
      expect(none.stderr).to.match(/error: .+\(Unauthorized, HTTP 401\)/);
      expect(none.stderr).to.include('hint: the server needs a token');
      noStackTrace(none);
      const wrong = await cli(['ls', '--token', 'not-it'], { AGENTPLANE_SERVER: secured.url });
      expect(wrong.code).to.equal(4);
      expect(wrong.stderr).to.include('hint: the server did not accept the token');

      const flag = await cli(['run', 'sec', '@say secure', '--token', TOKEN], { AGENTPLANE_SERVER: secured.url });
      expect(flag.code, flag.stderr).to.equal(0);
      expect(flag.stdout).to.include('task 1 completed');
      const viaEnv = await cli(['ls'], { AGENTPLANE_SERVER: secured.url, AGENTPLANE_TOKEN: TOKEN });
      expect(viaEnv.stdout, viaEnv.stderr).to.match(/^sec\s/m);
      await cli(['config', 'set-context', 'secured', '--server', secured.url, '--token', TOKEN], { AGENTPLANE_SERVER: '' });
      expect((await cli(['ls', '--context', 'secured'], { AGENTPLANE_SERVER: '' })).stdout).to.match(/^sec\s/m);
      expect((await cli(['config', 'view'], { AGENTPLANE_SERVER: '' })).stdout).not.to.include(TOKEN);
    });
  });
});
