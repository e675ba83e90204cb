// The cluster home's checkpoint copy pod as a value (docs/kubernetes-runtime.md "Checkpoints"):
// confined as agent pods are, the source read-only, and a NetworkPolicy that lets nothing in or
// out. What it copies is checked on a real node by test/pods/checkpoints.test.ts.

import { expect } from 'chai';

import { copyPod, copyPodPolicy, parseCopyReport } from '../../pkg/runtime/kubernetes/copy-pod.js';

const who = { image: 'agentplane/worker:test', imagePullPolicy: 'Never', runAsUser: 10001, runAsGroup: 10001 };

describe('Kubernetes checkpoint copy pod', () => {
  it('runs confined: no token, non-root, no capabilities, read-only root, the source mounted read-only', () => {
    const pod = copyPod(
      { namespace: 'team-a', from: 'agent-ada-workspace', to: 'checkpoint-ada.first', who, purpose: 'checkpoint team-a/ada.first' },
      'bcdfghjk',
    );
    expect(pod.metadata?.name).to.equal('checkpoint-copy-bcdfghjk');
    expect(pod.metadata?.labels).to.include({ 'agentplane.io/component': 'checkpoint-copy', 'agentplane.io/pod-id': 'bcdfghjk' });
    // Not an agent's: removing an agent or listing its workers never meets a copy pod.
    expect(pod.metadata?.labels).to.not.have.property('agentplane.io/agent');
    const spec = pod.spec!;
    expect(spec).to.deep.include({ restartPolicy: 'Never', automountServiceAccountToken: false, enableServiceLinks: false });
    expect(spec.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } });
    const [c] = spec.containers;
    expect(c.securityContext).to.deep.include({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.image).to.equal('agentplane/worker:test');
    expect(c.volumeMounts).to.deep.equal([
      { name: 'from', mountPath: '/from', readOnly: true },
      { name: 'to', mountPath: '/to' },
    ]);
    expect(spec.volumes).to.deep.equal([
      { name: 'from', persistentVolumeClaim: { claimName: 'agent-ada-workspace', readOnly: true } },
      { name: 'to', persistentVolumeClaim: { claimName: 'checkpoint-ada.first' } },
    ]);
  });

  it('copies an agent that never ran (no claim yet) as an empty workspace: no source mount', () => {
    const pod = copyPod({ namespace: 'team-a', to: 'checkpoint-ada.first', who, purpose: 'p' }, 'bcdfghjk');
    expect(pod.spec!.volumes!.map((v) => v.name)).to.deep.equal(['to']);
    expect(pod.spec!.containers[0].volumeMounts!.map((m) => m.mountPath)).to.deep.equal(['/to']);
  });

  it('gets a NetworkPolicy selecting only it, with no ingress and no egress at all', () => {
    const pod = copyPod({ namespace: 'team-a', to: 'x', who, purpose: 'p' }, 'bcdfghjk');
    const policy = copyPodPolicy(pod);
    expect(policy.metadata).to.deep.include({ name: 'checkpoint-copy-bcdfghjk', namespace: 'team-a' });
    expect(policy.spec).to.deep.equal({
      podSelector: { matchLabels: { 'agentplane.io/pod-id': 'bcdfghjk' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [],
    });
  });

  it("reads the pod's report: the bytes copied and the session written last", () => {
    expect(parseCopyReport('2048 0b6f3c1e-8d4a-4c55-9a0e-2f1d9c3b7a10\n')).to.deep.equal({ bytes: 2048, sessionId: '0b6f3c1e-8d4a-4c55-9a0e-2f1d9c3b7a10' });
    expect(parseCopyReport('0 none\n')).to.deep.equal({ bytes: 0 });
    expect(parseCopyReport(undefined)).to.deep.equal({ bytes: 0 });
  });
});
