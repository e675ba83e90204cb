// The Kubernetes runtime's objects as values: names and labels, the pod's security settings, the
// squad pod's containers and mounts, and the template format (docs/kubernetes-runtime.md).

import { expect } from 'chai';

import { groupLabel, groupPodPrefix, labelsFor, objectNames } from '../../pkg/runtime/kubernetes/names.js';
import { MODEL_PROXY_CONTAINER } from '../../pkg/api/agent.js';
import {
  agentHolder,
  managerAccess,
  SLOT_CONTAINER,
  slotHolder,
  slotPodSpec,
  workerConfigMap,
  workerPod,
  workerSecret,
  workspaceClaim,
} from '../../pkg/runtime/kubernetes/objects.js';
import { isCurrent, isSlotPod, placementIn } from '../../pkg/runtime/kubernetes/pod-index.js';
import { BUILTIN_TEMPLATE, parseTemplate, type WorkerTemplate } from '../../pkg/runtime/kubernetes/template.js';

const template: WorkerTemplate = { ...BUILTIN_TEMPLATE, image: 'agentplane/worker:test' };
const ref = { namespace: 'team-a', name: 'ada' };
const ada = agentHolder(ref);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe('Kubernetes runtime objects', () => {
  it('names a squad group after the squad, and any other group key as a valid label', () => {
    expect(groupLabel('squad:team-a/crew')).to.equal('crew');
    expect(groupPodPrefix('squad:team-a/crew')).to.equal('squad-crew-');
    for (const key of ['conformance-crew', 'Weird Group/Name:1', 'x'.repeat(200), '---']) {
      const label = groupLabel(key);
      expect(label, key).to.match(DNS_LABEL);
      expect(label.length, key).to.be.at.most(63);
    }
    expect(groupLabel('a b')).to.not.equal(groupLabel('a_b'), 'different keys, different labels');
  });

  it('labels every object with the agent, and a squad pod with the squad', () => {
    expect(labelsFor('workspace', 'ada')).to.deep.equal({
      'app.kubernetes.io/managed-by': 'agentplane',
      'agentplane.io/component': 'workspace',
      'agentplane.io/agent': 'ada',
    });
    const pod = workerPod({ namespace: 'team-a', group: 'squad:team-a/crew', generateName: 'squad-crew-', members: [{ name: 'ada', template }] });
    expect(pod.metadata!.labels).to.include({ 'agentplane.io/squad': 'crew' }).and.not.have.property('agentplane.io/agent');
    for (const o of [
      workerSecret(ada, 'u1', { token: 't', modelCredential: 'm' }),
      workerConfigMap(ada, { serverUrl: 's', modelBaseUrl: 'b' }),
      workspaceClaim(ada, template),
    ]) {
      expect(o.metadata!.labels, o.kind).to.include({ 'agentplane.io/agent': 'ada' });
      expect(o.metadata!.namespace).to.equal('team-a');
    }
  });

  it('runs a solo worker unprivileged: non-root, no token, read-only root, credentials only by reference', () => {
    const owner = { apiVersion: 'internal.agentplane.io/v1alpha1', kind: 'AgentRecord', name: 'ada', uid: 'u1', controller: true };
    const pod = workerPod({ namespace: 'team-a', agent: 'ada', generateName: 'agent-ada-', members: [{ name: 'ada', template }], owners: [owner] });
    const spec = pod.spec!;
    expect(pod.metadata!.ownerReferences).to.deep.equal([owner]);
    expect(spec.restartPolicy, 'an ended worker ends its incarnation; the runtime replaces it').to.equal('Never');
    expect(spec.automountServiceAccountToken).to.equal(false);
    expect(spec.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 10001 });
    const [c] = spec.containers;
    expect(c.securityContext).to.deep.include({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const secretRefs = (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name);
    expect(secretRefs).to.have.members(['AGENTPLANE_AGENT_TOKEN', 'ANTHROPIC_API_KEY']);
    expect((c.env ?? []).filter((e) => e.value !== undefined).map((e) => e.name)).to.not.include.members(['AGENTPLANE_AGENT_TOKEN', 'ANTHROPIC_API_KEY']);
    expect(c.envFrom).to.deep.equal([{ configMapRef: { name: objectNames('ada').config } }]);
    expect(c.volumeMounts!.map((m) => m.mountPath)).to.have.members(['/workspace', '/tmp']);
    expect(spec.volumes!.find((v) => v.persistentVolumeClaim)!.persistentVolumeClaim!.claimName).to.equal('agent-ada-workspace');
    expect(c.readinessProbe!.httpGet).to.deep.include({ path: '/healthz', port: 8080 });
    expect(JSON.stringify(pod)).to.not.contain('AGENTPLANE_WAKE_IDLE');
  });

  it('gives each squad member its own container, port and workspace, and every workspace read-only under /squad', () => {
    const pod = workerPod({
      namespace: 'team-a',
      group: 'squad:team-a/crew',
      generateName: 'squad-crew-',
      members: [
        { name: 'ada', template },
        { name: 'bob', template, wakeIdle: true },
      ],
      peers: new Map([
        ['ada', 'agent-ada-workspace'],
        ['bob', 'agent-bob-workspace'],
        ['cy', 'warm-0a1b2c3d-workspace'],
      ]),
    });
    expect(pod.spec!.restartPolicy, 'a crashed member restarts in place; a revoked one exits 0 and stays ended').to.equal('OnFailure');
    const [ada, bob] = pod.spec!.containers;
    expect([ada.name, bob.name]).to.deep.equal(['ada', 'bob']);
    expect(ada.ports![0].containerPort).to.not.equal(bob.ports![0].containerPort);
    const env = (c: typeof ada) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
    expect(env(bob).AGENTPLANE_WAKE_IDLE).to.equal('true');
    expect(env(ada)).to.not.have.property('AGENTPLANE_WAKE_IDLE');
    expect(env(ada).AGENTPLANE_SQUAD_DIR).to.equal('/squad');
    const claims = pod.spec!.volumes!.filter((v) => v.persistentVolumeClaim).map((v) => v.persistentVolumeClaim!.claimName);
    expect(claims, "a peer's claim taken from a warm-pool slot keeps its name").to.have.members([
      'agent-ada-workspace',
      'agent-bob-workspace',
      'warm-0a1b2c3d-workspace',
    ]);
    const mounts = Object.fromEntries(ada.volumeMounts!.map((m) => [m.mountPath, m]));
    expect(mounts['/workspace'].readOnly).to.not.equal(true);
    for (const p of ['/squad/ada', '/squad/bob', '/squad/cy']) expect(mounts[p], p).to.deep.include({ readOnly: true });
    const volumeOf = (c: typeof ada, path: string) => c.volumeMounts!.find((m) => m.mountPath === path)!.name;
    expect(volumeOf(ada, '/workspace')).to.not.equal(volumeOf(bob, '/workspace'));
  });

  it('never writes a credential into the pod or ConfigMap; the Secret holds them', () => {
    const secret = workerSecret(ada, 'u1', { token: 'tok-123', modelCredential: 'apmc_abc' });
    expect(secret.stringData).to.deep.equal({ token: 'tok-123', 'model-credential': 'apmc_abc' });
    const withSidecar = workerSecret(ada, 'u1', { token: 'tok-123', modelCredential: 'apmc_abc', reportCredential: 'apmr_abc' });
    expect(withSidecar.stringData).to.deep.equal({ token: 'tok-123', 'model-credential': 'apmc_abc', 'report-credential': 'apmr_abc' });
    expect(secret.metadata!.annotations).to.deep.include({ 'agentplane.io/agent-uid': 'u1', 'agentplane.io/worker-state': 'running' });
    const cm = workerConfigMap(ada, { serverUrl: 'http://w:8081', modelBaseUrl: 'http://w:8081/internal/v1/model' });
    expect(cm.data).to.deep.include({ AGENTPLANE_SERVER_URL: 'http://w:8081', AGENTPLANE_NAMESPACE: 'team-a', AGENTPLANE_AGENT_NAME: 'ada' });
    expect(JSON.stringify(cm)).to.not.contain('tok-123');
  });
});

describe('A warm-pool slot (docs/kubernetes-runtime.md "Warm pool")', () => {
  const slot = slotHolder('team-a', 'warm-0a1b2c3d', 'fast');
  const worker = slotPodSpec(slot, 'fast', template, { model: 'claude-sonnet-4-5', role: 'worker' });
  const manager = slotPodSpec(slot, 'fast', template, { model: 'claude-sonnet-4-5', role: 'manager' });

  it("names its objects warm-<id>-* (never an agent's agent-*) and labels them with the pool's template, not an agent", () => {
    const objects = [
      workerSecret(slot, 'u1', { token: 't', modelCredential: 'm' }),
      workerConfigMap(slot, { serverUrl: 's', modelBaseUrl: 'b' }),
      workspaceClaim(slot, template),
    ];
    expect(objects.map((o) => o.metadata!.name)).to.deep.equal(['warm-0a1b2c3d-worker', 'warm-0a1b2c3d-config', 'warm-0a1b2c3d-workspace']);
    for (const o of objects) {
      expect(o.metadata!.labels, o.kind).to.include({ 'agentplane.io/warm-pool': 'fast', 'app.kubernetes.io/managed-by': 'agentplane' });
      expect(o.metadata!.labels, o.kind).to.not.have.property('agentplane.io/agent');
    }
    expect(workerConfigMap(slot, { serverUrl: 's', modelBaseUrl: 'b' }).data, 'its ConfigMap names no agent').to.not.have.property('AGENTPLANE_AGENT_NAME');
  });

  it('is a solo pod for nobody yet: never restarted, its engine pre-started, a service account only for a manager pool', () => {
    const pod = workerPod(worker);
    expect(pod.metadata!.generateName).to.equal('warm-0a1b2c3d-');
    expect(pod.spec!.restartPolicy).to.equal('Never');
    expect(pod.spec!.automountServiceAccountToken).to.equal(false);
    expect(workerPod(manager).spec).to.deep.include({ serviceAccountName: 'agentplane-manager', automountServiceAccountToken: true });
    const [c] = pod.spec!.containers;
    expect(c.name).to.equal(SLOT_CONTAINER);
    expect(c.envFrom).to.deep.equal([{ configMapRef: { name: 'warm-0a1b2c3d-config' } }]);
    expect(JSON.parse(c.env!.find((e) => e.name === 'AGENTPLANE_PRESTART')!.value!)).to.deep.equal({ model: 'claude-sonnet-4-5', role: 'worker' });
    expect(pod.spec!.volumes!.find((v) => v.persistentVolumeClaim)!.persistentVolumeClaim!.claimName).to.equal('warm-0a1b2c3d-workspace');
    expect(pod.metadata!.annotations).to.deep.equal({ 'agentplane.io/warm-pool-role': 'worker' });
  });

  it("is nobody's placement until taken; taken, it is the agent's own pod whatever its container is called", () => {
    const pod = { ...workerPod(worker), spec: { ...workerPod(worker).spec!, containers: [{ name: SLOT_CONTAINER }] } };
    expect(isSlotPod(pod)).to.equal(true);
    expect(placementIn(pod, SLOT_CONTAINER), 'an agent named like the container').to.equal(undefined);
    const taken = { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata!.labels, 'agentplane.io/agent': 'ada' } } };
    expect(isSlotPod(taken)).to.equal(false);
    expect(placementIn(taken, 'ada')).to.deep.include({ container: SLOT_CONTAINER, own: true, group: null });
  });
});

