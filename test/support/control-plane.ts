// A real Kubernetes control plane (etcd + kube-apiserver built by hack/) for e2e tests. Each
// test run gets its own state directory; everything is stopped afterwards.

import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** The repository root (this file compiles to dist/test/support/). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SCRIPT = join(REPO, 'hack/control-plane.sh');

export interface ControlPlane {
  kubeconfig: string;
  /** Directory holding kube-apiserver, etcd and kubectl. */
  bin: string;
  dir: string;
  kubectl(args: string[], opts?: { input?: string; kubeconfig?: string; allowFail?: boolean }): Promise<{ code: number; stdout: string; stderr: string }>;
  down(): Promise<void>;
}

export async function controlPlaneUp(): Promise<ControlPlane> {
  const parent = mkdtempSync(join(tmpdir(), 'agentplane-cp-'));
  const dir = join(parent, 'cp');
  const env = { ...process.env, AGENTPLANE_CP_DIR: dir };
  const up = await run('bash', [SCRIPT, 'up'], { env, maxBuffer: 16 << 20, timeout: 30 * 60_000 });
  const kubeconfig = up.stdout.trim().split('\n').at(-1)!;
  const bin = (await run('bash', [join(REPO, 'hack/build-control-plane.sh')], { env, maxBuffer: 16 << 20 })).stdout.trim().split('\n').at(-1)!;
  return {
    kubeconfig,
    bin,
    dir,
    async kubectl(args, opts = {}) {
      return new Promise((res, rej) => {
        const child = execFile(
          join(bin, 'kubectl'),
          ['--kubeconfig', opts.kubeconfig ?? kubeconfig, ...args],
          { maxBuffer: 16 << 20, timeout: 120_000 },
          (err, stdout, stderr) => {
            const code = err ? ((err as { code?: number }).code ?? 1) : 0;
            if (code !== 0 && !opts.allowFail) rej(new Error(`kubectl ${args.join(' ')} failed (${code}): ${stderr}`));
            else res({ code: typeof code === 'number' ? code : 1, stdout, stderr });
          },
        );
        if (opts.input !== undefined) child.stdin!.end(opts.input);
      });
    },
    async down() {
      await run('bash', [SCRIPT, 'down'], { env, timeout: 120_000 }).catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

async function waitFor(what: string, probe: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Whether something still accepts connections on the port. */
const listening = (port: number): Promise<boolean> =>
  new Promise((res) => {
    const sock = connect(port, '127.0.0.1', () => (sock.destroy(), res(true)));
    sock.on('error', () => res(false));
  });

/**
 * Kills kube-apiserver and starts it again with the same command line (and pid file); resolves
 * once it is ready. SIGKILL: a graceful stop waits about 30 s for open watches, and a crash is
 * the harder case anyway. `server` is its URL (the kubeconfig's).
 */
export async function restartApiserver(cp: ControlPlane, server: string): Promise<void> {
  const pidFile = join(cp.dir, 'kube-apiserver.pid');
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  process.kill(pid, 'SIGKILL');
  // Its port is free only once every thread is gone (a zombie can still hold it).
  const port = Number(new URL(server).port);
  await waitFor('the port to be free', async () => !(await listening(port)), 30_000);
  const log = openSync(join(cp.dir, 'kube-apiserver.log'), 'a');
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  closeSync(log);
  writeFileSync(pidFile, `${child.pid}\n`);
  await waitFor('kube-apiserver /readyz', async () => (await cp.kubectl(['get', '--raw', '/readyz'], { allowFail: true })).code === 0, 60_000);
}
