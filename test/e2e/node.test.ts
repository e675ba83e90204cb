// The local cluster's node (hack/control-plane.sh with a node): a pod of the locally built pause
// image runs, and a claim of the default StorageClass is provisioned by local-path-provisioner
// and mounted. Guards hack/ itself; the agent pod suites build on the same cluster.

import { execFileSync } from 'node:child_process';

import { expect } from 'chai';

import { type Cluster, controlPlaneUp } from '../support/control-plane.js';

/** Why the node cannot run here, or undefined: it needs root and Debian's containerd and runc. */
function unsupported(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  try {
    execFileSync('sh', ['-c', 'command -v containerd && command -v runc && test -x /usr/lib/cni/bridge'], { stdio: 'ignore' });
  } catch {
    return 'needs containerd, runc and containernetworking-plugins (.ci/run installs them)';
  }
  return undefined;
}

const POD = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: pause
    image: agentplane.local/pause:1
    imagePullPolicy: Never
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
`;

describe('e2e: the local cluster node', function () {
  this.timeout(120_000);

  let cluster: Cluster;

  before(async function () {
    const why = unsupported();
    if (why) {
      console.warn(`      (skipped: the node ${why})`);
      this.skip();
    }
    this.timeout(30 * 60_000); // a first run builds the Kubernetes binaries
    // The pause image is all this needs; the worker image is the agent suites' business.
    cluster = await controlPlaneUp({ node: true, workerImage: false });
  });

  after(async () => {
    await cluster?.down();
  });

  it('is Ready with local-path as the default StorageClass', async () => {
    const node = JSON.parse((await cluster.kubectl(['get', 'node', cluster.nodeName, '-o', 'json'])).stdout);
    const ready = node.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    expect(ready.status).to.equal('True');
    expect(node.status.addresses).to.deep.include({ type: 'InternalIP', address: cluster.nodeIP });
    const sc = (await cluster.kubectl(['get', 'storageclass'])).stdout;
    expect(sc).to.match(/^local-path \(default\)\s+rancher\.io\/local-path/m);
  });

  it('runs a pod with a provisioned volume', async () => {
    await cluster.kubectl(['apply', '-f', '-'], { input: POD });
    await cluster.kubectl(['wait', '--for=condition=Ready', 'pod/sleeper', '--timeout=90s']);
    const pvc = (await cluster.kubectl(['get', 'pvc', 'data', '-o', 'jsonpath={.status.phase}'])).stdout;
    expect(pvc).to.equal('Bound');
    // The container is really there, in containerd.
    const ps = (await cluster.crictl(['ps', '--name', 'pause', '-o', 'json'])).stdout;
    expect(JSON.parse(ps).containers).to.have.length(1);
    // The apiserver reaches the kubelet (logs go apiserver -> kubelet over verified TLS).
    await cluster.kubectl(['logs', 'sleeper']);
  });
});
