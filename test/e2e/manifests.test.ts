// manifests/ on a real control plane: the kustomization passes a server-side dry run, and once
// applied, the RBAC means what docs/auth.md says (checked with SubjectAccessReviews).

import { join } from 'node:path';

import { loadAllYaml } from '@kubernetes/client-node';
import { expect } from 'chai';

import { type ControlPlane, controlPlaneUp, REPO } from '../support/control-plane.js';

const MANIFESTS = join(REPO, 'manifests');
const SERVER_SA = 'system:serviceaccount:agentplane-system:agentplane';

describe('e2e: manifests/', function () {
  this.timeout(120_000);

  let cp: ControlPlane;

  before(async function () {
    this.timeout(30 * 60_000); // a first run builds kube-apiserver
    cp = await controlPlaneUp();
  });

  after(async () => {
    await cp?.down();
  });

  /** Whether `user` (in `groups`) may do it, by a SubjectAccessReview as the admin. */
  async function allowed(user: string, groups: string[], attrs: Record<string, string>): Promise<boolean> {
    const isResource = !('path' in attrs);
    const review = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, groups, ...(isResource ? { resourceAttributes: attrs } : { nonResourceAttributes: attrs }) },
    };
    const res = await cp.kubectl(['create', '-f', '-', '-o', 'json'], { input: JSON.stringify(review) });
    return JSON.parse(res.stdout).status.allowed === true;
  }

  it('passes kubectl apply --dry-run=server -k manifests/', async () => {
    // A server-side dry run persists nothing, so the namespaced objects would find no
    // agentplane-system namespace on a fresh cluster: create that one for real first.
    await cp.kubectl(['apply', '-f', join(MANIFESTS, 'namespace.yaml')]);
    const res = await cp.kubectl(['apply', '--dry-run=server', '-k', MANIFESTS]);
    for (const kind of [
      'customresourcedefinition.apiextensions.k8s.io/agentrecords.internal.agentplane.io',
      'serviceaccount/agentplane',
      'deployment.apps/agentplane',
      'service/agentplane',
      'apiservice.apiregistration.k8s.io/v1alpha1.agentplane.io',
      'clusterrole.rbac.authorization.k8s.io/agentplane-view',
      'clusterrole.rbac.authorization.k8s.io/agentplane-edit',
      'clusterrole.rbac.authorization.k8s.io/agentplane-admin',
      'rolebinding.rbac.authorization.k8s.io/agentplane:extension-apiserver-authentication-reader',
      'clusterrolebinding.rbac.authorization.k8s.io/agentplane:system:auth-delegator',
      'poddisruptionbudget.policy/agentplane',
      'role.rbac.authorization.k8s.io/agentplane:leader-election',
    ]) {
      expect(res.stdout, kind).to.contain(`${kind} `);
    }
  });

  it('runs two replicas with leader election, a PodDisruptionBudget, readiness and the Redis settings', async () => {
    const rendered = await kustomized(MANIFESTS);
    const deployment = rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === 'agentplane');
    expect(deployment.spec.replicas).to.equal(2);
    const c = deployment.spec.template.spec.containers[0];
    expect(c.args).to.include('--leader-elect');
    expect(c.args.find((a: string) => a.startsWith('--plugins='))).to.contain('event-store-redis');
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e]));
    expect(env.POD_NAME.valueFrom.fieldRef.fieldPath).to.equal('metadata.name');
    expect(env.AGENTPLANE_REDIS_URL.value).to.match(/^rediss?:\/\//);
    expect(env.AGENTPLANE_REDIS_PASSWORD.valueFrom.secretKeyRef).to.deep.include({ name: 'agentplane-redis', key: 'password' });
    expect(c.readinessProbe.httpGet.path).to.equal('/readyz');
    const pdb = rendered.find((o) => o.kind === 'PodDisruptionBudget');
    expect(pdb.spec.minAvailable).to.equal(1);
    expect(pdb.spec.selector.matchLabels).to.deep.equal(deployment.spec.selector.matchLabels);
  });

  it('offers an optional Redis that passes a server-side dry run', async () => {
    await cp.kubectl(['apply', '-f', join(MANIFESTS, 'namespace.yaml')]);
    const res = await cp.kubectl(['apply', '--dry-run=server', '-k', join(MANIFESTS, 'optional/redis')]);
    expect(res.stdout).to.contain('service/agentplane-redis ');
    expect(res.stdout).to.contain('statefulset.apps/agentplane-redis ');
    const [sts] = (await kustomized(join(MANIFESTS, 'optional/redis'))).filter((o) => o.kind === 'StatefulSet');
    // The same Secret and key the agentplane Deployment reads; no Redis without a password.
    const ref = sts.spec.template.spec.containers[0].env.find((e: any) => e.name === 'REDIS_PASSWORD').valueFrom.secretKeyRef;
    expect(ref).to.deep.equal({ name: 'agentplane-redis', key: 'password' });
  });

  /** The objects a kustomization renders, as `kubectl kustomize` prints them. */
  async function kustomized(dir: string): Promise<any[]> {
    return loadAllYaml((await cp.kubectl(['kustomize', dir])).stdout);
  }

  describe('applied', () => {
    before(async () => {
      await cp.kubectl(['apply', '-k', MANIFESTS]);
    });

    it('lets the server delegate: read the authentication ConfigMap, review tokens and access', async () => {
      const groups = ['system:serviceaccounts', 'system:serviceaccounts:agentplane-system', 'system:authenticated'];
      const may = (attrs: Record<string, string>) => allowed(SERVER_SA, groups, attrs);
      expect(await may({ verb: 'get', resource: 'configmaps', namespace: 'kube-system', name: 'extension-apiserver-authentication' })).to.equal(true);
      expect(await may({ verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' })).to.equal(true);
      expect(await may({ verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' })).to.equal(true);
      expect(await may({ verb: 'watch', group: 'internal.agentplane.io', resource: 'agentrecords', namespace: 'team-a' })).to.equal(true);
      expect(await may({ verb: 'create', resource: 'pods', namespace: 'team-a' })).to.equal(true);
      expect(await may({ verb: 'list', resource: 'namespaces' })).to.equal(true);
      expect(await may({ verb: 'delete', resource: 'namespaces', name: 'team-a' })).to.equal(false);
      expect(await may({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' })).to.equal(false);
      expect(await may({ verb: 'update', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: 'foos.example.com' })).to.equal(false);
      expect(
        await may({ verb: 'update', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: 'agentrecords.internal.agentplane.io' }),
      ).to.equal(true);
      // Leader election: its own Lease in its namespace, no other.
      const lease = (verb: string, namespace: string, name?: string) =>
        may({ verb, group: 'coordination.k8s.io', resource: 'leases', namespace, ...(name ? { name } : {}) });
      expect(await lease('create', 'agentplane-system')).to.equal(true);
      expect(await lease('get', 'agentplane-system', 'agentplane')).to.equal(true);
      expect(await lease('update', 'agentplane-system', 'agentplane')).to.equal(true);
      expect(await lease('watch', 'agentplane-system', 'agentplane')).to.equal(true);
      expect(await lease('watch', 'agentplane-system', 'kube-scheduler')).to.equal(false);
      expect(await lease('update', 'agentplane-system', 'kube-scheduler')).to.equal(false);
      expect(await lease('update', 'kube-system', 'agentplane')).to.equal(false);
    });

    it('makes agentplane-view read-only and agentplane-edit able to write', async () => {
      await cp.kubectl(['create', 'rolebinding', 'viewer', '-n', 'default', '--clusterrole=agentplane-view', '--user=vera']);
      await cp.kubectl(['create', 'rolebinding', 'editor', '-n', 'default', '--clusterrole=agentplane-edit', '--user=ed']);
      const on = (verb: string, resource: string, subresource = '') => ({
        verb,
        group: 'agentplane.io',
        resource,
        namespace: 'default',
        ...(subresource ? { subresource } : {}),
      });
      const vera = (a: Record<string, string>) => allowed('vera', ['system:authenticated'], a);
      const ed = (a: Record<string, string>) => allowed('ed', ['system:authenticated'], a);

      expect(await vera(on('list', 'agents'))).to.equal(true);
      expect(await vera(on('get', 'agents', 'log'))).to.equal(true);
      expect(await vera(on('create', 'agents'))).to.equal(false);
      expect(await vera(on('create', 'agents', 'cancel'))).to.equal(false);
      expect(await ed(on('create', 'agents'))).to.equal(true);
      expect(await ed(on('update', 'squads'))).to.equal(true);
      expect(await ed(on('create', 'agents', 'cancel'))).to.equal(true);
      expect(await ed(on('update', 'agents', 'status'))).to.equal(false);
      expect(await ed({ ...on('list', 'agents'), namespace: 'kube-system' })).to.equal(false);
      // Skills and memories: read by view, written by edit (docs/skills-and-memories.md).
      for (const r of ['skills', 'memories']) {
        expect(await vera(on('get', r)), r).to.equal(true);
        expect(await vera(on('watch', r)), r).to.equal(true);
        expect(await vera(on('update', r)), r).to.equal(false);
        expect(await ed(on('create', r)), r).to.equal(true);
        expect(await ed(on('delete', r)), r).to.equal(true);
      }
    });
  });
});
