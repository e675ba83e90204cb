// A template's `egress` setting in both homes, and the NetworkPolicy the Kubernetes runtime makes
// for each pod from it (docs/kubernetes-runtime.md "Network policy"): values only, no cluster.

import { expect } from 'chai';

import { egressPolicy, type TemplateConfig, templateConfig } from '../../pkg/api/template-settings.js';
import { newPodId, POD_ID_LABEL } from '../../pkg/runtime/kubernetes/names.js';
import { egressTargets, METADATA_ADDRESS, podEgress, podNetworkPolicy } from '../../pkg/runtime/kubernetes/network-policy.js';
import { slotHolder, slotPodSpec, workerPod } from '../../pkg/runtime/kubernetes/objects.js';
import { BUILTIN_TEMPLATE, parseTemplate, type WorkerTemplate } from '../../pkg/runtime/kubernetes/template.js';

const template: WorkerTemplate = { ...BUILTIN_TEMPLATE, image: 'agentplane/worker:test' };
const owner = { apiVersion: 'agentplane.io/v1alpha1', kind: 'Agent', name: 'ada', uid: 'u1', controller: true };
/** The test node's shape: pods dial the server on the bridge's address. */
const onNode = egressTargets({
  workerUrl: 'http://10.88.0.1:40123',
  listenPort: 40123,
  installNamespace: 'agentplane-system',
  apiServerUrl: 'https://127.0.0.1:6443',
});
/** The manifests' shape: pods dial the agentplane-workers Service. */
const inCluster = egressTargets({
  workerUrl: 'http://agentplane-workers.agentplane-system.svc:8081',
  listenPort: 8081,
  installNamespace: 'agentplane-system',
  apiServerUrl: 'https://34.1.2.3',
});

describe('A template’s egress (embedded home: the config file’s templates)', () => {
  it('defaults to Open with nothing listed; Proxy keeps its allow-list, lower-cased and without duplicates', () => {
    expect(templateConfig('quick')).to.deep.equal({ name: 'quick' });
    expect(egressPolicy(undefined)).to.deep.equal({ mode: 'Open', allow: [] });
    const t = templateConfig({ name: 'docs', egress: 'Proxy', egressAllow: ['API.example.com', '*.pypi.org', 'api.example.com'] });
    expect(t).to.deep.equal({ name: 'docs', egress: 'Proxy', egressAllow: ['api.example.com', '*.pypi.org'] });
    expect(egressPolicy(t as TemplateConfig)).to.deep.equal({ mode: 'Proxy', allow: ['api.example.com', '*.pypi.org'] });
    expect(egressPolicy(templateConfig({ name: 'shut', egress: 'None' }) as TemplateConfig)).to.deep.equal({ mode: 'None', allow: [] });
    expect(templateConfig({ name: 'p', egress: 'Proxy' }), 'Proxy with no list: nothing allowed').to.deep.equal({ name: 'p', egress: 'Proxy' });
  });

  it('refuses a bad mode or pattern, and a list without Proxy, naming the template and the field', () => {
    expect(templateConfig({ name: 'x', egress: 'open' })).to.equal('template "x": egress must be one of Open, Proxy, None, got "open"');
    expect(templateConfig({ name: 'x', egress: 'Proxy', egressAllow: 'a.com' })).to.match(/^template "x": egressAllow must be a list of host names/);
    for (const bad of ['*', '*.', 'http://a.com', 'a..com', '-a.com', 'a.com/path', 'a.com:443', '**.a.com', 'a.*.com', '', 7]) {
      expect(templateConfig({ name: 'x', egress: 'Proxy', egressAllow: ['ok.com', bad] }), JSON.stringify(bad)).to.match(
        /^template "x": egressAllow \[1\] must be a host name \(api\.example\.com\) or \*\.suffix/,
      );
    }
    expect(templateConfig({ name: 'x', egressAllow: ['a.com'] })).to.equal('template "x": egressAllow applies only with egress: Proxy (egress is Open)');
    expect(templateConfig({ name: 'x', egress: 'None', egressAllow: ['a.com'] })).to.equal(
      'template "x": egressAllow applies only with egress: Proxy (egress is None)',
    );
    expect(templateConfig({ name: 'x', egress: 'Proxy', egressAllow: Array.from({ length: 257 }, (_, i) => `h${i}.com`) })).to.equal(
      'template "x": egressAllow has 257 entries; at most 256',
    );
  });
});

