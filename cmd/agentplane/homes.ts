// The two homes of the one service. A home decides where state lives, how the public port is
// served and who may call it; everything else (controllers, APIs, runtime) is the same.
//
//   embedded:   SQLite state, plain HTTP; bearer tokens from a token file, or no auth on a
//               loopback bind (the bind is the boundary; other binds need the token file)
//   kubernetes: state as custom resources through kube-apiserver, connector secrets as
//               Kubernetes Secrets, TLS with HTTP/2 and HTTP/1.1, delegated authn/authz
//               (front-proxy, TokenReview, SubjectAccessReview)

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { componentLogger, type Logger } from '../../pkg/observability/logger.js';
import type { ClusterAccess } from '../../pkg/plugin/types.js';
import { ensureCrds } from '../../pkg/registry/kubernetes/crds.js';
import { KubernetesState } from '../../pkg/registry/kubernetes/kubernetes-state.js';
import { FileSecretStore } from '../../pkg/registry/secrets/file-secret-store.js';
import { KubernetesSecretStore } from '../../pkg/registry/secrets/kubernetes-secret-store.js';
import type { SecretStore } from '../../pkg/registry/secrets.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { Store, StoredObject } from '../../pkg/registry/store.js';
import type { TlsOptions } from '../../pkg/server/app.js';
import { startDelegatedAuth } from '../../pkg/server/auth/delegated.js';
import type { RequestAuth } from '../../pkg/server/auth/filter.js';
import type { OidcOptions } from '../../pkg/server/auth/oidc.js';
import { startTokenFileAuth } from '../../pkg/server/auth/token-file.js';
import { KeepAliveKubeConfig } from './kube-config.js';

export interface State {
  store<T extends StoredObject>(kind: string): Store<T>;
  close(): void;
}

export interface Home {
  name: 'embedded' | 'kubernetes';
  state: State;
  /** Connector credentials: embedded, 0600 files under the data dir, values encrypted; cluster, Kubernetes Secrets. */
  secrets: SecretStore;
  /**
   * The cluster home only: how to reach the cluster and where agentplane is installed (for
   * plugins that need it, e.g. credential-mirror: hand it on as `PluginContext.cluster`).
   */
  cluster?: ClusterAccess;
  /** Serve the public port over TLS (HTTP/2 + HTTP/1.1). */
  tls?: TlsOptions;
  /** Authn/authz for every public request (cluster: delegated; embedded: the token file, if given). */
  auth?: RequestAuth;
  /**
   * Local workers dial the control channel on a separate plain loopback listener, so the public
   * port can be TLS-only without handing workers a CA.
   */
  separateWorkerListener: boolean;
  close(): void;
}

export interface EmbeddedHomeOptions {
  /** Bearer tokens with their scopes (docs/auth.md "Embedded home"); no auth without it. */
  tokenFile?: string;
  /** OIDC ID tokens too, scoped by the token file's grants. */
  oidc?: OidcOptions;
  /** Whether /metrics needs a token too (default true). */
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
  if (migrated.length) componentLogger(logger, 'secrets').info({ secrets: migrated }, 'stored secrets written in clear by an older version are now encrypted');
  return store;
}

export async function embeddedHome(dataDir: string, secretsKey: Buffer, o: EmbeddedHomeOptions, logger: Logger): Promise<Home> {
  // The secrets (wrong key, say) and the token file first: either stops start-up before the
  // database is opened.
  const secrets = await openSecretStore(dataDir, secretsKey, logger);
  const auth = o.tokenFile
    ? startTokenFileAuth({
        path: o.tokenFile,
        logger: componentLogger(logger, 'auth'),
        ...(o.oidc ? { oidc: o.oidc } : {}),
        ...(o.metricsAuth !== undefined ? { metricsAuth: o.metricsAuth } : {}),
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
  /**
   * The namespace agentplane is installed in (where the model credential's Secret lives).
   * Default: $POD_NAMESPACE (the Deployment sets it), else the service account's namespace
   * in a pod, else the kubeconfig context's namespace, else agentplane-system.
   */
  installNamespace?: string;
}

/** Where the service account's namespace is mounted in a pod. */
const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
export const DEFAULT_INSTALL_NAMESPACE = 'agentplane-system';

/** The install namespace: the option, $POD_NAMESPACE, the pod's, the kubeconfig's, or the default. */
export function installNamespaceOf(o: Pick<KubernetesHomeOptions, 'installNamespace' | 'kubeconfig'>, kc: KubeConfig, env = process.env): string {
  if (o.installNamespace) return o.installNamespace;
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  if (!o.kubeconfig) {
    try {
      const ns = readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
      if (ns) return ns;
    } catch {
      // not in a pod
    }
  }
  return kc.getContextObject(kc.getCurrentContext())?.namespace || DEFAULT_INSTALL_NAMESPACE;
}

/**
 * Secrets an earlier version kept as files under the data directory (the cluster home used the
 * embedded store before Kubernetes Secrets backed it): named in a warning, since they are no
 * longer read. Listing needs no key and reads no value.
 */
async function warnOfSecretFiles(dataDir: string, secretsKey: Buffer, logger: Logger): Promise<void> {
  const left = await new FileSecretStore(join(dataDir, 'secrets'), secretsKey).list().catch(() => []);
  if (!left.length) return;
  componentLogger(logger, 'secrets').warn(
    { secrets: left.map((s) => `${s.namespace}/${s.name}`) },
    'secrets stored as files in the data directory by an earlier version are not used in the cluster home (connector secrets are Kubernetes Secrets now): create them again through the API',
  );
}

export async function kubernetesHome(o: KubernetesHomeOptions, dataDir: string, secretsKey: Buffer, logger: Logger): Promise<Home> {
  const kc = new KeepAliveKubeConfig();
  if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
  else kc.loadFromCluster();
  await warnOfSecretFiles(dataDir, secretsKey, logger);
  const secrets = new KubernetesSecretStore(kc);
  // The storage CRDs come with the manifests; creating them here too makes a first start (and
  // a test control plane) work without a separate step, when the service account may.
  await ensureCrds(kc);
  const state = new KubernetesState(kc, { logger: componentLogger(logger, 'storage') });
  const auth = await startDelegatedAuth({ kubeConfig: kc, logger: componentLogger(logger, 'auth') });
  return {
    name: 'kubernetes',
    state,
    secrets,
    cluster: { kubeConfig: kc, installNamespace: installNamespaceOf(o, kc) },
    tls: o.tls,
    auth,
    separateWorkerListener: true,
    close: () => {
      auth.stop();
      state.close();
      kc.close();
    },
  };
}
