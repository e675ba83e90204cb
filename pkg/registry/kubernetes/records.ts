// How an agentplane object maps onto its storage custom resource (an "XRecord" of the internal
// group). resourceVersion and creationTimestamp come from the record's metadata; everything
// agentplane owns lives in the record's spec, so one update writes the whole object (the CRDs
// have no status subresource). That includes the object's uid: kube-controller-manager's garbage
// collector knows objects by uid, and must not mistake an Agent for its AgentRecord.

import type { ManagedFieldsEntry } from '../../api/meta.js';
import type { StoredObject } from '../store.js';

export const DEFAULT_GROUP = 'internal.agentplane.io';
export const RECORD_VERSION = 'v1alpha1';

export interface RecordNames {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
}

/** Agent -> AgentRecord / agentrecords. */
export function recordNames(kind: string): RecordNames {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) throw new Error(`invalid kind for a storage record: "${kind}"`);
  const singular = `${kind.toLowerCase()}record`;
  return { kind: `${kind}Record`, listKind: `${kind}RecordList`, plural: `${singular}s`, singular };
}

/** The record's spec: agentplane's own metadata fields plus the object itself. */
export interface RecordSpec {
  /** The object's uid, assigned by agentplane at create; absent in records written before it. */
  uid?: string;
  /** agentplane's generation (bumped by strategies on spec changes), not the record's. */
  generation: number;
  /** agentplane's finalization marker; unrelated to the record's own deletionTimestamp. */
  deletionTimestamp?: string;
  /**
   * The object's finalizers and owner references, kept here rather than in the record's own
   * metadata: there, kube-apiserver and its garbage collector would act on the record itself.
   */
  finalizers?: string[];
  ownerReferences?: StoredObject['metadata']['ownerReferences'];
  /** agentplane's field ownership; the record's own metadata.managedFields are the storage client's. */
  managedFields?: ManagedFieldsEntry[];
  object: { apiVersion: string; kind: string; spec: unknown; status: unknown };
}

export interface RecordMeta {
  name: string;
  namespace: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface StorageRecord {
  apiVersion: string;
  kind: string;
  metadata: RecordMeta;
  spec: RecordSpec;
}

export function toRecord(obj: StoredObject, apiVersion: string, recordKind: string, withVersion: boolean): StorageRecord {
  const m = obj.metadata;
  const metadata: RecordMeta = { name: m.name, namespace: m.namespace };
  // On update the resourceVersion is a precondition checked by the API server (enough: a record
  // deleted and created again has a newer one).
  if (withVersion) metadata.resourceVersion = m.resourceVersion;
  if (m.labels) metadata.labels = { ...m.labels };
  if (m.annotations) metadata.annotations = { ...m.annotations };
  const spec: RecordSpec = {
    ...(m.uid ? { uid: m.uid } : {}),
    generation: m.generation,
    object: { apiVersion: obj.apiVersion, kind: obj.kind, spec: obj.spec, status: obj.status },
  };
  if (m.deletionTimestamp) spec.deletionTimestamp = m.deletionTimestamp;
  if (m.finalizers?.length) spec.finalizers = [...m.finalizers];
  if (m.ownerReferences?.length) spec.ownerReferences = structuredClone(m.ownerReferences);
  if (m.managedFields?.length) spec.managedFields = m.managedFields;
  return { apiVersion, kind: recordKind, metadata, spec };
}

export function fromRecord<T extends StoredObject>(rec: StorageRecord): T {
  const m = rec.metadata;
  const s = rec.spec;
  const metadata: StoredObject['metadata'] = {
    name: m.name,
    namespace: m.namespace,
    uid: s.uid ?? m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    generation: s.generation,
    creationTimestamp: m.creationTimestamp ?? '',
  };
  if (s.deletionTimestamp) metadata.deletionTimestamp = s.deletionTimestamp;
  if (s.finalizers?.length) metadata.finalizers = s.finalizers;
  if (s.ownerReferences?.length) metadata.ownerReferences = s.ownerReferences;
  if (s.managedFields?.length) metadata.managedFields = s.managedFields;
  if (m.labels) metadata.labels = m.labels;
  if (m.annotations) metadata.annotations = m.annotations;
  const out = { apiVersion: s.object.apiVersion, kind: s.object.kind, metadata } as StoredObject;
  if (s.object.spec !== undefined) out.spec = s.object.spec;
  if (s.object.status !== undefined) out.status = s.object.status;
  return out as T;
}

/** The uid of the object a record stores (see RecordSpec.uid). */
export const objectUid = (rec: StorageRecord): string | undefined => rec.spec?.uid ?? rec.metadata.uid;
