// The cluster home's secret store against a real etcd + kube-apiserver (hack/): the conformance
// suite the file store passes, then what only Kubernetes Secrets have: the Secret's shape
// (type, labels, the binding annotation, values base64 in `data`), Secrets agentplane does not
// own (invisible, never overwritten or deleted), a binding edited by hand, missing namespaces.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { expect } from 'chai';

import { kubernetesHome } from '../../cmd/agentplane/homes.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { FileSecretStore } from '../../pkg/registry/secrets/file-secret-store.js';

import { ApiError } from '../../pkg/api/errors.js';
import {
  ALLOWED_URLS_ANNOTATION,
  COMPONENT_LABEL,
  CONNECTOR_SECRET_SELECTOR,
  KubernetesSecretStore,
  MANAGED_BY_LABEL,
} from '../../pkg/registry/secrets/kubernetes-secret-store.js';
import { SECRET_STORE_NAMESPACES, secretStoreConformance } from '../conformance/secret-store.js';
import { rejection } from '../support/assert.js';
import { controlPlaneUp, type ControlPlane } from '../support/control-plane.js';

const VALUE = 'sk-live-kube-9f8e7d6c5b4a';

describe('KubernetesSecretStore on a real control plane (e2e)', function () {
  // A cold machine builds kube-apiserver and etcd first; afterwards start-up takes seconds.
  this.timeout(30 * 60_000);

  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;

  /** Removes every Secret the cases made: agentplane's (by label) and the foreign ones. */
  async function clean(): Promise<void> {
    for (const ns of [...SECRET_STORE_NAMESPACES, 'other']) {
      await core.deleteCollectionNamespacedSecret({ namespace: ns, labelSelector: CONNECTOR_SECRET_SELECTOR });
      await core.deleteCollectionNamespacedSecret({ namespace: ns, labelSelector: 'e2e=foreign' });
    }
  }

  before(async () => {
    cp = await controlPlaneUp();
    kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    for (const ns of [...SECRET_STORE_NAMESPACES, 'other']) {
      if (ns !== 'default') await cp.kubectl(['create', 'namespace', ns]);
    }
  });

  after(async () => {
    await cp?.down();
  });

  secretStoreConformance('KubernetesSecretStore', async () => ({ store: new KubernetesSecretStore(kc), cleanup: clean }));

  describe('beyond the conformance suite', function () {
    this.timeout(60_000);
    let store: KubernetesSecretStore;
    beforeEach(() => {
      store = new KubernetesSecretStore(kc);
    });
    afterEach(clean);

    const read = (ns: string, name: string): Promise<V1Secret> => core.readNamespacedSecret({ namespace: ns, name });
    const foreign = (ns: string, name: string, data: Record<string, string>, labels: Record<string, string> = {}, type = 'Opaque'): Promise<V1Secret> =>
      core.createNamespacedSecret({ namespace: ns, body: { metadata: { name, labels: { e2e: 'foreign', ...labels } }, type, stringData: data } });

    it('is a Secret of type Opaque, labelled, its binding in an annotation and its values base64 in data', async () => {
      const meta = await store.put('team', 'github', { token: VALUE, other: 'x' }, ['https://a.example:443/api']);
      const s = await read('team', 'github');
      expect(s.type).to.equal('Opaque');
      expect(s.metadata!.labels).to.deep.include({ [MANAGED_BY_LABEL]: 'agentplane', [COMPONENT_LABEL]: 'connector-secret' });
      expect(JSON.parse(s.metadata!.annotations![ALLOWED_URLS_ANNOTATION])).to.deep.equal(['https://a.example:443/api']);
      // Kubernetes' own encoding: base64 of the value, no stringData, the value nowhere else.
      expect(s.data).to.deep.equal({ token: Buffer.from(VALUE).toString('base64'), other: Buffer.from('x').toString('base64') });
      expect(s.stringData).to.equal(undefined);
      expect(JSON.stringify({ ...s, data: undefined })).to.not.contain(VALUE);
      // createdAt is the Secret's creationTimestamp, kept by replace and binding.
      expect(meta.createdAt).to.equal(new Date(s.metadata!.creationTimestamp!).toISOString());
      await store.replace('team', 'github', { token: 'new' });
      await store.bindIfUnbound('team', 'github', 'https://b.example:443');
      expect((await store.get('team', 'github'))!.createdAt).to.equal(meta.createdAt);
      // Labels and annotations others put on it survive a replace.
      await core.patchNamespacedSecret({ namespace: 'team', name: 'github', body: [{ op: 'add', path: '/metadata/labels/team', value: 'red' }] });
      await store.replace('team', 'github', { token: 'newer' });
      expect((await read('team', 'github')).metadata!.labels!.team).to.equal('red');
    });

    it('never shows, overwrites or deletes a Secret agentplane does not own', async () => {
      await foreign('team', 'db-password', { password: VALUE });
      // Labelled by agentplane, but another component's (a mirrored model credential, say).
      await foreign('team', 'agentplane-model', { 'api-key': VALUE }, { [MANAGED_BY_LABEL]: 'agentplane', 'agentplane.io/mirrored-from': 'agentplane-system' });
      // The right labels, a type agentplane never makes.
      await foreign(
        'team',
        'docker',
        { username: 'u', password: VALUE },
        { [MANAGED_BY_LABEL]: 'agentplane', [COMPONENT_LABEL]: 'connector-secret' },
        'kubernetes.io/basic-auth',
      );
      const before = await Promise.all(['db-password', 'agentplane-model', 'docker'].map((n) => read('team', n)));

      expect(await store.list()).to.deep.equal([]);
      expect(await store.list('team')).to.deep.equal([]);
      for (const name of ['db-password', 'agentplane-model', 'docker']) {
        expect(await store.get('team', name), name).to.equal(undefined);
        const onPut = await rejection(store.put('team', name, { password: 'mine' }), ApiError);
        expect(onPut.reason).to.equal('AlreadyExists');
        expect(onPut.code).to.equal(409);
        expect(onPut.message).to.contain('not an agentplane connector secret').and.to.contain('never overwrites or deletes');
        expect(onPut.message).to.not.contain(VALUE);
        const onReplace = await rejection(store.replace('team', name, { password: 'mine' }), ApiError);
        expect(onReplace.reason).to.equal('AlreadyExists');
        expect(onReplace.message).to.contain('never overwrites');
        expect(await store.bindIfUnbound('team', name, 'https://evil.example:443')).to.equal(undefined);
        expect(await store.delete('team', name)).to.equal(undefined);
      }
      const after = await Promise.all(['db-password', 'agentplane-model', 'docker'].map((n) => read('team', n)));
      for (let i = 0; i < after.length; i++) {
        expect(after[i].metadata!.resourceVersion, after[i].metadata!.name).to.equal(before[i].metadata!.resourceVersion);
        expect(after[i].data).to.deep.equal(before[i].data);
      }
    });

    it("leaves a Secret whose agentplane label was removed by hand: it is no longer agentplane's", async () => {
      await store.put('team', 'tok', { token: VALUE });
      // Someone takes the Secret over (removes agentplane's label): from then on it is not ours.
      await core.patchNamespacedSecret({
        namespace: 'team',
        name: 'tok',
        body: [{ op: 'remove', path: `/metadata/labels/${COMPONENT_LABEL.replace('/', '~1')}` }],
      });
      expect(await store.delete('team', 'tok')).to.equal(undefined);
      expect((await read('team', 'tok')).data!.token).to.equal(Buffer.from(VALUE).toString('base64'));
      await core.deleteNamespacedSecret({ namespace: 'team', name: 'tok' });
    });

    it('a binding edited by hand into something else: get fails naming the secret, list leaves it out, bind refuses, replace repairs', async () => {
      await store.put('team', 'tok', { token: VALUE }, ['https://a.example:443']);
      await core.patchNamespacedSecret({
        namespace: 'team',
        name: 'tok',
        body: [{ op: 'replace', path: `/metadata/annotations/${ALLOWED_URLS_ANNOTATION.replace('/', '~1')}`, value: 'https://evil.example' }],
      });
      const err = await rejection(store.get('team', 'tok'), Error);
      expect(err.message).to.contain('team/tok').and.to.contain(ALLOWED_URLS_ANNOTATION).and.not.contain(VALUE);
      expect(await store.list('team')).to.deep.equal([]);
      await rejection(store.bindIfUnbound('team', 'tok', 'https://evil.example:443'), Error);
      expect((await store.replace('team', 'tok', { token: 'fixed' }, ['https://a.example:443'])).created).to.equal(false);
      expect(await store.get('team', 'tok')).to.deep.include({ data: { token: 'fixed' }, allowedUrls: ['https://a.example:443'] });
    });

    it('answers 404 NotFound naming a namespace that does not exist', async () => {
      for (const p of [store.put('nowhere', 'tok', { token: VALUE }), store.replace('nowhere', 'tok', { token: VALUE })]) {
        const err = await rejection(p, ApiError);
        expect(err.code).to.equal(404);
        expect(err.message).to.contain('namespace "nowhere"').and.not.contain(VALUE);
      }
    });

    it('reports what Kubernetes refuses as the project error, without the value', async () => {
      // Kubernetes keeps at most 1 MiB of data per Secret.
      const big = VALUE + 'x'.repeat(1_100_000);
      const err = await rejection(store.put('team', 'huge', { token: big }), ApiError);
      expect(err.reason).to.equal('Invalid');
      expect(err.code).to.equal(400);
      expect(err.message).to.not.contain(VALUE);
      expect(JSON.stringify(err.details)).to.not.contain(VALUE);
      expect(await store.get('team', 'huge')).to.equal(undefined);
    });

    it("is the cluster home's secret store; secret files an earlier version left are named in a warning, never read", async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-home-'));
      const key = randomBytes(32);
      await new FileSecretStore(join(dataDir, 'secrets'), key).put('team', 'old-file', { token: VALUE });
      const out = new PassThrough();
      const lines: string[] = [];
      out.on('data', (b: Buffer) => lines.push(...b.toString('utf8').split('\n').filter(Boolean)));
      const home = await kubernetesHome(
        { kubeconfig: cp.kubeconfig, tls: { key: Buffer.alloc(0), cert: Buffer.alloc(0) } },
        dataDir,
        key,
        createLogger({ destination: out }),
      );
      try {
        expect(home.secrets).to.be.instanceOf(KubernetesSecretStore);
        expect(home.cluster!.installNamespace).to.equal(process.env.POD_NAMESPACE || 'agentplane-system');
        expect(home.cluster!.kubeConfig.getCurrentCluster()!.server).to.equal(kc.getCurrentCluster()!.server);
        await home.secrets.put('team', 'via-home', { token: VALUE });
        expect((await read('team', 'via-home')).metadata!.labels![COMPONENT_LABEL]).to.equal('connector-secret');
        expect(await home.secrets.get('team', 'old-file')).to.equal(undefined);
        const warning = lines.map((l) => JSON.parse(l) as { msg: string; secrets?: string[] }).find((l) => l.msg.includes('not used in the cluster home'));
        expect(warning?.secrets).to.deep.equal(['team/old-file']);
        expect(lines.join('\n')).to.not.contain(VALUE);
      } finally {
        home.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it('reports an unreachable API server as ServiceUnavailable', async () => {
      const dead = new KubeConfig();
      dead.loadFromOptions({
        clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const err = await rejection(new KubernetesSecretStore(dead).get('team', 'tok'), ApiError);
      expect(err.reason).to.equal('ServiceUnavailable');
      expect(err.code).to.equal(503);
    });
  });
});
