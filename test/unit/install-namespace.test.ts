// Where the cluster home looks for its install namespace (the model credential's Secret lives
// there): the option, $POD_NAMESPACE, the pod's service account, the kubeconfig, the default.

import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';

import { DEFAULT_INSTALL_NAMESPACE, installNamespaceOf } from '../../cmd/agentplane/homes.js';

const kubeConfig = (namespace?: string): KubeConfig => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u', ...(namespace ? { namespace } : {}) }],
    currentContext: 'x',
  });
  return kc;
};

describe('installNamespaceOf', () => {
  it('takes the option first, then $POD_NAMESPACE, then the kubeconfig context, then the default', () => {
    const file = { kubeconfig: '/some/kubeconfig' };
    expect(installNamespaceOf({ ...file, installNamespace: 'opt' }, kubeConfig('ctx'), { POD_NAMESPACE: 'pod' })).to.equal('opt');
    expect(installNamespaceOf(file, kubeConfig('ctx'), { POD_NAMESPACE: 'pod' })).to.equal('pod');
    expect(installNamespaceOf(file, kubeConfig('ctx'), {})).to.equal('ctx');
    expect(installNamespaceOf(file, kubeConfig(), {})).to.equal(DEFAULT_INSTALL_NAMESPACE);
    expect(DEFAULT_INSTALL_NAMESPACE).to.equal('agentplane-system');
  });
});