describe('A template’s egress (cluster home: template.yaml)', () => {
  it('reads the mode and list over what it inherits: a mode of its own drops an inherited list unless it is Proxy', () => {
    const proxy = parseTemplate('egress: Proxy\negressAllow: ["*.Example.com"]', template);
    expect(proxy).to.deep.include({ egress: 'Proxy', egressAllow: ['*.example.com'] });
    expect(parseTemplate('image: other', proxy), 'inherited as is').to.deep.include({ egress: 'Proxy', egressAllow: ['*.example.com'] });
    expect(parseTemplate('egress: Proxy', proxy).egressAllow, 'Proxy again keeps the list').to.deep.equal(['*.example.com']);
    const none = parseTemplate('egress: None', proxy);
    expect(none.egress).to.equal('None');
    expect(none).to.not.have.property('egressAllow');
    expect(parseTemplate('egressAllow: [a.org]', proxy).egressAllow, 'a list of its own replaces the inherited one').to.deep.equal(['a.org']);
  });

  it('refuses a bad one by field (the ConfigMap is then left out and logged)', () => {
    expect(() => parseTemplate('egress: Closed', template)).to.throw('egress must be one of Open, Proxy, None, got "Closed"');
    expect(() => parseTemplate('egressAllow: [a.org]', template)).to.throw('egressAllow applies only with egress: Proxy (egress is Open)');
    expect(() => parseTemplate('egress: Proxy\negressAllow: ["10.0.0.0/8"]', template)).to.throw(/egressAllow \[0\] must be a host name/);
  });
});

