// The cluster home's warm pool on a real node: a template's `warmPool` keeps pods made ahead in a
// namespace, a new agent of that template and role takes one (its pod, claim, Secret and
// ConfigMap become the agent's), the pool makes another, and the taken workspace stays the
// agent's through sleep, wake and delete (docs/kubernetes-runtime.md "Warm pool").

import { expect } from 'chai';

import { eventually } from '../support/harness.js';
import { type Agentplane, type Cluster, livePods, onNodeSuite, type PodJson, toolOutputs } from '../support/pods.js';

const NS = 'pool-e2e';
const POOL = 'agentplane.io/warm-pool=pooled';
const UNTAKEN = `${POOL},!agentplane.io/agent`;
const KINDS = 'pods,persistentvolumeclaims,secrets,configmaps';

describe('e2e: the warm pool of pods on a real node', function () {
  this.timeout(180_000);
  let c: Cluster;
  let ap: Agentplane;

  const kubectl = (...args: string[]) => c.kubectl(args).then((r) => r.stdout);
  const apply = (yaml: string) => c.kubectl(['apply', '-f', '-'], { input: yaml });
  const jsonpath = (ref: string, path: string) => kubectl('get', ref, '-n', NS, '-o', `jsonpath={${path}}`);
  const template = (size: number) => `apiVersion: v1
kind: ConfigMap
metadata: {name: agentplane-template-pooled, namespace: agentplane-system, labels: {agentplane.io/template: pooled}}
data:
  template.yaml: |
    warmPool: {size: ${size}, namespaces: [${NS}], role: worker}
`;
  const agentYaml = (name: string, instructions: string, role: 'worker' | 'manager') => `apiVersion: agentplane.io/v1alpha1
kind: Agent
metadata: {name: ${name}, namespace: ${NS}}
spec:
  templateRef: pooled
  role: ${role}
  instructions: ${JSON.stringify(instructions)}
`;
  const untaken = () => livePods(c, NS, UNTAKEN);
  const ready = (p: PodJson) => p.status.phase === 'Running' && (p.status.containerStatuses ?? []).every((s) => s.ready);
  const agentPods = (name: string) => livePods(c, NS, `agentplane.io/agent=${name}`);
  const names = async (kinds: string, selector: string) => (await kubectl('get', kinds, '-n', NS, '-l', selector, '-o', 'name')).split('\n').filter(Boolean);
  const lastMessage = (name: string) => jsonpath(`agent/${name}`, '.status.lastTaskMessage');

  /** A ready untaken pod, once there is one. */
  async function readySlot(): Promise<PodJson> {
    let found: PodJson | undefined;
    await eventually(async () => (found = (await untaken()).find(ready)) !== undefined, 150_000, 'a ready warm-pool pod');
    return found!;
  }

  /** Applies the agent and resolves with the ms from the apply to its task's last message. */
  async function timedCreate(name: string, instructions: string, role: 'worker' | 'manager', message: string): Promise<number> {
    const t0 = performance.now();
    await apply(agentYaml(name, instructions, role));
    await eventually(async () => (await lastMessage(name)) === message, 150_000, `${name}'s task`);
    return performance.now() - t0;
  }

  onNodeSuite(NS, (cluster, plane) => {
    c = cluster;
    ap = plane;
  });

  it("a template's warmPool keeps a ready pod in the namespace: its own claim, Secret and ConfigMap, no agent, no service-account token", async () => {
    await apply(template(1));
    const pod = await readySlot();
    const id = pod.metadata.name.replace(/-[a-z0-9]+$/, '');
    expect(id).to.match(/^warm-[0-9a-f]{8}$/);
    expect(await names('persistentvolumeclaims,secrets,configmaps', UNTAKEN)).to.have.members([
      `persistentvolumeclaim/${id}-workspace`,
      `secret/${id}-worker`,
      `configmap/${id}-config`,
    ]);
    expect(await jsonpath(`pvc/${id}-workspace`, '.status.phase')).to.equal('Bound');
    expect(await jsonpath(`pod/${pod.metadata.name}`, '.spec.automountServiceAccountToken'), 'the pool is for worker-role agents').to.equal('false');
    expect(await untaken(), 'size 1').to.have.length(1);
  });

  it('a new agent of the template and role takes it: the task runs in that pod, now labelled and owned as the agent’s; the pool makes another', async () => {
    const slot = await readySlot();
    const id = slot.metadata.name.replace(/-[a-z0-9]+$/, '');
    const pooled = await timedCreate('quick', '@bash echo "ran in $(hostname)" && echo kept > note.txt\n@say quick done', 'worker', 'quick done');
    const [pod] = await agentPods('quick');
    expect(pod.metadata.name, 'the agent runs in the pool’s pod').to.equal(slot.metadata.name);
    expect(pod.metadata.labels).to.not.have.property('agentplane.io/warm-pool');
    expect(await toolOutputs(c, NS, 'quick')).to.deep.equal([`ran in ${slot.metadata.name}`]);
    expect(await names(KINDS, 'agentplane.io/agent=quick')).to.have.members([
      `pod/${slot.metadata.name}`,
      `persistentvolumeclaim/${id}-workspace`,
      `secret/${id}-worker`,
      `configmap/${id}-config`,
    ]);
    const uid = await jsonpath('agent/quick', '.metadata.uid');
    for (const ref of [`pod/${slot.metadata.name}`, `pvc/${id}-workspace`, `secret/${id}-worker`, `configmap/${id}-config`]) {
      expect(await jsonpath(ref, '.metadata.ownerReferences[0].uid'), `${ref} is owned by the agent`).to.equal(uid);
    }
    const next = await readySlot();
    expect(next.metadata.name, 'a new pod replaced the one taken').to.not.equal(slot.metadata.name);

    // The same create where the pool has nothing for it (a manager; the pool is for workers): a
    // pod and a claim made for it, timed in the same run.
    const cold = await timedCreate('slow', '@say slow done', 'manager', 'slow done');
    const [own] = await agentPods('slow');
    expect(own.metadata.name, 'a manager does not take a worker pool’s pod').to.match(/^agent-slow-/);
    console.log(`      create -> the task's last message: warm pool ${Math.round(pooled)} ms, baseline without a pool pod ${Math.round(cold)} ms`);
    expect(await untaken(), 'the cold create took nothing').to.have.length(1);
  });

  it('asleep and woken, the agent runs in a pod of its own that mounts the claim it took; the slot’s Secret and ConfigMap are gone', async () => {
    const claim = (await names('persistentvolumeclaims', 'agentplane.io/agent=quick'))[0].replace('persistentvolumeclaim/', '');
    expect((await ap.rest('PATCH', `/api/v1/agents/quick?namespace=${NS}`, { lifecycle: 'Sleep' })).status).to.equal(200);
    await eventually(
      async () => (await jsonpath('agent/quick', '.status.status')) === 'Sleeping' && (await agentPods('quick')).length === 0,
      60_000,
      'quick asleep, pod gone',
    );
    const sent = await ap.rest('POST', '/api/v1/agents', { name: 'quick', namespace: NS, instructions: '@bash cat note.txt\n@say woken' });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    await eventually(async () => (await lastMessage('quick')) === 'woken', 150_000, 'quick woken');
    const [pod] = await agentPods('quick');
    expect(pod.metadata.name).to.match(/^agent-quick-/);
    expect(await jsonpath(`pod/${pod.metadata.name}`, '.spec.volumes[0].persistentVolumeClaim.claimName')).to.equal(claim);
    expect((await toolOutputs(c, NS, 'quick')).at(-1), 'the workspace written in the pool’s pod').to.equal('kept');
    expect(await names('secrets,configmaps', 'agentplane.io/agent=quick')).to.have.members(['secret/agent-quick-worker', 'configmap/agent-quick-config']);
  });

  it('DELETE leaves nothing labelled with the agent, the claim it took included', async () => {
    await kubectl('delete', 'agent', 'quick', 'slow', '-n', NS);
    await eventually(async () => (await names(KINDS, 'agentplane.io/agent in (quick,slow)')).length === 0, 60_000, 'nothing of quick or slow left');
  });

  it('a pool sized to 0 removes its pods and their objects', async () => {
    await apply(template(0));
    await eventually(async () => (await names(KINDS, UNTAKEN)).length === 0, 60_000, 'no untaken warm-pool object left');
  });
});
