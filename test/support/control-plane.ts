// A real Kubernetes cluster (built and run by hack/control-plane.sh) for e2e tests. Each test run
// gets its own state directory; everything is stopped afterwards.
//
// The default is API only (etcd + kube-apiserver): the aggregated-API suites need no node, and
// it starts in about 4 s without root. `{ node: true }` adds the node (containerd, kubelet,
// controller-manager, scheduler, local-path-provisioner) so pods really run; it needs root and
// Debian's containerd, runc, containernetworking-plugins and iptables, takes about 15 s, and
// only one such cluster can run on a machine at a time (it owns a bridge and the pod range).

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

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string;
  allowFail?: boolean;
}

export interface ControlPlane {
  kubeconfig: string;
  /** Directory holding kube-apiserver, etcd and kubectl (and the node binaries with a node). */
  bin: string;
  dir: string;
  kubectl(args: string[], opts?: RunOptions & { kubeconfig?: string }): Promise<RunResult>;
  down(): Promise<void>;
}

/** A cluster with a node: pods are scheduled, run in containerd and get local-path volumes. */
export interface Cluster extends ControlPlane {
  nodeName: string;
  /** The node's IP: the pods' gateway, so a server on the host listening there is reachable from pods. */
  nodeIP: string;
  /** containerd's socket (CRI and the containerd API; images live in namespace k8s.io). */
  containerdSocket: string;
  /** crictl against the node's containerd. */
  crictl(args: string[], opts?: RunOptions): Promise<RunResult>;
  /** ctr against the node's containerd, namespace k8s.io (e.g. `images import <archive>`). */
  ctr(args: string[], opts?: RunOptions): Promise<RunResult>;
}

export interface NodeOptions {
  node: true;
  /** Import the worker image (hack/build-images.sh worker, built on first use). Default true. */
  workerImage?: boolean;
  /**
   * kube-apiserver's --enable-aggregator-routing: true when agentplane runs in a pod (the
   * aggregator dials its endpoint's pod IP; there is no kube-proxy for the Service's cluster IP).
   * Default false: agentplane on the host, reached through an ExternalName Service.
   */
  aggregatorRouting?: boolean;
}

export async function controlPlaneUp(): Promise<ControlPlane>;
export async function controlPlaneUp(opts: { node: false }): Promise<ControlPlane>;
export async function controlPlaneUp(opts: NodeOptions): Promise<Cluster>;
export async function controlPlaneUp(opts: { node?: boolean; workerImage?: boolean; aggregatorRouting?: boolean } = {}): Promise<ControlPlane | Cluster> {
  const parent = mkdtempSync(join(tmpdir(), 'agentplane-cp-'));
  const dir = join(parent, 'cp');
  const env = {
    ...process.env,
    AGENTPLANE_CP_DIR: dir,
    AGENTPLANE_CP_NODE: String(opts.node === true),
    AGENTPLANE_CP_WORKER_IMAGE: String(opts.workerImage !== false),
    AGENTPLANE_CP_AGGREGATOR_ROUTING: String(opts.aggregatorRouting === true),
  };
  // Only a successful `down` removes the temp dir: after a failed one, pod volumes may still be
  // mounted in it, and a recursive delete would follow them into the host's files.
  const down = async (): Promise<void> => {
    try {
      await run('bash', [SCRIPT, 'down'], { env, timeout: 120_000 });
    } catch (err) {
      throw new Error(`hack/control-plane.sh down failed for ${dir}; left in place: ${(err as { stderr?: string }).stderr ?? String(err)}`, { cause: err });
    }
    rmSync(parent, { recursive: true, force: true });
  };
  let up;
  try {
    up = await run('bash', [SCRIPT, 'up'], { env, maxBuffer: 16 << 20, timeout: 30 * 60_000 });
  } catch (err) {
    // A half-started node holds machine-wide state (a bridge, cgroups, mounts): undo it now,
    // because nobody gets a handle to call down() on.
    await down().catch(() => undefined);
    throw err;
  }
  const kubeconfig = lastLine(up.stdout);
  const vars = parseEnv((await run('bash', [SCRIPT, 'env'], { env })).stdout);
  const bin = vars.AGENTPLANE_CP_BIN;
  const plane: ControlPlane = {
    kubeconfig,
    bin,
    dir,
    kubectl: (args, o = {}) => exec(join(bin, 'kubectl'), ['--kubeconfig', o.kubeconfig ?? kubeconfig, ...args], o),
    down,
  };
  if (!opts.node) return plane;
  return {
    ...plane,
    nodeName: vars.AGENTPLANE_CP_NODE_NAME,
    nodeIP: vars.AGENTPLANE_CP_NODE_IP,
    containerdSocket: vars.AGENTPLANE_CP_CONTAINERD_SOCK,
    // Through the script, which holds the endpoint configuration (and takes no lock for these).
    crictl: (args, o = {}) => exec('bash', [SCRIPT, 'crictl', ...args], o, env),
    ctr: (args, o = {}) => exec('bash', [SCRIPT, 'ctr', ...args], o, env),
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
  const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  closeSync(log);
  writeFileSync(pidFile, `${child.pid}\n`);
  await waitFor('kube-apiserver /readyz', async () => (await cp.kubectl(['get', '--raw', '/readyz'], { allowFail: true })).code === 0, 60_000);
}

function exec(file: string, args: string[], opts: RunOptions, env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((res, rej) => {
    const child = execFile(file, args, { maxBuffer: 16 << 20, timeout: 120_000, env }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      if (code !== 0 && !opts.allowFail) rej(new Error(`${file} ${args.join(' ')} failed (${code}): ${stderr}`));
      else res({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

function lastLine(s: string): string {
  return s.trim().split('\n').at(-1)!;
}

/** `export K=V` lines from `control-plane.sh env`. */
function parseEnv(s: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const m of s.matchAll(/^export ([A-Z_]+)=(.*)$/gm)) vars[m[1]] = m[2]!;
  return vars;
}
