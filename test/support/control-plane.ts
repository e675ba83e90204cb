// A real Kubernetes control plane (etcd + kube-apiserver built by hack/) for e2e tests. Each
// test run gets its own state directory; everything is stopped afterwards.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
