// The two homes of the one service. A home decides where state lives, how the public port is
// served and who may call it; everything else (controllers, APIs, runtime) is the same.
//
//   embedded:   SQLite state, plain HTTP; bearer tokens from a token file, or no auth on a
//               loopback bind (the bind is the boundary; other binds need the token file)
//   kubernetes: state as custom resources through kube-apiserver, TLS with HTTP/2 and
//               HTTP/1.1, delegated authn/authz (front-proxy, TokenReview, SubjectAccessReview)

import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../pkg/observability/logger.js';
import { ensureCrds } from '../../pkg/registry/kubernetes/crds.js';
import { KubernetesState } from '../../pkg/registry/kubernetes/kubernetes-state.js';
import { FileSecretStore } from '../../pkg/registry/secrets/file-secret-store.js';
import type { SecretStore } from '../../pkg/registry/secrets.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { Store, StoredObject } from '../../pkg/registry/store.js';
import type { TlsOptions } from '../../pkg/server/app.js';
import { startDelegatedAuth } from '../../pkg/server/auth/delegated.js';
import type { RequestAuth } from '../../pkg/server/auth/filter.js';
import { startTokenFileAuth } from '../../pkg/server/auth/token-file.js';

export interface State {
  store<T extends StoredObject>(kind: string): Store<T>;
  close(): void;
}

export interface Home {
  name: 'embedded' | 'kubernetes';
  state: State;
  /** Connector credentials (0600 files under the data dir, values encrypted; Kubernetes Secrets are to come). */
  secrets: SecretStore;
  /** Serve the public port over TLS (HTTP/2 + HTTP/1.1). */
  tls?: TlsOptions;
  /** Authn/authz for every public request (cluster: delegated; embedded: the token file, if given). */
  auth?: RequestAuth;
  /**
   * Local workers dial the control channel on a separate plain loopback listener, so the public
   * port can be TLS-only without handing workers a CA.
   */
  separateWorkerListener: boolean;
  /** The cluster home's connection to kube-apiserver (the Kubernetes runtime, plugins). */
  kubeConfig?: KubeConfig;
  close(): void;
}

export interface EmbeddedHomeOptions {
  /** Bearer tokens with their scopes (docs/auth.md "Embedded home"); no auth without it. */
  tokenFile?: string;
  /** Require a token for /metrics too. */
  metricsAuth?: boolean;
  /** How often the token file is re-read; default 2 s. */
  tokenFileReloadMs?: number;
}

/**
 * The stored secrets under <dataDir>/secrets, values encrypted with `key` (loadSecretsKey). Before
 * it is used: refuses a key other than the one the files were written with, and encrypts files
 * an older version wrote in clear.
 */
async function openSecretStore(dataDir: string, key: Buffer, logger: Logger): Promise<SecretStore> {
  const store = new FileSecretStore(join(dataDir, 'secrets'), key);
  const { migrated } = await store.open();
  if (migrated.length) logger.child({ component: 'secrets' }).info({ secrets: migrated }, 'stored secrets written in clear by an older version are now encrypted');
  return store;
}

export async function embeddedHome(dataDir: string, secretsKey: Buffer, o: EmbeddedHomeOptions, logger: Logger): Promise<Home> {
  // The secrets (wrong key, say) and the token file first: either stops start-up before the
  // database is opened.
  const secrets = await openSecretStore(dataDir, secretsKey, logger);
  const auth = o.tokenFile
    ? startTokenFileAuth({
        path: o.tokenFile,
        logger: logger.child({ component: 'auth' }),
        ...(o.metricsAuth ? { metricsAuth: true } : {}),
        ...(o.tokenFileReloadMs !== undefined ? { reloadIntervalMs: o.tokenFileReloadMs } : {}),
      })
    : undefined;
  const state = new SqliteState(join(dataDir, 'state.db'));
  return {
    name: 'embedded',
    state,
    secrets,
    ...(auth ? { auth } : {}),
    separateWorkerListener: false,
    close: () => {
      auth?.stop();
      state.close();
    },
  };
}

export interface KubernetesHomeOptions {
  /** kubeconfig path; in-cluster config when absent. */
  kubeconfig?: string;
  tls: TlsOptions;
}

export async function kubernetesHome(o: KubernetesHomeOptions, dataDir: string, secretsKey: Buffer, logger: Logger): Promise<Home> {
  const secrets = await openSecretStore(dataDir, secretsKey, logger);
  const kc = new KubeConfig();
  if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
  else kc.loadFromCluster();
  // The storage CRDs come with the manifests; creating them here too makes a first start (and
  // a test control plane) work without a separate step, when the service account may.
  await ensureCrds(kc);
  const state = new KubernetesState(kc, { logger: logger.child({ component: 'storage' }) });
  const auth = await startDelegatedAuth({ kubeConfig: kc, logger: logger.child({ component: 'auth' }) });
  return {
    name: 'kubernetes',
    state,
    secrets,
    tls: o.tls,
    auth,
    separateWorkerListener: true,
    kubeConfig: kc,
    close: () => {
      auth.stop();
      state.close();
    },
  };
}
