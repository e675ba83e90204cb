// Secrets of the cluster home as Kubernetes Secrets: the agentplane secret <ns>/<name> is the
// Secret <ns>/<name>, type Opaque, labelled as agentplane's connector secret
// (app.kubernetes.io/managed-by=agentplane, agentplane.io/component=connector-secret), its values
// in `data` (base64, Kubernetes' encoding, not encryption: encryption at rest is the cluster's,
// an EncryptionConfiguration of kube-apiserver) and its binding (allowedUrls) in the annotation
// agentplane.io/allowed-urls as a JSON array. createdAt is the Secret's creationTimestamp (a
// replace is a PUT of the same object, which keeps it).
//
// Ownership: a Secret without both labels is not agentplane's. It is invisible to get and list,
// and no write here overwrites or deletes it: put and replace over one are refused
// (AlreadyExists, saying why), delete and bind answer as for an absent secret.
//
// Concurrency is Kubernetes' own: create fails when the name is taken (one of many creators
// wins); replace, bind and delete are conditional on the resourceVersion (or uid) they read, and
// read again when it changed meanwhile, so a binding is never lost to a concurrent replace.
//
// No value reaches an error message or a log: the messages here name the secret, and those of
// Kubernetes are reduced to their Status (which quotes names and fields, never data).

import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { ApiError, alreadyExists, invalid } from '../../api/errors.js';
import { NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, NAMESPACE_PATTERN, NAMESPACE_RULE } from '../../api/meta.js';
import { COMPONENT_LABEL, CONNECTOR_SECRET_COMPONENT, MANAGED_BY, MANAGED_BY_LABEL, SECRET_KIND } from '../../api/secret.js';
import { namespaceNotFound, statusOf, toApiError } from '../kubernetes/errors.js';
import { type Secret, type SecretMeta, type SecretStore } from '../secrets.js';

