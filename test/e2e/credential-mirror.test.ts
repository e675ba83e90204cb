// The credential-mirror plugin against a real etcd + kube-apiserver (hack/), with a real agents
// Registry and Informer (test/support/plugin-context.ts) and the plugin loaded as the service
// loads it: the model credential's Secret in the install namespace appears, rotated, repaired and
// removed in the namespaces that have agents; nothing it logs carries the value.

import { FINALIZER_AGENT_CLEANUP } from '../../pkg/api/deletion.js';
import { PassThrough } from 'node:stream';

import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { expect } from 'chai';

import { agentFromRequest } from '../../pkg/api/agent.js';
import { Controller } from '../../pkg/controller/framework/controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { type LoadedPlugins, loadPlugins } from '../../pkg/plugin/loader.js';
import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';
import { controlPlaneUp, restartApiserver, type ControlPlane } from '../support/control-plane.js';
import { type TestPluginContext, testPluginContext } from '../support/plugin-context.js';
import { until } from '../support/waiting.js';

const INSTALL = 'agentplane-system';
const NAME = 'agentplane-model';
const NAMESPACES = ['team-a', 'team-b', 'team-c', 'team-d', 'quiet'];
const MIRROR_LABELS = { 'app.kubernetes.io/managed-by': 'agentplane', 'agentplane.io/mirrored-from': INSTALL, 'agentplane.io/component': 'model-credential' };

const b64 = (v: string): string => Buffer.from(v, 'utf8').toString('base64');