describe('A pod’s NetworkPolicy', () => {
  const solo = workerPod({
    namespace: 'team-a',
    agent: 'ada',
    generateName: 'agent-ada-',
    podId: 'bcdf2456',
    members: [{ name: 'ada', template }],
    owners: [owner],
  });
  const peersOf = (p: ReturnType<typeof podNetworkPolicy>) => p.spec!.egress!.flatMap((r) => r.to ?? []);
  const ipBlocks = (p: ReturnType<typeof podNetworkPolicy>) => peersOf(p).flatMap((t) => (t.ipBlock ? [t.ipBlock] : []));

  it('is named after its pod, which is named <prefix><id> and labelled with the id it selects', () => {
    expect(solo.metadata!.name).to.equal('agent-ada-bcdf2456');
    expect(solo.metadata).to.not.have.property('generateName');
    expect(solo.metadata!.labels).to.include({ [POD_ID_LABEL]: 'bcdf2456', 'agentplane.io/agent': 'ada' });
    const p = podNetworkPolicy(solo, 'Open', onNode);
    expect(p.metadata).to.deep.include({ name: 'agent-ada-bcdf2456', namespace: 'team-a', ownerReferences: [owner] });
    expect(p.metadata!.labels).to.include({
      'agentplane.io/agent': 'ada',
      'agentplane.io/component': 'network-policy',
      'app.kubernetes.io/managed-by': 'agentplane',
    });
    expect(p.spec!.podSelector).to.deep.equal({ matchLabels: { [POD_ID_LABEL]: 'bcdf2456' } });
    const ids = new Set(Array.from({ length: 200 }, newPodId));
    expect(ids.size).to.equal(200);
    for (const id of ids) expect(id).to.match(/^[bcdfghjklmnpqrstvwxz2456789]{8}$/);
  });

  it('admits no ingress, and lets every mode reach DNS and the worker listener', () => {
    for (const mode of ['Open', 'Proxy', 'None'] as const) {
      const p = podNetworkPolicy(solo, mode, onNode);
      expect(p.spec!.policyTypes).to.deep.equal(['Ingress', 'Egress']);
      expect(p.spec!.ingress).to.deep.equal([]);
      const [dns, server] = p.spec!.egress!;
      expect(dns).to.deep.equal({
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      });
      expect(server).to.deep.equal({ to: [{ ipBlock: { cidr: '10.88.0.1/32' } }], ports: [{ protocol: 'TCP', port: 40123 }] });
      expect(p.metadata!.annotations).to.deep.equal({ 'agentplane.io/egress': mode });
    }
  });

  it('in the cluster, reaches the server as agentplane’s pods in the install namespace on the listener’s port', () => {
    const [, server] = podNetworkPolicy(solo, 'None', inCluster).spec!.egress!;
    expect(server).to.deep.equal({
      to: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentplane-system' } },
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'agentplane', 'app.kubernetes.io/component': 'apiserver' } },
        },
      ],
      ports: [{ protocol: 'TCP', port: 8081 }],
    });
  });

  it('Open adds public addresses only: never the metadata address, link-local, private, shared or loopback ranges, nor a known API server', () => {
    const p = podNetworkPolicy(solo, 'Open', inCluster);
    expect(p.spec!.egress).to.have.length(3);
    const [v4, v6] = ipBlocks(p);
    expect(v4.cidr).to.equal('0.0.0.0/0');
    expect(v4.except).to.include.members([METADATA_ADDRESS, '169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '34.1.2.3/32']);
    expect(v6.cidr).to.equal('::/0');
    expect(v6.except).to.include.members(['fc00::/7', 'fe80::/10', '64:ff9b::/96']);
    expect(v6.except, 'kube-apiserver reads ::ffff:0:0/96 as IPv4 and refuses it inside ::/0').to.not.include('::ffff:0:0/96');
    expect(p.spec!.egress![2].ports, 'any port').to.equal(undefined);
    expect(
      podNetworkPolicy(solo, 'Open', onNode).spec!.egress![2].to![0].ipBlock!.except,
      'a loopback API server is not a pod’s to reach anyway',
    ).to.not.include('127.0.0.1/32');
  });

  it('Proxy and None leave no direct way out: a NetworkPolicy cannot name hosts', () => {
    for (const mode of ['Proxy', 'None'] as const) {
      const p = podNetworkPolicy(solo, mode, inCluster);
      expect(p.spec!.egress, mode).to.have.length(2);
      expect(ipBlocks(p), mode).to.deep.equal([]);
    }
  });

  it('with the model-proxy sidecar, reaches a model API named by address', () => {
    const t = egressTargets({ workerUrl: 'http://10.88.0.1:40123', listenPort: 40123, installNamespace: 'x', modelUpstream: 'http://10.88.0.1:39999' });
    expect(podNetworkPolicy(solo, 'Open', t).spec!.egress![2]).to.deep.equal({
      to: [{ ipBlock: { cidr: '10.88.0.1/32' } }],
      ports: [{ protocol: 'TCP', port: 39999 }],
    });
    expect(
      egressTargets({ workerUrl: 'http://a.svc:1', listenPort: 1, installNamespace: 'x', modelUpstream: 'https://api.anthropic.com' }).model,
      'a name: reached through the public rule',
    ).to.equal(undefined);
  });

  it('a squad pod’s and a warm-pool slot’s select only their pod, labelled as the pod is', () => {
    const squad = workerPod({
      namespace: 'team-a',
      group: 'squad:team-a/crew',
      generateName: 'squad-crew-',
      podId: 'zzzz2222',
      members: [
        { name: 'ada', template },
        { name: 'bob', template },
      ],
    });
    const sp = podNetworkPolicy(squad, podEgress([template, { ...template, egress: 'None' }]), onNode);
    expect(sp.metadata!.name).to.equal('squad-crew-zzzz2222');
    expect(sp.metadata!.labels).to.include({ 'agentplane.io/squad': 'crew' }).and.not.have.property('agentplane.io/agent');
    expect(sp.metadata!.annotations, 'the most closed member decides').to.deep.equal({ 'agentplane.io/egress': 'None' });
    const slot = workerPod({
      ...slotPodSpec(slotHolder('team-a', 'warm-0a1b2c3d', 'fast'), 'fast', template, { model: 'm', role: 'worker' }),
      podId: 'qqqq4444',
    });
    const pp = podNetworkPolicy(slot, 'Open', onNode);
    expect(pp.metadata!.name).to.equal('warm-0a1b2c3d-qqqq4444');
    expect(pp.metadata!.labels).to.include({ 'agentplane.io/warm-pool': 'fast' }).and.not.have.property('agentplane.io/agent');
    expect(pp.spec!.podSelector).to.deep.equal({ matchLabels: { [POD_ID_LABEL]: 'qqqq4444' } });
  });

  it('a pod’s egress is its most closed member’s', () => {
    expect(podEgress([template])).to.equal('Open');
    expect(podEgress([template, { ...template, egress: 'Proxy' }])).to.equal('Proxy');
    expect(podEgress([{ ...template, egress: 'Proxy' }, { ...template, egress: 'None' }, template])).to.equal('None');
  });
});