export { COMPONENT_LABEL, CONNECTOR_SECRET_COMPONENT, MANAGED_BY, MANAGED_BY_LABEL } from '../../api/secret.js';
/** The binding: normalized URL prefixes, a JSON array of strings; absent or [] = unbound. */
export const ALLOWED_URLS_ANNOTATION = 'agentplane.io/allowed-urls';
/** Selects agentplane's connector secrets (and nothing else). */
export const CONNECTOR_SECRET_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY},${COMPONENT_LABEL}=${CONNECTOR_SECRET_COMPONENT}`;

const nameRe = new RegExp(NAME_PATTERN);
const nsRe = new RegExp(NAMESPACE_PATTERN);
/** Page size of lists. */
const PAGE = 500;
/** Conditional writes that lost a race are tried again this many times before a Conflict. */
const MAX_ATTEMPTS = 20;

export interface KubernetesSecretStoreOptions {
  /** Tries of a conditional write (replace, bind, delete) before it answers Conflict; default 20. */
  maxAttempts?: number;
}

export class KubernetesSecretStore implements SecretStore {
  private readonly api: CoreV1Api;
  private readonly maxAttempts: number;

  constructor(kc: KubeConfig, opts: KubernetesSecretStoreOptions = {}) {
    this.api = kc.makeApiClient(CoreV1Api);
    this.maxAttempts = opts.maxAttempts ?? MAX_ATTEMPTS;
  }

  async put(namespace: string, name: string, data: Record<string, string>, allowedUrls: string[] = []): Promise<SecretMeta> {
    check(namespace, name);
    let made: V1Secret;
    try {
      made = await this.api.createNamespacedSecret({ namespace, body: secretObject(namespace, name, data, allowedUrls) });
    } catch (err) {
      if (statusOf(err)?.code === 409) {
        // Taken: by one of ours (AlreadyExists, as for any name), or by a Secret agentplane does
        // not own, which is never written over (and the message says so).
        const cur = await this.read(namespace, name).catch(() => undefined);
        if (cur && !owned(cur)) throw notOurs(namespace, name);
        throw alreadyExists(SECRET_KIND, name);
      }
      throw fail(err, namespace, name, 'create');
    }
    return metaOf(made, namespace, name);
  }

  async replace(namespace: string, name: string, data: Record<string, string>, allowedUrls?: string[]): Promise<{ secret: SecretMeta; created: boolean }> {
    check(namespace, name);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.read(namespace, name);
      if (!cur) {
        try {
          const made = await this.api.createNamespacedSecret({ namespace, body: secretObject(namespace, name, data, allowedUrls ?? []) });
          return { secret: metaOf(made, namespace, name), created: true };
        } catch (err) {
          // Created meanwhile: replace that one (or refuse it, if not ours).
          if (statusOf(err)?.code === 409 && attempt < this.maxAttempts) continue;
          throw fail(err, namespace, name, 'create');
        }
      }
      if (!owned(cur)) throw notOurs(namespace, name);
      // A binding that does not parse is replaced like a damaged file: by the one given, else unbound.
      const urls = allowedUrls ?? bindingOf(cur) ?? [];
      const body = secretObject(namespace, name, data, urls, cur);
      try {
        const put = await this.api.replaceNamespacedSecret({ namespace, name, body });
        return { secret: metaOf(put, namespace, name), created: false };
      } catch (err) {
        // Changed (or deleted) since it was read: read again, so a concurrent binding is kept.
        const code = statusOf(err)?.code;
        if ((code === 409 || code === 404) && attempt < this.maxAttempts) continue;
        throw fail(err, namespace, name, 'replace');
      }
    }
  }

  async bindIfUnbound(namespace: string, name: string, prefix: string): Promise<SecretMeta | undefined> {
    check(namespace, name);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.read(namespace, name);
      if (!cur || !owned(cur)) return undefined;
      const urls = bindingOf(cur);
      // A binding that does not parse is not "unbound": it is refused, never re-bound.
      if (!urls) throw damaged(namespace, name);
      if (urls.length) return metaOf(cur, namespace, name);
      const body: V1Secret = {
        ...cur,
        metadata: { ...cur.metadata, annotations: { ...cur.metadata?.annotations, [ALLOWED_URLS_ANNOTATION]: JSON.stringify([prefix]) } },
      };
      try {
        const put = await this.api.replaceNamespacedSecret({ namespace, name, body });
        return metaOf(put, namespace, name);
      } catch (err) {
        const code = statusOf(err)?.code;
        if (code === 404) return undefined;
        if (code === 409 && attempt < this.maxAttempts) continue;
        throw fail(err, namespace, name, 'update');
      }
    }
  }

  async get(namespace: string, name: string): Promise<Secret | undefined> {
    check(namespace, name);
    const cur = await this.read(namespace, name);
    if (!cur || !owned(cur)) return undefined;
    const meta = metaOf(cur, namespace, name);
    return { ...meta, data: decode(cur.data) };
  }

  async list(namespace?: string): Promise<SecretMeta[]> {
    if (namespace !== undefined) checkNamespace(namespace);
    const out: SecretMeta[] = [];
    let cont: string | undefined;
    do {
      let page;
      try {
        page =
          namespace !== undefined
            ? await this.api.listNamespacedSecret({ namespace, labelSelector: CONNECTOR_SECRET_SELECTOR, limit: PAGE, _continue: cont })
            : await this.api.listSecretForAllNamespaces({ labelSelector: CONNECTOR_SECRET_SELECTOR, limit: PAGE, _continue: cont });
      } catch (err) {
        throw fail(err, namespace ?? '', '', 'list');
      }
      for (const s of page.items) {
        // The selector already asks for both labels; the type is checked here. A secret whose
        // binding does not parse is left out (get names it; replace and delete repair it).
        if (!owned(s) || !bindingOf(s)) continue;
        out.push(metaOf(s, s.metadata!.namespace!, s.metadata!.name!));
      }
      cont = page.metadata?._continue || undefined;
    } while (cont);
    const key = (m: SecretMeta): string => `${m.namespace}\u0000${m.name}`;
    return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  }

  async delete(namespace: string, name: string): Promise<SecretMeta | undefined> {
    check(namespace, name);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.read(namespace, name);
      if (!cur || !owned(cur)) return undefined;
      const meta = bindingOf(cur)
        ? metaOf(cur, namespace, name)
        : { name, namespace, keys: Object.keys(cur.data ?? {}).sort(), allowedUrls: [], createdAt: createdAtOf(cur) };
      try {
        // Only the Secret that was read (and found ours): not one re-created, or re-labelled, since.
        await this.api.deleteNamespacedSecret({
          namespace,
          name,
          body: { preconditions: { uid: cur.metadata!.uid!, resourceVersion: cur.metadata!.resourceVersion! } },
        });
        return meta;
      } catch (err) {
        const code = statusOf(err)?.code;
        if (code === 404) return undefined;
        if (code === 409 && attempt < this.maxAttempts) continue;
        throw fail(err, namespace, name, 'delete');
      }
    }
  }

  /** The Secret as stored (ours or not), undefined when absent. */
  private async read(namespace: string, name: string): Promise<V1Secret | undefined> {
    try {
      return await this.api.readNamespacedSecret({ namespace, name });
    } catch (err) {
      if (statusOf(err)?.code === 404) return undefined;
      throw fail(err, namespace, name, 'get');
    }
  }
}

/** Whether agentplane made this Secret as a connector secret (so may read, replace and delete it). */
export function owned(s: V1Secret): boolean {
  const labels = s.metadata?.labels ?? {};
  return labels[MANAGED_BY_LABEL] === MANAGED_BY && labels[COMPONENT_LABEL] === CONNECTOR_SECRET_COMPONENT && (s.type ?? 'Opaque') === 'Opaque';
}

/** The Secret for an agentplane secret; `base` (the stored one) keeps its metadata and resourceVersion. */
function secretObject(namespace: string, name: string, data: Record<string, string>, allowedUrls: string[], base?: V1Secret): V1Secret {
  const meta = base?.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      ...meta,
      name,
      namespace,
      labels: { ...meta.labels, [MANAGED_BY_LABEL]: MANAGED_BY, [COMPONENT_LABEL]: CONNECTOR_SECRET_COMPONENT },
      annotations: { ...meta.annotations, [ALLOWED_URLS_ANNOTATION]: JSON.stringify(allowedUrls) },
    },
    data: encode(data),
  };
}

const encode = (data: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));

const decode = (data: Record<string, string> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

/** The binding from the annotation: [] when absent, undefined when it does not parse. */
function bindingOf(s: V1Secret): string[] | undefined {
  const raw = s.metadata?.annotations?.[ALLOWED_URLS_ANNOTATION];
  if (raw === undefined || raw === '') return [];
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) && v.every((u) => typeof u === 'string') ? v : undefined;
  } catch {
    return undefined;
  }
}

function createdAtOf(s: V1Secret): string {
  const t = s.metadata?.creationTimestamp as Date | string | undefined;
  const d = t instanceof Date ? t : new Date(t ?? 0);
  return Number.isNaN(d.getTime()) ? new Date(0).toISOString() : d.toISOString();
}

function metaOf(s: V1Secret, namespace: string, name: string): SecretMeta {
  const allowedUrls = bindingOf(s);
  if (!allowedUrls) throw damaged(namespace, name);
  return { name, namespace, keys: Object.keys(s.data ?? {}).sort(), allowedUrls: [...allowedUrls], createdAt: createdAtOf(s) };
}

const damaged = (namespace: string, name: string): Error =>
  new Error(
    `secret ${namespace}/${name}: its annotation ${ALLOWED_URLS_ANNOTATION} is not a JSON array of URL prefixes (edited by hand?); replace the secret to repair it`,
  );

const notOurs = (namespace: string, name: string): ApiError =>
  new ApiError(
    'AlreadyExists',
    409,
    `${SECRET_KIND} "${name}" already exists in namespace "${namespace}" as a Kubernetes Secret that is not an agentplane connector secret ` +
      `(it lacks the labels ${MANAGED_BY_LABEL}=${MANAGED_BY} and ${COMPONENT_LABEL}=${CONNECTOR_SECRET_COMPONENT}, or is not of type Opaque); ` +
      `agentplane never overwrites or deletes a Secret it does not own: choose another name`,
    { kind: SECRET_KIND, name },
  );

function check(namespace: string, name: string): void {
  if (!name || name.length > NAME_MAX_LENGTH || !nameRe.test(name)) {
    throw invalid(SECRET_KIND, undefined, [{ field: 'name', message: `must be ${NAME_RULE}` }]);
  }
  checkNamespace(namespace);
}

function checkNamespace(namespace: string): void {
  if (!namespace || namespace.length > 63 || !nsRe.test(namespace)) {
    throw invalid(SECRET_KIND, undefined, [{ field: 'namespace', message: `must be ${NAMESPACE_RULE}` }]);
  }
}

/** A failed request about one secret as the project's error; never the client library's. */
function fail(err: unknown, namespace: string, name: string, verb: string): ApiError {
  if (err instanceof ApiError) return err;
  const s = statusOf(err);
  if (s?.code === 404 && s.details?.kind === 'namespaces') return namespaceNotFound(s.details.name ?? namespace);
  if (s?.code === 401 || s?.code === 403) {
    // The server's own identity lacks a permission: an installation problem, said as one.
    return new ApiError(
      'InternalError',
      500,
      `agentplane may not ${verb} Secrets${namespace ? ` in namespace "${namespace}"` : ''}: ${s.message ?? s.reason ?? `HTTP ${s.code}`} (see manifests/rbac-server.yaml)`,
    );
  }
  if (!s) {
    // Not an HTTP answer (refused connection, timeout): the message of the transport, not a body.
    return new ApiError('ServiceUnavailable', 503, `Kubernetes API unavailable: ${(err as Error)?.message ?? String(err)}`);
  }
  return toApiError({ code: s.code, body: s }, { kind: SECRET_KIND, namespace, name, resource: 'secrets' });
}