describe("A pod's ending, reported as the agent's worker exiting", () => {
  const pod = (uid: string, phase = 'Running') => ({
    metadata: { uid, labels: { 'agentplane.io/agent': 'ada' } },
    spec: { containers: [{ name: 'ada' }] },
    status: { phase },
  });
  const placed = (p: ReturnType<typeof pod>) => placementIn(p, 'ada');

  it('only while the pod still runs it: not once the runtime deleted it, nor once a newer pod holds the agent', () => {
    const old = pod('old', 'Succeeded');
    const fresh = pod('new');
    expect(isCurrent(old, undefined, new Set()), 'its only pod ended: a crash').to.equal(true);
    expect(isCurrent(old, undefined, new Set(['old'])), 'deleted by the runtime (sleep, stop)').to.equal(false);
    expect(isCurrent(old, placed(fresh), new Set()), 'woken meanwhile into a new pod').to.equal(false);
    expect(isCurrent(fresh, placed(fresh), new Set(['old']))).to.equal(true);
  });
});

describe('The model-proxy sidecar', () => {
  const modelProxy = { secretName: 'agentplane-model', serverUrl: 'http://10.0.0.1:8081', upstream: 'https://model.example', retry: '{"maxRetries":3}' };
  const pod = workerPod({
    namespace: 'team-a',
    group: 'squad:team-a/crew',
    generateName: 'squad-crew-',
    members: [
      { name: 'ada', template },
      { name: 'bob', template },
    ],
    modelProxy,
  });
  const spec = pod.spec!;
  const keyVolume = spec.volumes!.find((v) => v.secret?.secretName === 'agentplane-model')!;

  it('is a native sidecar (an init container that keeps running) of the worker image, unprivileged, sharing no process namespace', () => {
    expect(spec.initContainers).to.have.length(1);
    const sc = spec.initContainers![0];
    expect(sc).to.deep.include({ name: MODEL_PROXY_CONTAINER, image: template.image, restartPolicy: 'Always', args: ['model-proxy'] });
    expect(sc.securityContext).to.deep.include({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(spec.shareProcessNamespace).to.equal(undefined);
    const env = Object.fromEntries(sc.env!.map((e) => [e.name, e.value]));
    expect(env).to.include({
      AGENTPLANE_NAMESPACE: 'team-a',
      AGENTPLANE_SERVER_URL: modelProxy.serverUrl,
      AGENTPLANE_MODEL_UPSTREAM: modelProxy.upstream,
      AGENTPLANE_MODEL_RETRY: modelProxy.retry,
    });
  });

  it('alone mounts the mirrored Secret, and each member’s credential only (not its control token)', () => {
    expect(keyVolume).to.not.equal(undefined);
    const sc = spec.initContainers![0];
    expect(sc.volumeMounts!.map((m) => [m.name, m.mountPath, m.readOnly])).to.deep.equal([
      [keyVolume.name, '/var/run/agentplane/model', true],
      ['model-credential-0', '/var/run/agentplane/agents/ada', true],
      ['model-credential-1', '/var/run/agentplane/agents/bob', true],
    ]);
    for (const c of spec.containers) {
      expect(c.volumeMounts!.map((m) => m.name)).to.not.include.members([keyVolume.name, 'model-credential-0', 'model-credential-1']);
    }
    const creds = spec.volumes!.filter((v) => v.name.startsWith('model-credential-'));
    expect(creds.map((v) => [v.secret!.secretName, v.secret!.items, v.secret!.optional])).to.deep.equal([
      [
        'agent-ada-worker',
        [
          { key: 'model-credential', path: 'model-credential' },
          { key: 'report-credential', path: 'report-credential' },
        ],
        true,
      ],
      [
        'agent-bob-worker',
        [
          { key: 'model-credential', path: 'model-credential' },
          { key: 'report-credential', path: 'report-credential' },
        ],
        true,
      ],
    ]);
    // The worker containers reference their Secret's token and model credential by key, never
    // the report credential: the agent's tools cannot post usage reports.
    for (const c of spec.containers) {
      expect((c.env ?? []).map((e) => e.valueFrom?.secretKeyRef?.key).filter(Boolean)).to.have.members(['token', 'model-credential']);
      expect(c.envFrom ?? []).to.satisfy((from: { secretRef?: unknown }[]) => from.every((f) => !f.secretRef));
    }
    // The key is not optional: without the mirror the pod waits rather than start keyless.
    expect(keyVolume.secret!.optional).to.equal(undefined);
  });

  it('bounds each request by the longest model task deadline of its members’ templates (else the server’s)', () => {
    const retryOf = (members: { name: string; template: WorkerTemplate }[]): unknown => {
      const p = workerPod({ namespace: 'team-a', group: 'squad:team-a/crew', generateName: 'squad-crew-', members, modelProxy });
      return JSON.parse(p.spec!.initContainers![0].env!.find((e) => e.name === 'AGENTPLANE_MODEL_RETRY')!.value!);
    };
    const quick = { ...template, modelTaskDeadlineSeconds: 30 };
    const slow = { ...template, modelTaskDeadlineSeconds: 1200 };
    expect(retryOf([{ name: 'ada', template: quick }])).to.deep.equal({ maxRetries: 3, taskDeadlineMs: 30_000 });
    expect(
      retryOf([
        { name: 'ada', template: quick },
        { name: 'bob', template: slow },
      ]),
    ).to.deep.equal({ maxRetries: 3, taskDeadlineMs: 1_200_000 });
    // bob has the server's deadline, the 10 min default here.
    expect(
      retryOf([
        { name: 'ada', template: quick },
        { name: 'bob', template },
      ]),
    ).to.deep.equal({ maxRetries: 3, taskDeadlineMs: 600_000 });
  });

  it('is absent when the server’s proxy is used', () => {
    const plain = workerPod({ namespace: 'team-a', agent: 'ada', generateName: 'agent-ada-', members: [{ name: 'ada', template }] });
    expect(plain.spec!.initContainers).to.equal(undefined);
    expect(plain.spec!.volumes!.some((v) => v.secret)).to.equal(false);
  });
});

describe('Pod templates (template.yaml of a template ConfigMap)', () => {
  it('overrides the defaults field by field', () => {
    const t = parseTemplate('image: reg/worker:2\nresources: {limits: {cpu: "1"}}\nnodeSelector: {pool: agents}\nstorage: {size: 5Gi}\n', template);
    expect(t).to.deep.include({ image: 'reg/worker:2', imagePullPolicy: 'IfNotPresent', runAsUser: 10001, nodeSelector: { pool: 'agents' } });
    expect(t.storage).to.deep.equal({ size: '5Gi' });
    expect(t.resources).to.deep.equal({ limits: { cpu: '1' } });
    expect(parseTemplate('', template)).to.deep.equal(template);
    expect(parseTemplate('modelTaskDeadlineSeconds: 90', template).modelTaskDeadlineSeconds).to.equal(90);
  });

  it('refuses what would make pods that cannot start or run as root, naming the field', () => {
    expect(() => parseTemplate('imagePullPolicy: Sometimes', template)).to.throw(/imagePullPolicy must be one of/);
    expect(() => parseTemplate('runAsUser: 0', template)).to.throw(/runAsUser must be a positive integer/);
    expect(() => parseTemplate('privileged: true', template)).to.throw(/unknown field\(s\) privileged/);
    expect(() => parseTemplate('- a\n- b', template)).to.throw(/must be a mapping/);
    expect(() => parseTemplate('nodeSelector: {a: 1}', template)).to.throw(/nodeSelector.a must be a string/);
    expect(() => parseTemplate('modelTaskDeadlineSeconds: -5', template)).to.throw('modelTaskDeadlineSeconds must be a positive number of seconds, got -5');
  });

  it('reads a warm pool: its size per namespace, the namespaces, the role (default manager); refuses a bad one by field', () => {
    expect(parseTemplate('warmPool: {size: 2, namespaces: [team-a, team-b, team-a]}', template).warmPool).to.deep.equal({
      size: 2,
      namespaces: ['team-a', 'team-b'],
      role: 'manager',
    });
    expect(parseTemplate('warmPool: {size: 1, namespaces: [team-a], role: worker}', template).warmPool).to.deep.include({ role: 'worker' });
    expect(parseTemplate('warmPool: null', { ...template, warmPool: { size: 1, namespaces: ['x'], role: 'manager' } })).to.not.have.property('warmPool');
    expect(() => parseTemplate('warmPool: {size: 21, namespaces: [a]}', template)).to.throw('warmPool.size must be a whole number from 0 to 20');
    expect(() => parseTemplate('warmPool: {size: 1.5, namespaces: [a]}', template)).to.throw(/warmPool.size/);
    expect(() => parseTemplate('warmPool: {size: 1, namespaces: [Team_A]}', template)).to.throw('warmPool.namespaces must be a list of namespace names');
    expect(() => parseTemplate('warmPool: {size: 1, namespaces: a}', template)).to.throw(/warmPool.namespaces/);
    expect(() => parseTemplate('warmPool: {size: 1, namespaces: [a], role: admin}', template)).to.throw('warmPool.role must be one of manager, worker');
    expect(() => parseTemplate('warmPool: {size: 1, namespaces: [a], ttl: 5}', template)).to.throw(/warmPool: unknown field\(s\) ttl/);
  });
});

describe('Manager access', () => {
  it('mounts a token only for managers, bound to agentplane.io verbs of their own namespace', () => {
    const worker = workerPod({ namespace: 'team-a', agent: 'w', generateName: 'agent-w-', members: [{ name: 'w', template }] });
    expect(worker.spec!.automountServiceAccountToken).to.equal(false);
    expect(worker.spec!.serviceAccountName).to.equal(undefined);
    const manager = workerPod({ namespace: 'team-a', agent: 'm', generateName: 'agent-m-', members: [{ name: 'm', template, manager: true }] });
    expect(manager.spec).to.deep.include({ serviceAccountName: 'agentplane-manager', automountServiceAccountToken: true });

    const [account, role, binding] = managerAccess('team-a');
    expect(account.metadata).to.deep.include({ name: 'agentplane-manager', namespace: 'team-a' });
    expect(role.rules!.flatMap((r) => r.apiGroups)).to.deep.equal(['agentplane.io', 'agentplane.io', 'agentplane.io']);
    expect(role.rules!.flatMap((r) => r.resources)).to.not.include.members(['secrets', 'pods', '*']);
    expect(binding.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'agentplane-manager', namespace: 'team-a' }]);
    expect(binding.roleRef).to.deep.include({ kind: 'Role', name: 'agentplane-manager' });
  });
});
