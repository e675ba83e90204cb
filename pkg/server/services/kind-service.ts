// The REST mirror of a kind whose REST body is its spec with a name and a namespace (Budgets,
// Schedules, Webhooks, ...): create, get, list, patch and delete through its registry. Every rule
// beyond the request's shape is the kind's strategy's and the admission chain's, as for the
// aggregated API; reads go through the kind's read cache.

import { type Cause, invalid } from '../../api/errors.js';
import { DEFAULT_NAMESPACE, type Resource } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import { REST_OWNER, type Registry } from '../../registry/registry.js';
import { type Page, type PageQuery, readOne, readPage } from './paging.js';

/** How a kind's REST requests map onto its objects. */
export interface KindRequests<S> {
  kind: string;
  /** POST's body: `name`, optional `namespace`, and the spec's fields. */
  createSchema: object;
  /** PATCH's body: spec fields, each optional; those in `removable` may be null (removed). */
  patchSchema: object;
  removable?: readonly (keyof S & string)[];
  /** Rules the create body's schema cannot say (the strategy checks them again on every write). */
  validateCreate?(spec: S): Cause[];
}

export interface ObjectRequest {
  name: string;
  namespace?: string;
}

export class KindService<S extends object, T extends Resource<S, object>> {
  constructor(
    private readonly def: KindRequests<S>,
    private readonly registry: Registry<T>,
    private readonly reads: ReadCache<T>,
  ) {}

  async create(body: unknown): Promise<T> {
    const req = body as ObjectRequest & S;
    const causes = validateSchema(this.def.createSchema, body);
    const { name, namespace = DEFAULT_NAMESPACE, ...spec } = req ?? ({} as ObjectRequest & S);
    if (!causes.length && this.def.validateCreate) causes.push(...this.def.validateCreate(spec as unknown as S));
    if (causes.length) throw invalid(this.def.kind, typeof name === 'string' ? name : undefined, causes);
    const obj = {
      apiVersion: '',
      kind: this.def.kind,
      metadata: { name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
      spec,
      status: {},
    } as unknown as T;
    await this.registry.create(obj, { owner: REST_OWNER });
    return this.get(namespace, name);
  }

  get(namespace: string, name: string): Promise<T> {
    return readOne(this.reads, this.registry, this.def.kind, namespace, name);
  }

  list(namespace?: string, page: PageQuery = {}): Promise<Page<T>> {
    return readPage(this.reads, namespace, page, (o) => !o.metadata.deletionTimestamp);
  }

  /** The fields given change; a removable field given as null is removed. */
  async patch(namespace: string, name: string, body: unknown): Promise<T> {
    const fields = isRecord(body) ? body : undefined;
    const removed = (this.def.removable ?? []).filter((k) => fields?.[k] === null);
    const rest = fields && Object.fromEntries(Object.entries(fields).filter(([k]) => !removed.includes(k as keyof S & string)));
    // A body of removals only has nothing left for the schema to check (it wants one field).
    const causes = removed.length && !Object.keys(rest ?? {}).length ? [] : validateSchema(this.def.patchSchema, rest ?? body);
    if (causes.length) throw invalid(this.def.kind, name, causes);
    await this.registry.update(
      namespace,
      name,
      (o) => {
        const spec = o.spec as Record<string, unknown>;
        for (const k of removed) delete spec[k];
        Object.assign(spec, rest);
      },
      { owner: REST_OWNER },
    );
    return this.get(namespace, name);
  }

  async delete(namespace: string, name: string): Promise<T> {
    const obj = await this.get(namespace, name);
    await this.registry.delete(namespace, name);
    return obj;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
