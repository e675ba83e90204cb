// charts/agentplane installed by the real helm on the local cluster: the server runs as the
// chart's Deployment in a real pod on the node (from the worker image, which holds the server
// too; docs/helm.md "Images"), reaches kube-apiserver in-cluster through the "kubernetes"
// Service (hack/lib/node.sh), keeps its events in a Redis on the host, and registers
// agentplane.io through the chart's APIService with the chart's own certificate. Then helm
// upgrade keeps it serving, and helm uninstall removes every object it made (the CRDs stay, by
// Helm's policy for crds/).

import { join } from 'node:path';

import { expect } from 'chai';

import { eventually } from '../support/harness.js';
import { CHART, chartTools, parseAll, tool } from '../support/helm.js';
import { type Cluster, clusterUp, describeFailure, livePods } from '../support/pods.js';
import { type RedisServer, startRedisServer } from '../support/redis-server.js';
import { type ServiceProxy, serviceProxy } from '../support/service-proxy.js';

const NS = 'agentplane-system';
const TEAM = 'helm-e2e';
const REDIS_PASSWORD = 'helm-e2e-redis-password';

describe('pods: the Helm chart on the local cluster', function () {
  this.timeout(300_000);
  let c: Cluster;
  let redis: RedisServer;
  let workers: ServiceProxy;
  let bin: string;
  let installed: { kind: string; name: string; namespace?: string }[] = [];

  before(async function () {
    this.timeout(45 * 60_000);
    bin = await chartTools();
    c = await clusterUp({ aggregatorRouting: true });
    // Redis on the host, where pods reach it: the node IP (the pods' gateway).
    redis = await startRedisServer({ password: REDIS_PASSWORD, args: ['--bind', '127.0.0.1', c.nodeIP] });
    await c.kubectl(['create', 'namespace', NS]);
    await c.kubectl(['create', 'secret', 'generic', 'agentplane-redis', '-n', NS, `--from-literal=password=${REDIS_PASSWORD}`]);
    await c.kubectl(['create', 'namespace', TEAM]);
    // Agent pods dial the agentplane-workers Service; with no kube-proxy here, through this.
    workers = await serviceProxy(c, NS, 'agentplane-workers', 'workers');
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !c) return;
    const logs = await c.kubectl(['logs', '-n', NS, '-l', 'app.kubernetes.io/component=apiserver', '--tail=80', '--all-containers'], { allowFail: true });
    console.log(await describeFailure(c, NS), `\n$ kubectl logs (agentplane)\n${logs.stdout}${logs.stderr}`);
  });

  after(async function () {
    this.timeout(180_000);
    await workers?.close();
    await redis?.close();
    await c?.down();
  });

  const helm = (...args: string[]) => tool(join(bin, 'helm'), [...args, '--kubeconfig', c.kubeconfig]);
  /** The chart's values for this cluster: the server from the worker image, its built-in scripted model, the host's Redis. */
  const values = () => {
    const [repository, tag] = c.workerImage.split(/:(?=[^:]+$)/);
    return [
      ['image.repository', repository],
      ['image.tag', tag],
      ['image.pullPolicy', 'Never'],
      ['image.command', '{/usr/bin/tini,--,node,/opt/agentplane/dist/cmd/agentplane/main.js}'],
      ['replicas', '1'],
      ['tls.generate', 'true'],
      ['model.apiKey', 'not-a-real-key'],
      ['eventStore.redis.url', `redis://${c.nodeIP}:${redis.port}`],
      ['workers.image', c.workerImage],
      ['workers.pullPolicy', 'Never'],
      ['workers.url', workers.url],
      ['extraArgs', '{--demo}'],
    ].flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  };

  async function apiAvailable(): Promise<void> {
    await eventually(
      async () =>
        (await c.kubectl(['get', 'apiservice', 'v1alpha1.agentplane.io', '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}'])).stdout ===
        'True',
      180_000,
      'the APIService Available',
    );
  }

  it('helm install brings agentplane up in a pod: the APIService becomes Available, kubectl get agents lists a new agent, its task runs in its pod', async () => {
    await helm('install', 'agentplane', CHART, '-n', NS, '--wait', '--timeout', '4m', ...values());
    const [pod] = await livePods(c, NS, 'app.kubernetes.io/component=apiserver');
    expect(pod.spec.containers[0].name).to.equal('agentplane');
    expect(pod.status.phase).to.equal('Running');
    await apiAvailable();
    await c.kubectl(['apply', '-f', '-'], {
      input: `apiVersion: agentplane.io/v1alpha1\nkind: Agent\nmetadata: {name: hello, namespace: ${TEAM}}\nspec: {instructions: "@say hi"}\n`,
    });
    const list = await c.kubectl(['get', 'agents', '-n', TEAM]);
    expect(list.stdout).to.match(/^hello\s/m);
    // Its pod dials the server in its pod; the server's built-in scripted model (--demo) answers.
    const status = (path: string) => c.kubectl(['get', 'agent', 'hello', '-n', TEAM, '-o', `jsonpath={.status.${path}}`]).then((r) => r.stdout);
    await eventually(async () => (await status('taskStatus')) === 'Complete', 180_000, 'the agent task Complete');
    expect(await status('lastTaskMessage')).to.equal('hi');
    expect(await livePods(c, TEAM, 'agentplane.io/agent=hello')).to.have.length(1);
    installed = parseAll((await helm('get', 'manifest', 'agentplane', '-n', NS)).stdout).map((o) => ({
      kind: o.kind,
      name: o.metadata.name,
      namespace: o.metadata.namespace,
    }));
    expect(installed.map((o) => o.kind)).to.include.members(['Deployment', 'APIService', 'Service', 'Secret', 'ClusterRole']);
  });

  it('helm upgrade (a changed value) rolls the server over and keeps the API serving', async () => {
    const before = (await livePods(c, NS, 'app.kubernetes.io/component=apiserver'))[0].metadata.uid;
    await helm('upgrade', 'agentplane', CHART, '-n', NS, '--wait', '--timeout', '4m', ...values(), '--set', 'podAnnotations.example\\.com/upgraded=yes');
    const pods = await eventually(
      async () => {
        const live = await livePods(c, NS, 'app.kubernetes.io/component=apiserver');
        return live.length === 1 && live[0].metadata.uid !== before ? live : undefined;
      },
      120_000,
      'the new server pod alone',
    );
    expect(pods[0].metadata.annotations?.['example.com/upgraded']).to.equal('yes');
    await apiAvailable();
    // The same certificate (kept by the chart across upgrades), and the agent is still there.
    expect((await c.kubectl(['get', 'agents', '-n', TEAM, 'hello', '-o', 'name'])).stdout.trim()).to.equal('agent.agentplane.io/hello');
  });

  it('helm uninstall removes everything it installed (the CRDs stay, as Helm keeps crds/)', async () => {
    // The agent's finalizers are the server's: delete it while the server runs.
    await c.kubectl(['delete', 'agent', 'hello', '-n', TEAM, '--wait=true', '--timeout=120s']);
    await helm('uninstall', 'agentplane', '-n', NS, '--wait', '--timeout', '3m');
    expect(installed.length).to.be.greaterThan(15);
    for (const o of installed) {
      const args = ['get', o.kind, o.name, '--ignore-not-found', '-o', 'name', ...(o.namespace ? ['-n', o.namespace] : [])];
      await eventually(async () => (await c.kubectl(args)).stdout.trim() === '', 60_000, `${o.kind}/${o.name} gone`);
    }
    // Nothing of the release's either, by its label (named kinds: `all` would ask discovery for agents, now gone).
    const release = ['-l', 'app.kubernetes.io/instance=agentplane', '-o', 'name'];
    const namespaced =
      'deployments,replicasets,pods,services,statefulsets,secrets,configmaps,poddisruptionbudgets,roles,rolebindings,serviceaccounts,persistentvolumeclaims';
    expect((await c.kubectl(['get', namespaced, '-n', NS, ...release])).stdout.trim()).to.equal('');
    expect((await c.kubectl(['get', 'clusterroles,clusterrolebindings,apiservices', ...release])).stdout.trim()).to.equal('');
    // The server's pod goes after its Deployment (garbage collection, then its grace period).
    await eventually(async () => (await c.kubectl(['get', 'pods', '-n', NS, '-o', 'name'])).stdout.trim() === '', 90_000, 'the server pod gone');
    expect((await c.kubectl(['get', 'crd', 'agentrecords.internal.agentplane.io', '-o', 'name'])).stdout.trim()).to.equal(
      'customresourcedefinition.apiextensions.k8s.io/agentrecords.internal.agentplane.io',
    );
  });
});
