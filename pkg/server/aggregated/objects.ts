// Decoding of a request's object (create, update, the result of a patch) into the stored shape,
// with Kubernetes' checks: apiVersion/kind, name and namespace against the URL, metadata types,
// label syntax, unknown fields per fieldValidation. Status is ignored: it is read-only here.

import { randomBytes } from 'node:crypto';
import { badRequest, type Cause, conflict, invalid } from '../../api/errors.js';
import { API_VERSION, type OwnerReference } from '../../api/meta.js';
import type { StoredObject } from '../../registry/store.js';
import type { FieldValidation } from './query.js';
import type { ResourceDef } from './resources.js';

const TOP_LEVEL = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
const METADATA = new Set([
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'labels',
  'annotations',
  'finalizers',
  'ownerReferences',
  // Accepted and not taken from the request: the field manager keeps managedFields.
  'managedFields',
  // Accepted and not kept: the stores have no use for them.
  'selfLink',
  'deletionGracePeriodSeconds',
]);

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export interface DecodeContext {
  namespace: string;
  /** The name in the URL (update, patch); absent on create. */
  name?: string;
  validation: FieldValidation;
}

export interface Decoded<T> {
  obj: T;
  /** Unknown fields under fieldValidation=Warn (sent as Warning headers). */
  warnings: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

export function decodeObject<T extends StoredObject>(def: ResourceDef, body: unknown, ctx: DecodeContext): Decoded<T> {
  if (!isObject(body)) throw badRequest(`the request body must be a JSON object (a ${def.kind})`);
  const { apiVersion, kind } = body;
  if (apiVersion !== undefined && apiVersion !== API_VERSION) {
    throw badRequest(
      `the API version in the data (${typeof apiVersion === 'string' ? apiVersion : JSON.stringify(apiVersion)}) does not match the expected API version (${API_VERSION})`,
    );
  }
  if (kind !== undefined && kind !== def.kind)
    throw badRequest(`the kind in the data (${typeof kind === 'string' ? kind : JSON.stringify(kind)}) does not match the expected kind (${def.kind})`);
  const meta = body.metadata ?? {};
  if (!isObject(meta)) throw badRequest('metadata must be an object');

  const unknown = [
    ...Object.keys(body).filter((k) => !TOP_LEVEL.has(k)),
    ...Object.keys(meta)
      .filter((k) => !METADATA.has(k))
      .map((k) => `metadata.${k}`),
  ];
  if (unknown.length && ctx.validation === 'Strict') {
    throw badRequest(`strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`);
  }
  const warnings = ctx.validation === 'Warn' ? unknown.map((f) => `unknown field "${f}"`) : [];

  const str = (field: string): string | undefined => {
    const v = meta[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw invalid(def.kind, ctx.name, [{ field: `metadata.${field}`, message: 'must be a string' }]);
    return v;
  };
  let name = str('name') || undefined;
  const generateName = str('generateName');
  const namespace = str('namespace');
  if (ctx.name !== undefined) {
    if (name !== undefined && name !== ctx.name) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${ctx.name})`);
    name = ctx.name;
  }
  if (namespace && namespace !== ctx.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (name === undefined) {
    if (!generateName) throw invalid(def.kind, undefined, [{ field: 'metadata.name', message: 'is required (name or generateName)' }]);
    name = generateName + randomLetters(5);
  }

  const causes: Cause[] = [];
  const labels = stringMap(meta.labels, 'metadata.labels', causes);
  const annotations = stringMap(meta.annotations, 'metadata.annotations', causes);
  if (labels) causes.push(...labelCauses(labels));
  const finalizers = stringList(meta.finalizers, 'metadata.finalizers', causes);
  const ownerReferences = ownerRefs(meta.ownerReferences, causes);
  const spec = body.spec ?? {};
  if (!isObject(spec)) causes.push({ field: 'spec', message: 'must be an object' });
  if (causes.length) throw invalid(def.kind, name, causes);

  const obj = {
    apiVersion: API_VERSION,
    kind: def.kind,
    metadata: {
      name,
      namespace: ctx.namespace,
      uid: str('uid') ?? '',
      resourceVersion: str('resourceVersion') ?? '',
      generation: 0,
      creationTimestamp: '',
      ...(labels ? { labels } : {}),
      ...(annotations ? { annotations } : {}),
      ...(finalizers?.length ? { finalizers } : {}),
      ...(ownerReferences?.length ? { ownerReferences } : {}),
    },
    spec: structuredClone(spec),
    status: {},
  } as unknown as T;
  return { obj, warnings };
}

/**
 * Carries what a write may change (spec, labels, annotations, finalizers, owner references) from `incoming` onto the stored
 * object, after its preconditions: a resourceVersion or uid in the incoming object must match.
 */
export function applyIncoming<T extends StoredObject>(def: ResourceDef, cur: T, incoming: T): void {
  const m = incoming.metadata;
  if (m.resourceVersion && m.resourceVersion !== cur.metadata.resourceVersion) {
    throw conflict('the object has been modified; please apply your changes to the latest version and try again', { kind: def.kind, name: cur.metadata.name });
  }
  if (m.uid && m.uid !== cur.metadata.uid) {
    throw conflict(`Precondition failed: UID in precondition: ${m.uid}, UID in object meta: ${cur.metadata.uid}`, { kind: def.kind, name: cur.metadata.name });
  }
  cur.spec = structuredClone(incoming.spec);
  // Set only by an apply (the applier's entry); otherwise the field manager works from the live ones.
  if (m.managedFields) cur.metadata.managedFields = m.managedFields;
  if (m.labels && Object.keys(m.labels).length) cur.metadata.labels = { ...m.labels };
  else delete cur.metadata.labels;
  if (m.annotations && Object.keys(m.annotations).length) cur.metadata.annotations = { ...m.annotations };
  else delete cur.metadata.annotations;
  if (m.finalizers) cur.metadata.finalizers = [...m.finalizers];
  else delete cur.metadata.finalizers;
  if (m.ownerReferences) cur.metadata.ownerReferences = structuredClone(m.ownerReferences);
  else delete cur.metadata.ownerReferences;
}

function stringList(v: unknown, field: string, causes: Cause[]): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    causes.push({ field, message: 'must be a list of strings' });
    return undefined;
  }
  return [...v];
}

/** The wire shape of metadata.ownerReferences; the registry validates the content (deletion.ts). */
function ownerRefs(v: unknown, causes: Cause[]): OwnerReference[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    causes.push({ field: 'metadata.ownerReferences', message: 'must be a list of owner references' });
    return undefined;
  }
  const out: OwnerReference[] = [];
  v.forEach((r: unknown, i) => {
    const at = `metadata.ownerReferences[${i}]`;
    if (!isObject(r)) return void causes.push({ field: at, message: 'must be an object' });
    const ref: Record<string, unknown> = {};
    for (const k of ['apiVersion', 'kind', 'name', 'uid'] as const) {
      if (r[k] === undefined || r[k] === null) continue;
      if (typeof r[k] !== 'string') causes.push({ field: `${at}.${k}`, message: 'must be a string' });
      else ref[k] = r[k];
    }
    for (const k of ['controller', 'blockOwnerDeletion'] as const) {
      if (r[k] === undefined || r[k] === null) continue;
      if (typeof r[k] !== 'boolean') causes.push({ field: `${at}.${k}`, message: 'must be a boolean' });
      else ref[k] = r[k];
    }
    out.push({ apiVersion: '', kind: '', name: '', uid: '', ...ref });
  });
  return out;
}

function stringMap(v: unknown, field: string, causes: Cause[]): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v) || !Object.values(v).every((x) => typeof x === 'string')) {
    causes.push({ field, message: 'must be a map of string keys to string values' });
    return undefined;
  }
  return v as Record<string, string>;
}

function labelCauses(labels: Record<string, string>): Cause[] {
  const causes: Cause[] = [];
  for (const [k, v] of Object.entries(labels)) {
    const slash = k.indexOf('/');
    const prefix = slash >= 0 ? k.slice(0, slash) : undefined;
    const name = slash >= 0 ? k.slice(slash + 1) : k;
    if (!(name.length <= 63 && LABEL_NAME.test(name) && (prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix))))) {
      causes.push({
        field: `metadata.labels`,
        message: `"${k}" is not a valid label key (an optional DNS prefix and "/", then at most 63 alphanumerics, "-", "_" or ".")`,
      });
    }
    if (v.length > 63 || !LABEL_VALUE.test(v)) {
      causes.push({
        field: `metadata.labels.${k}`,
        message: `"${v}" is not a valid label value (at most 63 alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric)`,
      });
    }
  }
  return causes;
}

/** generateName suffixes: random lowercase letters, valid at either end of a DNS-1123 label. */
function randomLetters(n: number): string {
  return [...randomBytes(n)].map((b) => String.fromCharCode(97 + (b % 26))).join('');
}
