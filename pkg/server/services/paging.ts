// Paging of the REST mirror's lists (`?limit=&continue=`): the same cache reads, tokens and rules
// as the aggregated API's lists (pkg/registry/cache/reads.ts), with the REST error body.

import { notFound } from '../../api/errors.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { StoredObject } from '../../registry/store.js';
import { intParam, type Query } from '../params.js';

export interface PageQuery {
  limit?: number;
  continue?: string;
}

/** The next page's token and how many objects follow it; both absent on the last page. */
export interface Paging {
  continue?: string;
  remainingItemCount?: number;
}

export interface Page<T> extends Paging {
  items: T[];
}

/** `limit` (1 or more) and `continue` from the query. */
export function pageQuery(q: Query): PageQuery {
  const limit = intParam(q, 'limit', { min: 1 });
  const cont = q.continue;
  if (Array.isArray(cont)) return { ...(limit ? { limit } : {}), continue: cont[0] };
  return { ...(limit ? { limit } : {}), ...(cont ? { continue: cont } : {}) };
}

/** A consistent page of the objects `keep` selects, in namespace/name order. */
export async function readPage<T extends StoredObject>(
  reads: ReadCache<T>,
  namespace: string | undefined,
  page: PageQuery,
  keep?: (obj: T) => boolean,
): Promise<Page<T>> {
  const res = await reads.list({
    ...(namespace !== undefined ? { namespace } : {}),
    ...(keep ? { matches: (o) => keep(o as T) } : {}),
    ...page,
  });
  return {
    items: res.items,
    ...(res.continue ? { continue: res.continue } : {}),
    ...(res.remainingItemCount !== undefined ? { remainingItemCount: res.remainingItemCount } : {}),
  };
}

/**
 * One object as the REST mirror shows it: from the cache when the service has the reads, else
 * from storage; one being deleted is NotFound either way.
 */
export async function readOne<T extends StoredObject>(
  reads: ReadCache<T> | undefined,
  registry: { mustGet(namespace: string, name: string): Promise<T> },
  kind: string,
  namespace: string,
  name: string,
): Promise<T> {
  const obj = reads ? await reads.get(namespace, name) : await registry.mustGet(namespace, name);
  if (!obj || obj.metadata.deletionTimestamp) throw notFound(kind, name, namespace);
  return obj;
}
