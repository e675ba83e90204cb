// Wiring for the cluster home: authenticator + authorizer talking to the cluster through one
// KubeConfig (in a pod: the ServiceAccount, bound to system:auth-delegator and to
// extension-apiserver-authentication-reader in kube-system).

import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../observability/logger.js';
import { DelegatedAuthenticator } from './authenticator.js';
import { DelegatedAuthorizer } from './authorizer.js';
import type { AuthFilterOptions } from './filter.js';

export interface DelegatedAuth {
  authenticator: DelegatedAuthenticator;
  authorizer: DelegatedAuthorizer;
  stop(): void;
}

export interface DelegatedAuthOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  refreshIntervalMs?: number;
  tokenCacheTtlMs?: number;
  allowTtlMs?: number;
  denyTtlMs?: number;
}

/**
 * Loads kube-system/extension-apiserver-authentication (failing when it cannot: without it no
 * request could be authenticated) and returns the parts the filter needs:
 *
 *   const auth = await startDelegatedAuth({ kubeConfig, logger });
 *   installAuthFilter(app, { ...auth, agentExists });   // before the routes
 *   closers.push(() => auth.stop());
 */
export async function startDelegatedAuth(o: DelegatedAuthOptions): Promise<DelegatedAuth & Pick<AuthFilterOptions, 'authenticator' | 'authorizer'>> {
  const authenticator = DelegatedAuthenticator.fromKubeConfig(o.kubeConfig, {
    logger: o.logger,
    ...(o.refreshIntervalMs !== undefined ? { refreshIntervalMs: o.refreshIntervalMs } : {}),
    ...(o.tokenCacheTtlMs !== undefined ? { tokenCacheTtlMs: o.tokenCacheTtlMs } : {}),
  });
  const authorizer = DelegatedAuthorizer.fromKubeConfig(o.kubeConfig, {
    logger: o.logger,
    ...(o.allowTtlMs !== undefined ? { allowTtlMs: o.allowTtlMs } : {}),
    ...(o.denyTtlMs !== undefined ? { denyTtlMs: o.denyTtlMs } : {}),
  });
  await authenticator.start();
  return { authenticator, authorizer, stop: () => authenticator.stop() };
}
