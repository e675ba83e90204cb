// The README's "Quick start", as a newcomer types it: a fresh clone of this repository's HEAD,
// the first block (`git clone`, `make run`) in one shell and the second (`agentplane` on PATH,
// `agentplane run`) in another, with the machine's Node first on PATH (the project's pinned
// Node is taken off it: `make` and `bin/agentplane` must find it themselves). Only the clone's
// URL and the port are the test's: the port through AGENTPLANE_PORT and AGENTPLANE_SERVER, which
// the README's commands leave unset. Slow (a clean install and a full build): `make test-newcomer`.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

/** The sh blocks of the README section titled `title`, each as its text. */
function shBlocks(title: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/**
 * A newcomer's shell: the machine's PATH (this one without the project's pinned Node, from
 * hack/nodejs.sh's cache), no model key, no agentplane settings, nothing a make above set.
 */
function newcomerEnv(): NodeJS.ProcessEnv {
  const pinned = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agentplane', 'node');
  const PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((d) => !d.startsWith(pinned))
    .join(':');
  const env: NodeJS.ProcessEnv = { ...process.env, PATH };
  for (const k of Object.keys(env)) {
    if (/^(ANTHROPIC_|AGENTPLANE_|MAKE|MFLAGS$|npm_)/.test(k)) delete env[k];
  }
  return env;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

describe('README quick start on a fresh clone (newcomer)', function () {
  this.timeout(30 * 60_000);

  let dir: string;
  let server: ChildProcess | undefined;
  let serverOut = '';

  after(async () => {
    if (server?.pid && server.exitCode === null) {
      process.kill(-server.pid, 'SIGINT');
      await new Promise((r) => {
        const t = setTimeout(() => {
          if (server?.exitCode === null) process.kill(-server.pid!, 'SIGKILL');
          r(undefined);
        }, 15_000);
        server!.once('exit', () => {
          clearTimeout(t);
          r(undefined);
        });
      });
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('goes from git clone to a completed `agentplane run` in the commands the README shows', async () => {
    const [first, second] = shBlocks('Quick start');
    expect(first, 'the first block clones and serves').to.match(/^git clone <repository-url> agentplane && cd agentplane$/m);
    expect(second, 'the second block runs a task').to.match(/^agentplane run /m);

    dir = mkdtempSync(join(tmpdir(), 'agentplane-newcomer-'));
    const port = await freePort();
    // The machine's PATH without the project's pinned Node (hack/nodejs.sh's cache).
    const env: NodeJS.ProcessEnv = { ...newcomerEnv(), AGENTPLANE_PORT: String(port), AGENTPLANE_SERVER: `http://127.0.0.1:${port}` };

    const script = first.replace('<repository-url>', ROOT);
    server = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (d) => (serverOut += String(d)));
    server.stderr!.on('data', (d) => (serverOut += String(d)));
    // A clean install and a full build first: minutes, bounded.
    for (const deadline = Date.now() + 25 * 60_000; ; await new Promise((r) => setTimeout(r, 1000))) {
      if (server.exitCode !== null) throw new Error(`the first block ended (exit ${server.exitCode}):\n${serverOut.slice(-4000)}`);
      if ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok) break;
      if (Date.now() > deadline) throw new Error(`the server of \`make run\` did not answer in 25 minutes:\n${serverOut.slice(-4000)}`);
    }

    const run = await new Promise<{ code: number; out: string }>((res) => {
      execFile('bash', ['-euo', 'pipefail', '-c', `node --version; ${second}`], { cwd: dir, env, timeout: 180_000 }, (err, stdout, stderr) =>
        res({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, out: String(stdout) + String(stderr) }),
      );
    });
    expect(run.code, run.out).to.equal(0);
    expect(run.out).to.match(/^✔ task 1 completed · /m);
    expect(run.out).to.include('created agent/hello in namespace default');
  });

  // One build, however it is started: npm's builds the dashboard too, and a build with nothing
  // changed emits nothing again.
  it('npm run build is the same build as make build, and a second one rebuilds nothing', async () => {
    const clone = join(dir, 'agentplane');
    const sh = (cmd: string): Promise<string> =>
      new Promise((res, rej) =>
        execFile('bash', ['-euo', 'pipefail', '-c', cmd], { cwd: clone, env: newcomerEnv(), timeout: 600_000 }, (err, stdout, stderr) =>
          err ? rej(new Error(`${cmd}: ${String(stderr).slice(-2000)}`)) : res(String(stdout) + String(stderr)),
        ),
      );
    rmSync(join(clone, 'dist/ui'), { recursive: true, force: true });
    await sh('PATH="$(bash hack/nodejs.sh):$PATH" npm run build');
    expect(readFileSync(join(clone, 'dist/ui/index.html'), 'utf8')).to.match(/<script type="module" src="assets\/app-[^"]+\.js">/);

    const main = join(clone, 'dist/cmd/agentplane/main.js');
    const before = statSync(main).mtimeMs;
    const again = await sh('make build');
    expect(statSync(main).mtimeMs, 'the CLI was not emitted again').to.equal(before);
    expect(again).to.match(/^build: service [\d.]+s, dashboard types [\d.]+s$/m);
    expect(again, 'the bundle was not made again').not.to.include('dashboard bundle');
  });
});
