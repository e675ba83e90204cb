// Each agent pod's NetworkPolicy on a real node (docs/kubernetes-runtime.md "Network policy"): a
// solo agent's pod, a template's `egress: None` pod, a squad's pod and a warm-pool slot each get
// one that selects only that pod, with the rules their templates ask for, and it goes with the
// pod. Then, from inside an agent's pod, a tool tries what the policy forbids, to find out
// whether the node's network plugin enforces it; the test node's plain CNI bridge plugin does
// not, and the test says so instead of pretending (docs/security.md "Agent egress").

import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { expect } from 'chai';

import { eventually } from '../support/harness.js';
import { type Agentplane, type Cluster, livePods, onNodeSuite, type PodJson, toolOutputs } from '../support/pods.js';

const NS = 'netpol-e2e';
const POD_ID = 'agentplane.io/pod-id';

interface Peer {
  ipBlock?: { cidr: string; except?: string[] };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
}
interface PolicyJson {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: { uid: string }[] };
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: string[];
    ingress?: unknown[];
    egress: { to?: Peer[]; ports?: { protocol: string; port: number }[] }[];
  };
}

describe('e2e: a NetworkPolicy for every agent pod on a real node', function () {
  this.timeout(180_000);
  let c: Cluster;
  let ap: Agentplane;

  const kubectl = (...args: string[]) => c.kubectl(args).then((r) => r.stdout);
  const apply = (yaml: string) => c.kubectl(['apply', '-f', '-'], { input: yaml });
  const jsonpath = (ref: string, path: string) => kubectl('get', ref, '-n', NS, '-o', `jsonpath={${path}}`);
  const templateYaml = (name: string, body: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: agentplane-template-${name}, namespace: agentplane-system, labels: {agentplane.io/template: ${name}}}
data:
  template.yaml: |
${body
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
`;
  const policies = async (selector: string) => (await c.json<{ items: PolicyJson[] }>(['get', 'networkpolicies', '-n', NS, '-l', selector])).items;
  const policyOf = (pod: PodJson) => c.json<PolicyJson>(['get', 'networkpolicy', pod.metadata.name, '-n', NS]);
  /** A Running pod of the selector; `ready`: its containers ready too (a warm-pool slot's worker has dialed in). */
  const running = async (selector: string, ready = false): Promise<PodJson> => {
    let found: PodJson | undefined;
    const ok = (p: PodJson) => p.status.phase === 'Running' && (!ready || (p.status.containerStatuses ?? []).every((s) => s.ready));
    await eventually(async () => (found = (await livePods(c, NS, selector)).find(ok)) !== undefined, 150_000, `a Running pod ${selector}`);
    return found!;
  };
  const lastMessage = (name: string) => jsonpath(`agent/${name}`, '.status.lastTaskMessage');
  async function task(name: string, instructions: string, expected: string, extra: Record<string, unknown> = {}): Promise<void> {
    const sent = await ap.rest('POST', '/api/v1/agents', { name, namespace: NS, instructions, role: 'worker', ...extra });
    expect(sent.status, JSON.stringify(sent.body)).to.be.oneOf([200, 201]);
    await eventually(async () => (await lastMessage(name)) === expected, 150_000, `${name}'s task`);
  }

  /** The policy selects exactly this pod, by its id, and is labelled as the pod is. */
  async function expectSelectsOnly(pod: PodJson, p: PolicyJson): Promise<void> {
    const id = pod.metadata.labels?.[POD_ID];
    expect(id, 'the pod carries its id').to.match(/^[a-z0-9]{8}$/);
    expect(pod.metadata.name.endsWith(id!)).to.equal(true);
    expect(p.spec.podSelector).to.deep.equal({ matchLabels: { [POD_ID]: id } });
    expect((await livePods(c, NS, `${POD_ID}=${id}`)).map((x) => x.metadata.name)).to.deep.equal([pod.metadata.name]);
    expect(p.spec.policyTypes).to.deep.equal(['Ingress', 'Egress']);
    expect(p.spec.ingress ?? [], 'no ingress: the kubelet’s probes come from the node').to.deep.equal([]);
    for (const k of ['agentplane.io/agent', 'agentplane.io/squad', 'agentplane.io/warm-pool']) {
      expect(p.metadata.labels?.[k], k).to.equal(pod.metadata.labels?.[k]);
    }
    expect(p.metadata.labels).to.include({ 'agentplane.io/component': 'network-policy', 'app.kubernetes.io/managed-by': 'agentplane' });
  }

  /** DNS and the worker listener (where this node's pods dial it: the bridge address), for every mode. */
  function expectBaseRules(p: PolicyJson, serverPort: number): void {
    const [dns, server] = p.spec.egress;
    expect(dns.ports).to.deep.equal([
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ]);
    expect(dns.to).to.deep.equal([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } },
    ]);
    expect(server).to.deep.equal({ to: [{ ipBlock: { cidr: `${c.gateway}/32` } }], ports: [{ protocol: 'TCP', port: serverPort }] });
  }

  /** The worker listener's port, from the URL the agent's ConfigMap gives its worker. */
  async function serverPort(agent: string): Promise<number> {
    const url = (
      await kubectl('get', 'configmaps', '-n', NS, '-l', `agentplane.io/agent=${agent}`, '-o', 'jsonpath={.items[0].data.AGENTPLANE_SERVER_URL}')
    ).trim();
    return Number(new URL(url).port);
  }

  onNodeSuite(NS, (cluster, plane) => {
    c = cluster;
    ap = plane;
  });

  before(async function () {
    this.timeout(60_000);
    await apply(templateYaml('closed', 'egress: None'));
    await apply(templateYaml('allowlisted', 'egress: Proxy\negressAllow: [api.example.com, "*.pypi.org"]'));
    await apply(templateYaml('broken', 'egress: Closed'));
  });

  it('a solo agent’s pod (template default, egress Open): its own policy, DNS, the worker listener and public addresses only', async () => {
    await task('solo', '@say solo done', 'solo done');
    const pod = await running('agentplane.io/agent=solo');
    const p = await policyOf(pod);
    await expectSelectsOnly(pod, p);
    expect(p.metadata.ownerReferences?.[0]?.uid, 'owned by the agent, as its pod is').to.equal(await jsonpath('agent/solo', '.metadata.uid'));
    expect(p.metadata.annotations).to.include({ 'agentplane.io/egress': 'Open' });
    expectBaseRules(p, await serverPort('solo'));
    expect(p.spec.egress).to.have.length(3);
    const [v4, v6] = p.spec.egress[2].to!;
    expect(v4.ipBlock!.cidr).to.equal('0.0.0.0/0');
    expect(v4.ipBlock!.except).to.include.members(['169.254.169.254/32', '169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10']);
    expect(v6.ipBlock!.cidr).to.equal('::/0');
    expect(await policies('agentplane.io/agent=solo')).to.have.length(1);
  });

  it('egress None (a template ConfigMap): only DNS and the worker listener; Proxy is the same in the cluster home', async () => {
    await task('shut', '@say shut done', 'shut done', { templateRef: 'closed' });
    const pod = await running('agentplane.io/agent=shut');
    const p = await policyOf(pod);
    await expectSelectsOnly(pod, p);
    expect(p.metadata.annotations).to.include({ 'agentplane.io/egress': 'None' });
    expectBaseRules(p, await serverPort('shut'));
    expect(p.spec.egress, 'no general rule').to.have.length(2);

    await task('listed', '@say listed done', 'listed done', { templateRef: 'allowlisted' });
    const lp = await policyOf(await running('agentplane.io/agent=listed'));
    expect(lp.metadata.annotations).to.include({ 'agentplane.io/egress': 'Proxy' });
    expect(lp.spec.egress, 'a NetworkPolicy cannot name hosts: no direct way out').to.have.length(2);
  });

  it('a template whose egress does not parse is left out: an agent naming it is refused (400, templateRef)', async () => {
    const res = await ap.rest('POST', '/api/v1/agents', { name: 'nope', namespace: NS, instructions: '@say no', templateRef: 'broken' });
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(JSON.stringify((res.body.details as { causes?: unknown[] }).causes)).to.contain('templateRef');
    expect(await c.kubectl(['get', 'agent', 'nope', '-n', NS], { allowFail: true }).then((r) => r.code)).to.not.equal(0);
  });

  it('from an egress None pod, a tool tries the host, the metadata address and the API server: the bridge plugin enforces nothing, and the test says so', async () => {
    // The `kubernetes` Service's address (nothing routes it on this node: it has no kube-proxy).
    // A port of the host on the pods' network that no policy allows: the control.
    const listener: Server = createServer((s) => s.end());
    await new Promise<void>((resolve) => listener.listen(0, c.gateway, resolve));
    const port = (listener.address() as { port: number }).port;
    const clusterIp =
      (await c.kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}'], { allowFail: true })).stdout.trim() || '10.0.0.1';
    const apiPort = Number(new URL(c.kc.getCurrentCluster()!.server).port);
    const targets = [
      ['host', c.gateway, port],
      ['metadata', '169.254.169.254', 80],
      ['apiserver-service', clusterIp, 443],
      ['apiserver-host', c.gateway, apiPort],
    ];
    const probe =
      `node -e 'const net=require("net");const t=${JSON.stringify(targets)};` +
      `Promise.all(t.map(([n,h,p])=>new Promise(r=>{const s=net.connect({host:h,port:p,timeout:3000});` +
      `s.on("connect",()=>{s.destroy();r(n+"="+"connected")});s.on("timeout",()=>{s.destroy();r(n+"=timeout")});s.on("error",e=>r(n+"="+e.code))})))` +
      `.then(x=>console.log(x.join(" ")))'`;
    try {
      await task('shut', `@bash ${probe}\n@say probed`, 'probed');
    } finally {
      listener.close();
    }
    const out = (await toolOutputs(c, NS, 'shut')).at(-1)!;
    const seen = Object.fromEntries(out.split(' ').map((kv) => kv.split('=') as [string, string]));
    expect(Object.keys(seen), out).to.have.members(['host', 'metadata', 'apiserver-service', 'apiserver-host']);
    console.log(`      from the egress None pod: ${out}`);

    const plugins = readdirSync(join(c.dir, 'node/cni/net.d')).flatMap((f) =>
      (JSON.parse(readFileSync(join(c.dir, 'node/cni/net.d', f), 'utf8')) as { plugins: { type: string }[] }).plugins.map((x) => x.type),
    );
    if (seen.host === 'connected') {
      // The policy forbids the host's port and the pod reached it: nothing enforces policies
      // here. That is what the node's CNI configuration says: no policy-enforcing plugin.
      expect(
        plugins.filter((t) => !['bridge', 'host-local', 'portmap', 'loopback', 'firewall', 'tuning', 'bandwidth'].includes(t)),
        `CNI plugins: ${plugins.join(', ')}`,
      ).to.deep.equal([]);
      console.log(`      the node's CNI plugins (${plugins.join(', ')}) do not enforce NetworkPolicy: the objects above are all this node checks`);
    } else {
      // A plugin that enforces: what the policy forbids is unreachable.
      for (const k of ['metadata', 'apiserver-service', 'apiserver-host']) expect(seen[k], k).to.not.equal('connected');
    }
    // Whatever the plugin, the API server binds the host's loopback only: no pod reaches it.
    expect(seen['apiserver-host'], out).to.not.equal('connected');
  });

  it('a squad’s pod gets one policy, labelled with the squad; the closed member’s egress decides', async () => {
    const created = await ap.rest('POST', '/api/v1/squads', {
      name: 'crew',
      namespace: NS,
      members: [
        { name: 'ada', spec: { instructions: '@say ada here', role: 'worker' } },
        { name: 'bob', spec: { instructions: '@say bob here', role: 'worker', templateRef: 'closed' } },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    await eventually(async () => (await lastMessage('ada')) === 'ada here' && (await lastMessage('bob')) === 'bob here', 150_000, 'both members’ tasks');
    await running('agentplane.io/squad=crew,!agentplane.io/agent');
    // A member ensured after the gathering window (a loaded machine) runs beside the squad's pod
    // in one of its own: each pod has its own policy, for the members it holds.
    const pods = await livePods(c, NS, 'agentplane.io/squad=crew');
    const uids = { ada: await jsonpath('agent/ada', '.metadata.uid'), bob: await jsonpath('agent/bob', '.metadata.uid') };
    for (const pod of pods) {
      const p = await policyOf(pod);
      await expectSelectsOnly(pod, p);
      const members = pod.spec.containers.map((x) => x.name) as ('ada' | 'bob')[];
      expect(p.metadata.annotations, `${pod.metadata.name} (${members.join(', ')})`).to.include({
        'agentplane.io/egress': members.includes('bob') ? 'None' : 'Open',
      });
      expect(p.metadata.ownerReferences?.map((o) => o.uid)).to.have.members(members.map((m) => uids[m]));
    }
    expect(pods.flatMap((p) => p.spec.containers.map((x) => x.name))).to.have.members(['ada', 'bob']);
    expect(await policies('agentplane.io/squad=crew')).to.have.length(pods.length);
  });

  it('a warm-pool slot gets one before any agent; taken, it is the agent’s; sized to 0, the untaken ones go', async () => {
    await apply(templateYaml('pooled', `egress: None\nwarmPool: {size: 1, namespaces: [${NS}], role: worker}`));
    const slot = await running('agentplane.io/warm-pool=pooled,!agentplane.io/agent', true);
    const p = await policyOf(slot);
    await expectSelectsOnly(slot, p);
    expect(p.metadata.annotations).to.include({ 'agentplane.io/egress': 'None' });
    expect(p.spec.egress).to.have.length(2);

    await task('taker', '@say taken', 'taken', { templateRef: 'pooled' });
    const [pod] = await livePods(c, NS, 'agentplane.io/agent=taker');
    expect(pod.metadata.name, 'the agent runs in the slot’s pod').to.equal(slot.metadata.name);
    const taken = await policyOf(pod);
    expect(taken.metadata.labels).to.include({ 'agentplane.io/agent': 'taker' }).and.not.have.property('agentplane.io/warm-pool');
    expect(taken.metadata.ownerReferences?.[0]?.uid).to.equal(await jsonpath('agent/taker', '.metadata.uid'));

    await apply(templateYaml('pooled', `egress: None\nwarmPool: {size: 0, namespaces: [${NS}], role: worker}`));
    await eventually(async () => (await policies('agentplane.io/warm-pool=pooled,!agentplane.io/agent')).length === 0, 60_000, 'no untaken slot’s policy left');
  });

  it('the policy goes with its pod: deleted by someone else, on sleep, and on delete nothing labelled with the agent is left', async () => {
    const gone = async (name: string) => (await c.kubectl(['get', 'networkpolicy', name, '-n', NS], { allowFail: true })).code !== 0;
    const [other] = await livePods(c, NS, 'agentplane.io/agent=listed');
    await kubectl('delete', 'pod', other.metadata.name, '-n', NS, '--wait=false');
    await eventually(() => gone(other.metadata.name), 60_000, 'the policy of a pod kubectl deleted gone');

    const [pod] = await livePods(c, NS, 'agentplane.io/agent=solo');
    expect((await ap.rest('PATCH', `/api/v1/agents/solo?namespace=${NS}`, { lifecycle: 'Sleep' })).status).to.equal(200);
    await eventually(() => gone(pod.metadata.name), 60_000, 'the asleep agent’s policy gone');

    await kubectl('delete', 'squads', '--all', '-n', NS);
    await kubectl('delete', 'agents', '--all', '-n', NS);
    await eventually(
      async () => (await policies('agentplane.io/agent')).length + (await policies('agentplane.io/squad')).length === 0,
      90_000,
      'no agent’s or squad’s policy left',
    );
  });
});
