// What the pods suites share: a whole local cluster with a Ready node (hack/control-plane.sh up
// with the node), the worker image built and imported, the address pods reach the host on, and
// small readers of what kubectl sees.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { promisify } from 'node:util';
import { join } from 'node:path';

import { KubeConfig } from '@kubernetes/client-node';
import { type Cluster as NodeCluster, controlPlaneUp, REPO } from './control-plane.js';

const run = promisify(execFile);

export interface Cluster extends NodeCluster {
  kc: KubeConfig;
  /** The worker image, imported into the node's containerd (imagePullPolicy Never). */
  workerImage: string;
  /** The host's address on the pods' network: where a host-side server is reachable from pods. */
  gateway: string;
  json<T = Record<string, unknown>>(args: string[]): Promise<T>;
}

export async function clusterUp(opts: { aggregatorRouting?: boolean } = {}): Promise<Cluster> {
  const cp = await controlPlaneUp({ node: true, ...opts });
  const image = (await run('bash', [join(REPO, 'hack/build-images.sh'), 'worker-ref'], { maxBuffer: 1 << 20 })).stdout.trim().split('\n').at(-1)!;
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfig);
  return {
    ...cp,
    kc,
    workerImage: image,
    gateway: cp.nodeIP,
    json: async <T>(args: string[]) => JSON.parse((await cp.kubectl([...args, '-o', 'json'])).stdout) as T,
  };
}

export interface PodJson {
  metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] };
  status: {
    phase?: string;
    containerStatuses?: { name: string; containerID?: string; restartCount: number; ready: boolean; state?: Record<string, unknown> }[];
  };
}

/** Live (not terminating) pods matching the label selector. */
export async function livePods(c: Cluster, namespace: string, selector: string): Promise<PodJson[]> {
  const list = await c.json<{ items: PodJson[] }>(['get', 'pods', '-n', namespace, '-l', selector]);
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

export interface Tls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** agentplane registered on the cluster, its agents as pods, and how to call it as the admin. */
export interface Agentplane {
  /** Its own URL (https, on loopback): the /api/v1 mirror and the WebSockets. */
  url: string;
  /** The serving CA and the admin's client certificate. */
  tls: Tls;
  /** A request to the /api/v1 mirror; the body is parsed JSON ({} when empty). */
  rest: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Record<string, unknown> }>;
}

/** `hack/control-plane.sh register` with the Kubernetes runtime; `env` reaches agentplane's own (e.g. AGENTPLANE_MODEL_PROXY). */
export async function registerAgentplane(c: Cluster, extraEnv: Record<string, string> = {}): Promise<Agentplane> {
  const env = { ...process.env, ...extraEnv, AGENTPLANE_CP_DIR: c.dir, AGENTPLANE_CP_RUNTIME: 'kubernetes' };
  const reg = await run('bash', [join(REPO, 'hack/control-plane.sh'), 'register'], { env, timeout: 5 * 60_000 });
  const url = reg.stdout.trim().split('\n').at(-1)!;
  const tls: Tls = {
    ca: readFileSync(join(c.dir, 'pki/serving-ca.crt')),
    cert: readFileSync(join(c.dir, 'pki/admin.crt')),
    key: readFileSync(join(c.dir, 'pki/admin.key')),
  };
  const rest: Agentplane['rest'] = (method, path, body) =>
    new Promise((resolve, reject) => {
      const req = request(`${url}${path}`, { method, ...tls, headers: { 'content-type': 'application/json' } }, (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data ? (JSON.parse(data) as Record<string, unknown>) : {} }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  return { url, tls, rest };
}

export interface StoredEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}

/** An agent's stored events, oldest first, through the aggregated API. */
export async function agentEvents(c: Cluster, namespace: string, name: string): Promise<StoredEvent[]> {
  const raw = (await c.kubectl(['get', '--raw', `/apis/agentplane.io/v1alpha1/namespaces/${namespace}/agents/${name}/events?limit=500`])).stdout;
  const list = JSON.parse(raw) as { items?: StoredEvent[]; events?: StoredEvent[] };
  return list.items ?? list.events ?? [];
}

/** What the agent's tools printed, in order (tool_result outputs from its event history). */
export async function toolOutputs(c: Cluster, namespace: string, name: string): Promise<string[]> {
  return (await agentEvents(c, namespace, name))
    .filter((e) => e.type === 'tool_result')
    .map((e) => (typeof e.payload.output === 'string' ? e.payload.output : JSON.stringify(e.payload.output ?? '')).trim());
}

/**
 * What a failed pods test leaves to go on: the namespace's agents, squads and pods, its recent
 * Kubernetes events and the end of agentplane's log (the control plane's directory, and the log
 * with it, is removed once the suite ends). For a mocha `afterEach`.
 */
export async function describeFailure(c: Cluster, namespace: string): Promise<string> {
  const out = async (args: string[]): Promise<string> => {
    const r = await c.kubectl(args, { allowFail: true });
    return `$ kubectl ${args.join(' ')}\n${r.stdout}${r.stderr}`;
  };
  let log: string;
  try {
    log = readFileSync(join(c.dir, 'agentplane.log'), 'utf8').split('\n').slice(-120).join('\n');
  } catch (err) {
    log = `(no agentplane.log: ${(err as Error).message})`;
  }
  return [
    await out(['get', 'agents,squads,pods', '-n', namespace, '-o', 'wide']),
    await out(['get', 'agents', '-n', namespace, '-o', 'jsonpath={range .items[*]}{.metadata.name}{" "}{.status.conditions}{"\\n"}{end}']),
    await out(['get', 'events', '-n', namespace, '--sort-by=.lastTimestamp']),
    `agentplane.log (last 120 lines):\n${log}`,
  ].join('\n');
}

/**
 * A pods suite's mocha hooks: before its tests the cluster comes up, agentplane is registered on
 * it and `namespace` is made (then `ready` is given both); a failed test prints what went on
 * (describeFailure); after the tests the cluster goes down.
 */
export function onNodeSuite(namespace: string, ready: (c: Cluster, ap: Agentplane) => void): void {
  let c: Cluster | undefined;
  before(async function () {
    this.timeout(45 * 60_000);
    c = await clusterUp();
    const ap = await registerAgentplane(c);
    await c.kubectl(['create', 'namespace', namespace]);
    ready(c, ap);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && c) console.log(await describeFailure(c, namespace));
  });

  after(async function () {
    this.timeout(120_000);
    await c?.down();
  });
}
