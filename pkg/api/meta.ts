// Object shape shared by every resource: Kubernetes' ObjectMeta, so the same stored object can be
// served by the REST mirror and by the aggregated API without translation of identity fields.

export const GROUP = 'agentplane.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const DEFAULT_NAMESPACE = 'default';

/**
 * Object names (agents, squads, connectors, secrets) are Kubernetes DNS-1123 labels: they become
 * pod, volume and Secret names in the cluster home. Every name the spec allows is one.
 */
export const NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const NAME_MAX_LENGTH = 63;
export const NAME_RULE = 'lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63 characters';
/** Namespaces follow the same DNS label rule. */
export const NAMESPACE_PATTERN = NAME_PATTERN;
export const NAMESPACE_RULE = `a DNS label: ${NAME_RULE}`;

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  creationTimestamp: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** While any remain, a deleted object stays (with deletionTimestamp); see deletion.ts. */
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  /** Field ownership (server-side apply), kept by the registry's field manager on every write. */
  managedFields?: ManagedFieldsEntry[];
}

/** metav1.OwnerReference: kube-controller-manager's garbage collector deletes orphaned dependents. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ManagedFieldsEntry: the fields one manager owns, in the FieldsV1 encoding. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

export interface Resource<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status: Status;
}

export interface ObjectRef {
  namespace: string;
  name: string;
}

export const refKey = (ref: ObjectRef): string => `${ref.namespace}/${ref.name}`;

/** The inverse of refKey. Namespaces and names never contain '/', so the first one splits. */
export const parseRefKey = (key: string): ObjectRef => {
  const i = key.indexOf('/');
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
};
