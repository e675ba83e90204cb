// The credential-mirror plugin's set-up, without a cluster: it refuses the embedded home (no
// `cluster` in the context) and options it does not understand, each with a message saying what
// to do. Its mirroring runs against a real control plane in test/e2e/credential-mirror.test.ts.

import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';

import { loadPlugins, PluginError } from '../../pkg/plugin/loader.js';
import type { PluginContext } from '../../pkg/plugin/types.js';
import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';
import { credentialMirrorOptions } from '../../plugins/credential-mirror/index.js';
import { rejection } from '../support/assert.js';
import { testPluginContext } from '../support/plugin-context.js';

const context = (options: Record<string, unknown> = {}, cluster = true): PluginContext => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return testPluginContext({
    config: { dataDir: '/nonexistent', options },
    provideEventStore: () => undefined,
    ...(cluster ? { cluster: { kubeConfig, installNamespace: 'agentplane-system' } } : {}),
  });
};

describe('credential-mirror plugin set-up', () => {
  it('refuses the embedded home (no cluster in the context), saying why and what to do', async () => {
    const err = await rejection(loadPlugins(['credential-mirror'], context({}, false), BUILTIN_PLUGINS), PluginError);
    expect(err.message).to.contain('plugin "credential-mirror"').and.to.contain('--mode kubernetes').and.to.contain('--plugins');
  });

  it('defaults secretName to agentplane-model and takes another one', () => {
    expect(credentialMirrorOptions(context())).to.deep.equal({ secretName: 'agentplane-model' });
    expect(credentialMirrorOptions(context({ 'credential-mirror': {} }))).to.deep.equal({ secretName: 'agentplane-model' });
    expect(credentialMirrorOptions(context({ 'credential-mirror': { secretName: 'model.key-2' } }))).to.deep.equal({ secretName: 'model.key-2' });
  });

  it('refuses options it does not understand, naming them', async () => {
    for (const [options, words] of [
      [{ 'credential-mirror': 'agentplane-model' }, 'must be an object'],
      [{ 'credential-mirror': { secretname: 'x' } }, 'unknown option(s) "secretname"; known: secretName'],
      [{ 'credential-mirror': { secretName: 'Model_Key' } }, 'option secretName must be a Secret name'],
      [{ 'credential-mirror': { secretName: 7 } }, 'option secretName must be a Secret name'],
    ] as const) {
      const err = await rejection(loadPlugins(['credential-mirror'], context(options as Record<string, unknown>), BUILTIN_PLUGINS), PluginError);
      expect(err.message).to.contain(words);
    }
  });

  it('sets up without touching the cluster until the service starts, and tears down', async () => {
    const loaded = await loadPlugins(['credential-mirror'], context(), BUILTIN_PLUGINS);
    expect(loaded.names).to.deep.equal(['credential-mirror']);
    await loaded.teardown();
  });
});