describe('credential-mirror plugin on a real control plane (e2e)', function () {
  // A cold machine builds kube-apiserver and etcd first; afterwards start-up takes seconds.
  this.timeout(30 * 60_000);

  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;

  before(async () => {
    cp = await controlPlaneUp();
    kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    for (const ns of [INSTALL, ...NAMESPACES]) await cp.kubectl(['create', 'namespace', ns]);
  });

  after(async () => {
    await cp?.down();
  });

  describe('mirroring', function () {
    this.timeout(60_000);

    let ctx: TestPluginContext;
    let controllers: Controller[];
    let plugins: LoadedPlugins;
    /** Every line the plugin (and its controller) logged in this case. */
    let lines: string[];
    /** Every value the case put in the source: none may appear in `lines`. */
    let values: string[];

    beforeEach(async () => {
      controllers = [];
      lines = [];
      values = [];
      const out = new PassThrough();
      out.on('data', (b: Buffer) => lines.push(...b.toString('utf8').split('\n').filter(Boolean)));
      const logger = createLogger({ level: 'debug', destination: out });
      const starts: (() => Promise<void> | void)[] = [];
      ctx = testPluginContext({
        config: { dataDir: '/nonexistent', options: {} },
        provideEventStore: () => undefined,
        logger,
        controller: (spec) => {
          const c = new Controller({ ...spec, logger });
          controllers.push(c);
          return c;
        },
        onStart: (fn) => void starts.push(fn),
        cluster: { kubeConfig: kc, installNamespace: INSTALL },
      });
      plugins = await loadPlugins(['credential-mirror'], ctx, BUILTIN_PLUGINS);
      expect(controllers, 'credential-mirror makes one controller').to.have.length(1);
      // As the service starts them: controllers, then the start steps.
      await Promise.all(controllers.map((c) => c.start()));
      for (const fn of starts) await fn();
    });

    afterEach(async () => {
      controllers.forEach((c) => c.stop());
      ctx.informers.agents.stop();
      ctx.informers.squads.stop();
      await plugins.teardown();
      for (const ns of NAMESPACES) await core.deleteCollectionNamespacedSecret({ namespace: ns });
      await core.deleteNamespacedSecret({ namespace: INSTALL, name: NAME }).catch(() => undefined);
      // No line the plugin wrote holds a value, in clear or base64.
      const all = lines.join('\n');
      for (const v of values) {
        expect(all, 'a value in the log').to.not.contain(v);
        expect(all, 'a value (base64) in the log').to.not.contain(b64(v));
      }
    });

    const source = async (apiKey: string, baseUrl?: string): Promise<void> => {
      values.push(apiKey, ...(baseUrl ? [baseUrl] : []));
      const body: V1Secret = {
        metadata: { name: NAME, namespace: INSTALL },
        type: 'Opaque',
        stringData: { 'api-key': apiKey, ...(baseUrl ? { 'base-url': baseUrl } : {}) },
      };
      const cur = await core.readNamespacedSecret({ namespace: INSTALL, name: NAME }).catch(() => undefined);
      if (cur) await core.replaceNamespacedSecret({ namespace: INSTALL, name: NAME, body: { ...body, metadata: cur.metadata } });
      else await core.createNamespacedSecret({ namespace: INSTALL, body });
    };
    const agent = (ns: string, name: string): Promise<unknown> => ctx.registry.agents.create(agentFromRequest({ name, instructions: 'work' }, ns));
    /** Deleted for good, as the agent controller finishes a deletion. */
    const removeAgent = async (ns: string, name: string): Promise<void> => {
      await ctx.registry.agents.delete(ns, name);
      await ctx.registry.agents.removeFinalizer(ns, name, FINALIZER_AGENT_CLEANUP);
    };
    const mirror = (ns: string): Promise<V1Secret | undefined> => core.readNamespacedSecret({ namespace: ns, name: NAME }).catch(() => undefined);
    const mirrorHolds = async (ns: string, apiKey: string): Promise<boolean> => (await mirror(ns))?.data?.['api-key'] === b64(apiKey);
    const absent = async (ns: string): Promise<boolean> => !(await mirror(ns));
    const settle = (ms = 1500): Promise<void> => new Promise((r) => setTimeout(r, ms));

    it('mirrors the source into a namespace once it has an agent; none where there are no agents', async () => {
      await source('sk-ant-first-0a1b2c', 'https://gateway.example/anthropic');
      await settle();
      for (const ns of NAMESPACES) expect(await absent(ns), `${ns} before any agent`).to.equal(true);

      await agent('team-a', 'alpha');
      await until('the mirror in team-a', () => mirrorHolds('team-a', 'sk-ant-first-0a1b2c'), 10_000);
      const m = (await mirror('team-a'))!;
      expect(m.type).to.equal('Opaque');
      expect(m.metadata!.labels).to.deep.equal(MIRROR_LABELS);
      expect(m.data).to.deep.equal({ 'api-key': b64('sk-ant-first-0a1b2c'), 'base-url': b64('https://gateway.example/anthropic') });

      await settle();
      for (const ns of ['team-b', 'team-c', 'team-d', 'quiet']) expect(await absent(ns), ns).to.equal(true);
      // The source itself is never written.
      const src = await core.readNamespacedSecret({ namespace: INSTALL, name: NAME });
      expect(src.metadata!.labels ?? {}).to.not.have.property('agentplane.io/mirrored-from');
      expect(lines.some((l) => l.includes('mirror created') && l.includes('"namespace":"team-a"'))).to.equal(true);
    });

    it('brings a rotation of the source to every mirror within 10 s', async () => {
      await source('sk-ant-before-rotation-111');
      for (const ns of ['team-a', 'team-b', 'team-c']) await agent(ns, 'worker');
      for (const ns of ['team-a', 'team-b', 'team-c']) await until(`the mirror in ${ns}`, () => mirrorHolds(ns, 'sk-ant-before-rotation-111'), 10_000);

      const rotated = Date.now();
      await source('sk-ant-after-rotation-222', 'https://new-gateway.example');
      const reached: Record<string, number> = {};
      await until(
        'every mirror rotated',
        async () => {
          for (const ns of ['team-a', 'team-b', 'team-c']) {
            if (reached[ns] === undefined && (await mirrorHolds(ns, 'sk-ant-after-rotation-222'))) reached[ns] = Date.now() - rotated;
          }
          return Object.keys(reached).length === 3;
        },
        15_000,
      );
      const slowest = Math.max(...Object.values(reached));
      console.log(`      rotation reached every mirror in ${slowest} ms (${JSON.stringify(reached)})`);
      expect(slowest).to.be.below(10_000);
      expect((await mirror('team-b'))!.data).to.deep.equal({ 'api-key': b64('sk-ant-after-rotation-222'), 'base-url': b64('https://new-gateway.example') });
      // A key removed from the source goes from the mirrors too.
      await source('sk-ant-third-333');
      await until('the key removed', async () => JSON.stringify(Object.keys((await mirror('team-c'))?.data ?? {})) === '["api-key"]', 10_000);
    });

    it('repairs a mirror edited or deleted by hand', async () => {
      await source('sk-ant-repair-abc123');
      await agent('team-a', 'alpha');
      await until('the mirror', () => mirrorHolds('team-a', 'sk-ant-repair-abc123'), 10_000);

      // Data edited (and a key added) by hand.
      values.push('tampered-value');
      await core.patchNamespacedSecret({
        namespace: 'team-a',
        name: NAME,
        body: [
          { op: 'replace', path: '/data/api-key', value: b64('tampered-value') },
          { op: 'add', path: '/data/extra', value: b64('tampered-value') },
        ],
      });
      await until(
        'the edit undone',
        async () => JSON.stringify((await mirror('team-a'))?.data) === JSON.stringify({ 'api-key': b64('sk-ant-repair-abc123') }),
        10_000,
      );

      // One of its labels removed by hand (it still carries mirrored-from, so it is still ours).
      await core.patchNamespacedSecret({
        namespace: 'team-a',
        name: NAME,
        body: [{ op: 'remove', path: '/metadata/labels/agentplane.io~1component' }],
      });
      await until('the label restored', async () => (await mirror('team-a'))?.metadata?.labels?.['agentplane.io/component'] === 'model-credential', 10_000);

      // Deleted by hand.
      const before = (await mirror('team-a'))!.metadata!.uid;
      await core.deleteNamespacedSecret({ namespace: 'team-a', name: NAME });
      await until(
        'the mirror made again',
        async () => {
          const m = await mirror('team-a');
          return !!m && m.metadata!.uid !== before && m.data?.['api-key'] === b64('sk-ant-repair-abc123');
        },
        10_000,
      );
      expect(lines.filter((l) => l.includes('mirror updated')).length).to.be.at.least(2);
    });

    it('keeps the mirror while the namespace has an agent, removes it when the last one is gone', async () => {
      await source('sk-ant-lifecycle-5150');
      await agent('team-a', 'one');
      await agent('team-a', 'two');
      await agent('team-b', 'other');
      await until('the mirrors', async () => (await mirrorHolds('team-a', 'sk-ant-lifecycle-5150')) && mirrorHolds('team-b', 'sk-ant-lifecycle-5150'), 10_000);

      await removeAgent('team-a', 'one');
      // Being deleted is not gone: its worker may still run and need the credential.
      await ctx.registry.agents.delete('team-a', 'two');
      await settle();
      expect(await mirrorHolds('team-a', 'sk-ant-lifecycle-5150'), 'kept while an agent remains').to.equal(true);

      await ctx.registry.agents.removeFinalizer('team-a', 'two', FINALIZER_AGENT_CLEANUP);
      await until('the mirror in team-a removed', () => absent('team-a'), 10_000);
      expect(await mirrorHolds('team-b', 'sk-ant-lifecycle-5150'), 'team-b still has its agent').to.equal(true);
      // The line follows the DELETE's answer, so it may land just after the Secret is seen gone.
      await until('the removal logged', () => lines.some((l) => l.includes('mirror removed') && l.includes('no agents left')), 5_000);

      // An agent again: the mirror again.
      await agent('team-a', 'three');
      await until('the mirror back in team-a', () => mirrorHolds('team-a', 'sk-ant-lifecycle-5150'), 10_000);
    });

    it('removes every mirror when the source is deleted, and mirrors again when it returns', async () => {
      await source('sk-ant-going-away-777');
      for (const ns of ['team-a', 'team-b']) await agent(ns, 'worker');
      for (const ns of ['team-a', 'team-b']) await until(`the mirror in ${ns}`, () => mirrorHolds(ns, 'sk-ant-going-away-777'), 10_000);

      await core.deleteNamespacedSecret({ namespace: INSTALL, name: NAME });
      for (const ns of ['team-a', 'team-b']) await until(`the mirror in ${ns} removed`, () => absent(ns), 10_000);
      await until('the removal logged', () => lines.some((l) => l.includes('mirror removed') && l.includes('the source was deleted')), 5_000);

      await source('sk-ant-came-back-888');
      for (const ns of ['team-a', 'team-b']) await until(`the mirror in ${ns} again`, () => mirrorHolds(ns, 'sk-ant-came-back-888'), 10_000);
    });

    it('never overwrites or deletes a Secret of that name it did not make, and says so', async () => {
      values.push('someone-elses-value');
      await core.createNamespacedSecret({
        namespace: 'team-d',
        body: { metadata: { name: NAME }, type: 'Opaque', stringData: { 'api-key': 'someone-elses-value' } },
      });
      const theirs = (await mirror('team-d'))!;
      await source('sk-ant-not-yours-999');
      await agent('team-d', 'delta');
      await agent('team-a', 'alpha');
      await until('the mirror in team-a', () => mirrorHolds('team-a', 'sk-ant-not-yours-999'), 10_000);
      await until('the warning', () => lines.some((l) => l.includes('"namespace":"team-d"') && l.includes('did not make')), 10_000);
      await removeAgent('team-d', 'delta');
      await core.deleteNamespacedSecret({ namespace: INSTALL, name: NAME });
      await until('the mirror in team-a removed', () => absent('team-a'), 10_000);
      const after = (await mirror('team-d'))!;
      expect(after.metadata!.resourceVersion).to.equal(theirs.metadata!.resourceVersion);
      expect(after.data).to.deep.equal({ 'api-key': b64('someone-elses-value') });
    });

    it("removes a mirror left under an earlier secretName; leaves another installation's mirrors alone", async () => {
      const labelled = (name: string, from: string): V1Secret => ({
        metadata: { name, labels: { ...MIRROR_LABELS, 'agentplane.io/mirrored-from': from } },
        type: 'Opaque',
        data: { 'api-key': b64('sk-ant-older-name') },
      });
      values.push('sk-ant-older-name');
      await source('sk-ant-current-name');
      await agent('team-a', 'alpha');
      await until('the mirror', () => mirrorHolds('team-a', 'sk-ant-current-name'), 10_000);
      await core.createNamespacedSecret({ namespace: 'team-a', body: labelled('their-model', 'other-install') });
      await core.createNamespacedSecret({ namespace: 'team-a', body: labelled('old-model', INSTALL) });
      await until(
        'the old mirror removed',
        async () => !(await core.readNamespacedSecret({ namespace: 'team-a', name: 'old-model' }).catch(() => undefined)),
        10_000,
      );
      await until('the removal logged', () => lines.some((l) => l.includes('"secret":"old-model"') && l.includes('left under another name')), 5_000);
      expect((await core.readNamespacedSecret({ namespace: 'team-a', name: 'their-model' })).data).to.deep.equal({ 'api-key': b64('sk-ant-older-name') });
    });

    it('keeps mirroring across a restart of kube-apiserver (its watches resume)', async () => {
      await source('sk-ant-before-restart-42');
      await agent('team-a', 'alpha');
      await until('the mirror', () => mirrorHolds('team-a', 'sk-ant-before-restart-42'), 10_000);
      await restartApiserver(cp, kc.getCurrentCluster()!.server);
      const back = Date.now();
      await source('sk-ant-after-restart-43');
      await until('the rotation after the restart', () => mirrorHolds('team-a', 'sk-ant-after-restart-43'), 30_000);
      console.log(`      rotation after the restart reached the mirror in ${Date.now() - back} ms`);
      await core.deleteNamespacedSecret({ namespace: 'team-a', name: NAME });
      await until('the mirror repaired after the restart', () => mirrorHolds('team-a', 'sk-ant-after-restart-43'), 30_000);
    });

    it('logs names and keys only: no value, in clear or base64, in any line (rotations, repairs, removals)', async () => {
      const key = 'sk-ant-api03-LOGCHECK-d41d8cd98f00b204e9800998ecf8427e';
      await source(key, 'https://secret-gateway.example/v1?token=LOGCHECK-URL-TOKEN');
      await agent('team-a', 'alpha');
      await agent('team-b', 'beta');
      await until('the mirrors', async () => (await mirrorHolds('team-a', key)) && mirrorHolds('team-b', key), 10_000);
      await source(key + '-rotated');
      await until('the rotation', () => mirrorHolds('team-b', key + '-rotated'), 10_000);
      await core.deleteNamespacedSecret({ namespace: 'team-b', name: NAME });
      await until('the repair', () => mirrorHolds('team-b', key + '-rotated'), 10_000);
      await removeAgent('team-a', 'alpha');
      await until('the removal', () => absent('team-a'), 10_000);
      await core.deleteNamespacedSecret({ namespace: INSTALL, name: NAME });
      await until('all removed', () => absent('team-b'), 10_000);
      // The plugin did speak (so the check below checks something), naming what it did.
      await until('five lines', () => lines.filter((l) => /mirror (created|updated|removed)/.test(l)).length >= 5, 5_000);
      const all = lines.join('\n');
      for (const v of ['LOGCHECK', 'd41d8cd98f00b204e9800998ecf8427e', b64(key).slice(0, 24), b64(key + '-rotated').slice(0, 24)]) {
        expect(all).to.not.contain(v);
      }
      expect(lines.some((l) => l.includes('"keys":["api-key","base-url"]'))).to.equal(true);
    });
  });
});
