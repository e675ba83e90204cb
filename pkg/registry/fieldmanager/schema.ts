// The merge semantics of an object's fields, read from the same JSON Schemas the strategies
// validate with and the OpenAPI documents publish: `x-kubernetes-list-type` (atomic, the default;
// set; map with `x-kubernetes-list-map-keys`) and `x-kubernetes-map-type` (granular, the default;
// atomic), as kube-apiserver reads them from a CRD's schema.

export type TypeSchema =
  /** A value replaced as a whole: a scalar, an atomic list or map, or a field of unknown type. */
  | { type: 'leaf' }
  /** A granular object: declared fields and/or string keys to values of `element`. */
  | { type: 'map'; fields: Record<string, TypeSchema>; element?: TypeSchema }
  | { type: 'list'; listType: 'set' | 'map'; element: TypeSchema; keys: string[] };

export const LEAF: TypeSchema = { type: 'leaf' };
/** A field with no declared schema: objects merge key by key, lists are atomic (Kubernetes' "deduced" type). */
export const DEDUCED: TypeSchema = { type: 'map', fields: {} };

type Json = Record<string, unknown>;

export function fromJsonSchema(s: unknown): TypeSchema {
  if (!s || typeof s !== 'object') return LEAF;
  const j = s as Json;
  const type = j.type;
  if (type === 'array') {
    const listType = j['x-kubernetes-list-type'];
    if (listType !== 'set' && listType !== 'map') return LEAF;
    const keys = Array.isArray(j['x-kubernetes-list-map-keys']) ? (j['x-kubernetes-list-map-keys'] as string[]) : [];
    return { type: 'list', listType, element: fromJsonSchema(j.items), keys };
  }
  if (type === 'object' || j.properties) {
    if (j['x-kubernetes-map-type'] === 'atomic') return LEAF;
    const fields = Object.fromEntries(Object.entries((j.properties as Json | undefined) ?? {}).map(([k, v]) => [k, fromJsonSchema(v)]));
    const ap = j.additionalProperties;
    const element = ap && typeof ap === 'object' ? fromJsonSchema(ap) : j['x-kubernetes-preserve-unknown-fields'] ? DEDUCED : undefined;
    return { type: 'map', fields, ...(element ? { element } : {}) };
  }
  return LEAF;
}

const stringMap = { type: 'object', additionalProperties: { type: 'string' } };

/** ObjectMeta as kube-apiserver's schema declares it, for the fields a client may set. */
export const OBJECT_META_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer' },
    creationTimestamp: { type: 'string' },
    deletionTimestamp: { type: 'string' },
    deletionGracePeriodSeconds: { type: 'integer' },
    selfLink: { type: 'string' },
    labels: stringMap,
    annotations: stringMap,
    finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    ownerReferences: {
      type: 'array',
      // An owner reference is owned whole (OwnerReference is +structType=atomic in ObjectMeta).
      items: {
        type: 'object',
        'x-kubernetes-map-type': 'atomic',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          name: { type: 'string' },
          uid: { type: 'string' },
          controller: { type: 'boolean' },
          blockOwnerDeletion: { type: 'boolean' },
        },
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
    },
    managedFields: { type: 'array' },
  },
};

/** The schema of a whole object: apiVersion, kind, ObjectMeta, and the resource's spec and status. */
export function objectSchema(spec: unknown, status?: unknown): TypeSchema {
  return fromJsonSchema({
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: OBJECT_META_SCHEMA,
      spec: spec ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      status: status ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  });
}

/** The schema of a map's entry `key`: its declared field, else the map's element type. */
export function childOf(s: TypeSchema & { type: 'map' }, key: string): { schema: TypeSchema; declared: boolean } {
  const f = s.fields[key];
  if (f) return { schema: f, declared: true };
  return { schema: s.element ?? DEDUCED, declared: false };
}
