// What the pods suites share: a whole local cluster with a Ready node (hack/control-plane.sh up
// with the node), the worker image built and imported, the address pods reach the host on, and
// small readers of what kubectl sees.

import { execFile } from 'node:child_process';
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

export async function clusterUp(): Promise<Cluster> {
  const cp = await controlPlaneUp({ node: true });
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
  status: { phase?: string; containerStatuses?: { name: string; containerID?: string; restartCount: number; ready: boolean; state?: Record<string, unknown> }[] };
}

/** Live (not terminating) pods matching the label selector. */
export async function livePods(c: Cluster, namespace: string, selector: string): Promise<PodJson[]> {
  const list = await c.json<{ items: PodJson[] }>(['get', 'pods', '-n', namespace, '-l', selector]);
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}
