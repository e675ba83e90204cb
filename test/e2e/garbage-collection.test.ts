// Deletion and garbage collection of agentplane's objects by kube-controller-manager, on the
// project's API-only control plane (hack/control-plane.sh up starts kube-controller-manager with
// its namespace and garbage-collector controllers) with agentplane registered, driven by kubectl:
// namespace deletion, owner references both ways, the three propagation policies, and a client
// finalizer holding an agent.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { type ControlPlane, controlPlaneUp, REPO } from '../support/control-plane.js';
import { eventually } from '../support/harness.js';

const run = promisify(execFile);
const GV = 'agentplane.io/v1alpha1';

interface Meta {
  uid: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: { name: string; uid: string }[];
}

const agentYaml = (name: string, ns: string, instructions: string, metadata = ''): string => `apiVersion: ${GV}
kind: Agent
metadata:
  name: ${name}
  namespace: ${ns}
${metadata}spec:
  instructions: ${JSON.stringify(instructions)}
  role: worker
`;

describe('deletion and garbage collection with kube-controller-manager (e2e)', function () {
  this.timeout(180_000);
  let cp: ControlPlane;

  const kubectl = (...args: string[]) => cp.kubectl(args).then((r) => r.stdout);
  const apply = (yaml: string) => cp.kubectl(['apply', '-f', '-'], { input: yaml }).then((r) => r.stdout);
  const meta = async (ref: string, ns: string): Promise<Meta | undefined> => {
    const r = await cp.kubectl(['get', ref, '-n', ns, '-o', 'json'], { allowFail: true });
    if (r.code !== 0) {
      expect(r.stderr).to.contain('NotFound');
      return undefined;
    }
    return JSON.parse(r.stdout).metadata as Meta;
  };
  const gone = (ref: string, ns: string, ms = 60_000) => eventually(async () => (await meta(ref, ns)) === undefined, ms, `${ref} in ${ns} gone`);
  const configMap = (name: string, ns: string, owners: { name: string; uid: string }[] = [], block = false, finalizers: string[] = []) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: ns,
        ...(finalizers.length ? { finalizers } : {}),
        ...(owners.length
          ? {
              ownerReferences: owners.map((o) => ({ apiVersion: GV, kind: 'Agent', name: o.name, uid: o.uid, ...(block ? { blockOwnerDeletion: true } : {}) })),
            }
          : {}),
      },
      data: { k: 'v' },
    });

  before(async function () {
    this.timeout(45 * 60_000); // a cold machine builds the binaries first
    cp = await controlPlaneUp({ node: false });
    const env = { ...process.env, AGENTPLANE_CP_DIR: cp.dir };
    await run('bash', [join(REPO, 'hack/control-plane.sh'), 'register'], { env, timeout: 5 * 60_000 });
    await kubectl('create', 'namespace', 'owners');
    // The garbage collector learns of agentplane's resources by discovery (every 30 s): wait
    // until it watches agents, i.e. until it collects one whose owner is missing.
    await apply(
      agentYaml(
        'probe',
        'owners',
        '@say probe',
        `  ownerReferences:\n  - {apiVersion: v1, kind: ConfigMap, name: missing, uid: 00000000-0000-0000-0000-000000000001}\n`,
      ),
    );
    await gone('agent/probe', 'owners', 120_000);
  });

  after(async () => {
    await cp?.down();
  });

  it('deleting a namespace takes its agents, squads and connectors within 60 s', async () => {
    await kubectl('create', 'namespace', 'doomed');
    await apply(`${agentYaml('busy', 'doomed', '@bash sleep 60\n@say never')}---
${agentYaml('idle', 'doomed', '@say done')}---
apiVersion: ${GV}
kind: Connector
metadata: {name: tools, namespace: doomed}
spec: {url: "https://mcp.example.com/mcp", service: github}
---
apiVersion: ${GV}
kind: Squad
metadata: {name: crew, namespace: doomed}
spec:
  members:
  - name: crew-a
    spec: {instructions: "@say hi"}
`);
    await eventually(async () => (await kubectl('get', 'agents', '-n', 'doomed', '-o', 'name')).includes('crew-a'), 30_000, 'squad member');
    const start = Date.now();
    await kubectl('delete', 'namespace', 'doomed', '--wait=false');
    await eventually(async () => (await cp.kubectl(['get', 'namespace', 'doomed'], { allowFail: true })).code !== 0, 60_000, 'namespace doomed gone');
    expect(Date.now() - start).to.be.below(60_000);
    const left = await kubectl('get', 'agents.agentplane.io,squads.agentplane.io,connectors.agentplane.io', '-n', 'doomed', '-o', 'name');
    expect(left.trim()).to.equal('');
  });

  it('an agent owned by a ConfigMap goes when the ConfigMap goes', async () => {
    await cp.kubectl(['apply', '-f', '-'], { input: configMap('owner-cm', 'owners') });
    const cm = (await meta('configmap/owner-cm', 'owners'))!;
    await apply(agentYaml('owned', 'owners', '@say owned', `  ownerReferences:\n  - {apiVersion: v1, kind: ConfigMap, name: owner-cm, uid: ${cm.uid}}\n`));
    const agent = (await meta('agent/owned', 'owners'))!;
    expect(agent.ownerReferences?.map((o) => o.uid)).to.deep.equal([cm.uid]);
    await kubectl('delete', 'configmap', 'owner-cm', '-n', 'owners');
    await gone('agent/owned', 'owners');
  });

  for (const cascade of ['foreground', 'background'] as const) {
    it(`a ConfigMap owned by an agent goes with the agent (kubectl delete --cascade=${cascade})`, async () => {
      const name = `owner-${cascade}`;
      await apply(agentYaml(name, 'owners', '@say owner'));
      const agent = (await meta(`agent/${name}`, 'owners'))!;
      await cp.kubectl(['apply', '-f', '-'], { input: configMap(`dep-${cascade}`, 'owners', [{ name, uid: agent.uid }], cascade === 'foreground') });
      // kubectl waits for the agent to be gone; in the foreground, only after its dependents.
      await kubectl('delete', 'agent', name, '-n', 'owners', `--cascade=${cascade}`, '--timeout=90s');
      if (cascade === 'foreground') expect(await meta(`configmap/dep-${cascade}`, 'owners')).to.equal(undefined);
      await gone(`configmap/dep-${cascade}`, 'owners');
      expect(await meta(`agent/${name}`, 'owners')).to.equal(undefined);
    });
  }

  it('kubectl delete --cascade=foreground marks the agent with foregroundDeletion while a blocking dependent remains', async () => {
    await apply(agentYaml('fg', 'owners', '@say fg'));
    const agent = (await meta('agent/fg', 'owners'))!;
    await cp.kubectl(['apply', '-f', '-'], { input: configMap('dep-fg', 'owners', [{ name: 'fg', uid: agent.uid }], true, ['example.com/hold']) });
    await kubectl('delete', 'agent', 'fg', '-n', 'owners', '--cascade=foreground', '--wait=false');
    const marked = (await meta('agent/fg', 'owners'))!;
    expect(marked.deletionTimestamp).to.be.a('string');
    expect(marked.finalizers).to.include('foregroundDeletion');
    // The dependent is held by its own finalizer, so the agent waits for it.
    await eventually(async () => !!(await meta('configmap/dep-fg', 'owners'))?.deletionTimestamp, 60_000, 'dependent marked');
    expect(await meta('agent/fg', 'owners')).to.not.equal(undefined);
    await kubectl('patch', 'configmap', 'dep-fg', '-n', 'owners', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]');
    await gone('agent/fg', 'owners');
  });

  it('kubectl delete --cascade=orphan keeps the dependent and removes its owner reference', async () => {
    await apply(agentYaml('orphaner', 'owners', '@say orphan'));
    const agent = (await meta('agent/orphaner', 'owners'))!;
    await cp.kubectl(['apply', '-f', '-'], { input: configMap('dep-orphan', 'owners', [{ name: 'orphaner', uid: agent.uid }]) });
    await kubectl('delete', 'agent', 'orphaner', '-n', 'owners', '--cascade=orphan', '--timeout=90s');
    expect(await meta('agent/orphaner', 'owners')).to.equal(undefined);
    const dep = await meta('configmap/dep-orphan', 'owners');
    expect(dep, 'the dependent stays').to.not.equal(undefined);
    expect(dep!.ownerReferences ?? []).to.deep.equal([]);
  });

  it('kubectl label, annotate, edit and apply keep working now that strategic merge patch is 415; apply manages finalizers', async () => {
    const yaml = (fin: string) => agentYaml('tools', 'owners', '@say tools', `  labels: {team: gc}\n${fin}`);
    await apply(yaml('  finalizers: [example.com/keep]\n'));
    expect((await meta('agent/tools', 'owners'))!.finalizers).to.have.members(['example.com/keep', 'agentplane.io/cleanup']);
    await kubectl('label', 'agent', 'tools', '-n', 'owners', 'stage=one');
    await kubectl('annotate', 'agent', 'tools', '-n', 'owners', 'note=hi');
    await run(join(cp.bin, 'kubectl'), ['--kubeconfig', cp.kubeconfig, 'edit', 'agent', 'tools', '-n', 'owners'], {
      env: { ...process.env, KUBE_EDITOR: "sed -i 's/stage: one/stage: two/'" },
    });
    const edited = JSON.parse(await kubectl('get', 'agent', 'tools', '-n', 'owners', '-o', 'json'));
    expect(edited.metadata.labels).to.deep.equal({ team: 'gc', stage: 'two' });
    expect(edited.metadata.annotations.note).to.equal('hi');
    // Client-side apply without the finalizer removes it (agentplane's own stays).
    expect(await apply(yaml(''))).to.contain('configured');
    expect((await meta('agent/tools', 'owners'))!.finalizers).to.deep.equal(['agentplane.io/cleanup']);
    const ssa = await cp.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: yaml('  finalizers: [example.com/ssa]\n') });
    expect(ssa.stdout).to.contain('serverside-applied');
    expect((await meta('agent/tools', 'owners'))!.finalizers).to.include('example.com/ssa');
    const smp = await cp.kubectl(['patch', 'agent', 'tools', '-n', 'owners', '--type=strategic', '-p', '{"metadata":{"labels":{"x":"y"}}}'], {
      allowFail: true,
    });
    expect(smp.code).to.not.equal(0);
    expect(smp.stderr).to.match(/UnsupportedMediaType|not supported|415/);
    await kubectl('patch', 'agent', 'tools', '-n', 'owners', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
    await kubectl('delete', 'agent', 'tools', '-n', 'owners', '--timeout=60s');
  });

  it('a client finalizer holds an agent: readable, its task cancelled, 409 on a new task, gone once removed', async () => {
    await apply(agentYaml('held', 'owners', '@bash sleep 60\n@say never', '  finalizers: [example.com/hold]\n'));
    await eventually(
      async () => (await kubectl('get', 'agent', 'held', '-n', 'owners', '-o', 'jsonpath={.status.taskStatus}')) === 'InProgress',
      30_000,
      'task running',
    );
    await kubectl('delete', 'agent', 'held', '-n', 'owners', '--wait=false');
    const marked = (await meta('agent/held', 'owners'))!;
    expect(marked.deletionTimestamp).to.be.a('string');
    expect(marked.finalizers).to.include('example.com/hold');
    await eventually(
      async () => (await kubectl('get', 'agent', 'held', '-n', 'owners', '-o', 'jsonpath={.status.taskStatus}')) === 'Cancelled',
      30_000,
      'task cancelled',
    );
    const events = JSON.parse(await kubectl('get', '--raw', `/apis/${GV}/namespaces/owners/agents/held/events?limit=200`));
    expect(events.items.map((e: { type: string }) => e.type)).to.include('task_cancelled');
    const refused = await cp.kubectl(['patch', 'agent', 'held', '-n', 'owners', '--type=merge', '-p', '{"spec":{"instructions":"again"}}'], {
      allowFail: true,
    });
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('being deleted');
    const more = await cp.kubectl(
      ['patch', 'agent', 'held', '-n', 'owners', '--type=json', '-p', '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/more"}]'],
      {
        allowFail: true,
      },
    );
    expect(more.code).to.not.equal(0);
    expect(more.stderr).to.contain('no new finalizers');
    // Removing the client's finalizer (kubectl edit would do the same) lets agentplane finish.
    const fins = marked.finalizers!.filter((f) => f !== 'example.com/hold');
    await kubectl('patch', 'agent', 'held', '-n', 'owners', '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: fins } }));
    await gone('agent/held', 'owners', 30_000);
  });
});
