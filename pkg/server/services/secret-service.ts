// Secret operations behind the REST mirror. Requests carry values; answers carry names, keys and
// bindings (allowedUrls) only, and nothing here logs a value. Only a write here widens a
// secret's binding; a connector can only bind a secret that has none yet.

import { badRequest, invalid, notFound } from '../../api/errors.js';
import { DEFAULT_NAMESPACE } from '../../api/meta.js';
import {
  allowedUrlsCauses,
  normalizeAllowedUrls,
  SECRET_KIND,
  secretCreateRequestSchema,
  secretDataCauses,
  secretPatchRequestSchema,
  secretReplaceRequestSchema,
  type SecretRequest,
  type SecretResponse,
} from '../../api/secret.js';
import { validateSchema } from '../../api/validation.js';
import type { Logger } from '../../observability/logger.js';
import type { SecretMeta, SecretStore } from '../../registry/secrets.js';

export type SecretChange = (namespace: string, name: string) => void | Promise<void>;

export class SecretService {
  private readonly listeners: SecretChange[] = [];

  constructor(
    private readonly store: SecretStore,
    private readonly log: Logger,
  ) {}

  /** Called after a secret was created, replaced or deleted (e.g. to re-check connectors). */
  onChange(fn: SecretChange): void {
    this.listeners.push(fn);
  }

  async create(body: unknown): Promise<SecretResponse> {
    const req = body as SecretRequest;
    const causes = validateSchema(secretCreateRequestSchema, body);
    if (!causes.length) causes.push(...secretDataCauses(req.data), ...allowedUrlsCauses(req.allowedUrls));
    if (causes.length) throw invalid(SECRET_KIND, typeof req?.name === 'string' ? req.name : undefined, causes);
    const namespace = req.namespace ?? DEFAULT_NAMESPACE;
    const meta = await this.store.put(namespace, req.name!, req.data, normalizeAllowedUrls(req.allowedUrls ?? []));
    this.changed(meta, 'created');
    return toSecretResponse(meta);
  }

  /** PUT: replaces the whole secret, or creates it. `namespace` is the query's (if given). */
  async replace(queryNamespace: string | undefined, name: string, body: unknown): Promise<{ secret: SecretResponse; created: boolean }> {
    const req = body as SecretRequest;
    const causes = validateSchema(secretReplaceRequestSchema, body);
    if (!causes.length) causes.push(...secretDataCauses(req.data), ...allowedUrlsCauses(req.allowedUrls));
    if (causes.length) throw invalid(SECRET_KIND, name, causes);
    if (req.name !== undefined && req.name !== name) {
      throw badRequest(`the body names secret "${req.name}" but the path names "${name}"`);
    }
    if (queryNamespace !== undefined && req.namespace !== undefined && req.namespace !== queryNamespace) {
      throw badRequest(`the body's namespace "${req.namespace}" differs from the query's "${queryNamespace}"`);
    }
    const namespace = queryNamespace ?? req.namespace ?? DEFAULT_NAMESPACE;
    const nameCauses = validateSchema(secretCreateRequestSchema.properties.name, name, 'name');
    if (nameCauses.length) throw invalid(SECRET_KIND, undefined, nameCauses);
    const allowed = req.allowedUrls !== undefined ? normalizeAllowedUrls(req.allowedUrls) : undefined;
    const { secret, created } = await this.store.replace(namespace, name, req.data, allowed);
    this.changed(secret, created ? 'created' : 'replaced');
    return { secret: toSecretResponse(secret), created };
  }

  /** PATCH: merges keys into an existing secret; a null value removes its key. */
  async patch(namespace: string, name: string, body: unknown): Promise<SecretResponse> {
    const req = body as { name?: string; namespace?: string; data: Record<string, string | null> };
    const causes = validateSchema(secretPatchRequestSchema, body);
    if (!causes.length) causes.push(...secretDataCauses(req.data));
    if (causes.length) throw invalid(SECRET_KIND, name, causes);
    if (req.name !== undefined && req.name !== name) {
      throw badRequest(`the body names secret "${req.name}" but the path names "${name}"`);
    }
    if (req.namespace !== undefined && req.namespace !== namespace) {
      throw badRequest(`the body's namespace "${req.namespace}" differs from the query's "${namespace}"`);
    }
    const current = await this.store.get(namespace, name);
    if (!current) throw notFound(SECRET_KIND, name, namespace);
    const data = { ...current.data };
    for (const [k, v] of Object.entries(req.data)) {
      if (v === null) delete data[k];
      else data[k] = v;
    }
    // A secret always holds at least one key (as POST and PUT require).
    if (!Object.keys(data).length)
      throw invalid(SECRET_KIND, name, [{ field: 'data', message: 'the patch would remove every key; delete the secret instead' }]);
    // Read-modify-write: not atomic against a concurrent writer of the same secret (last write wins).
    const { secret } = await this.store.replace(namespace, name, data);
    this.changed(secret, 'patched');
    return toSecretResponse(secret);
  }

  async get(namespace: string, name: string): Promise<SecretResponse> {
    const s = await this.store.get(namespace, name);
    if (!s) throw notFound(SECRET_KIND, name, namespace);
    return toSecretResponse(s);
  }

  async list(namespace?: string): Promise<SecretResponse[]> {
    return (await this.store.list(namespace)).map(toSecretResponse);
  }

  async delete(namespace: string, name: string): Promise<SecretResponse> {
    const meta = await this.store.delete(namespace, name);
    if (!meta) throw notFound(SECRET_KIND, name, namespace);
    this.changed(meta, 'deleted');
    return toSecretResponse(meta);
  }

  private changed(meta: SecretMeta, what: string): void {
    this.log.info({ namespace: meta.namespace, secret: meta.name, keys: meta.keys, allowedUrls: meta.allowedUrls }, `secret ${what}`);
    for (const fn of this.listeners) {
      Promise.resolve()
        .then(() => fn(meta.namespace, meta.name))
        .catch((err: unknown) => this.log.warn({ namespace: meta.namespace, secret: meta.name, err: String(err) }, 'secret change listener failed'));
    }
  }
}

/** Names, keys and bindings only: never the values. */
export const toSecretResponse = (s: SecretMeta): SecretResponse => ({
  name: s.name,
  namespace: s.namespace,
  keys: [...s.keys],
  allowedUrls: [...s.allowedUrls],
  createdAt: s.createdAt,
});
