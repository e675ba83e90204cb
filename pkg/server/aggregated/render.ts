// Rendering of objects and lists in the representation the client negotiated: the object itself,
// a meta.k8s.io Table (kubectl get), or PartialObjectMetadata(List).

import { API_VERSION } from '../../api/meta.js';
import type { StoredObject } from '../../registry/store.js';
import type { Target } from './negotiation.js';
import type { IncludeObject } from './query.js';
import type { ResourceDef } from './resources.js';

export function partialObject(obj: StoredObject, version: string) {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

export interface TableOptions {
  version: string;
  includeObject: IncludeObject;
  /** Watch events after the first carry no column definitions (kubectl reuses the last ones). */
  noHeaders?: boolean;
  resourceVersion?: string;
  /** Paging of a list: the next page's token and how many objects follow. */
  page?: ListPaging;
}

export interface ListPaging {
  continue?: string;
  remainingItemCount?: number;
}

/** ListMeta of a list response. */
const listMeta = (resourceVersion: string | undefined, page: ListPaging = {}) => ({
  ...(resourceVersion !== undefined ? { resourceVersion } : {}),
  ...(page.continue ? { continue: page.continue } : {}),
  ...(page.remainingItemCount !== undefined ? { remainingItemCount: page.remainingItemCount } : {}),
});

export function table(def: ResourceDef, objs: StoredObject[], o: TableOptions) {
  const { table: t } = def.registry.strategy;
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${o.version}`,
    metadata: listMeta(o.resourceVersion, o.page),
    columnDefinitions: o.noHeaders ? [] : t.columns,
    rows: objs.map((obj) => ({
      cells: t.row(obj, now),
      ...(o.includeObject === 'None' ? {} : { object: o.includeObject === 'Object' ? obj : partialObject(obj, o.version) }),
    })),
  };
}

/** One object (get, create, update, patch, delete answers). */
export function renderObject(def: ResourceDef, obj: StoredObject, target: Target, includeObject: IncludeObject): unknown {
  switch (target.as) {
    case 'Table':
      return table(def, [obj], { version: target.version, includeObject });
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return partialObject(obj, target.version);
    default:
      return obj;
  }
}

export function renderList(
  def: ResourceDef,
  items: StoredObject[],
  resourceVersion: string,
  target: Target,
  includeObject: IncludeObject,
  page: ListPaging = {},
): unknown {
  switch (target.as) {
    case 'Table':
      return table(def, items, { version: target.version, includeObject, resourceVersion, page });
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${target.version}`,
        metadata: listMeta(resourceVersion, page),
        items: items.map((i) => partialObject(i, target.version)),
      };
    default:
      return { apiVersion: API_VERSION, kind: def.listKind, metadata: listMeta(resourceVersion, page), items };
  }
}
