// Object shape shared by every resource: Kubernetes' ObjectMeta, so the same stored object can be
// served by the REST mirror and by the aggregated API without translation of identity fields.

export const GROUP = 'agentplane.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const DEFAULT_NAMESPACE = 'default';

/** Agent and connector names: lowercase letters and hyphens, starting and ending with a letter. */
export const NAME_PATTERN = '^[a-z]([-a-z]*[a-z])?$';
export const NAME_MAX_LENGTH = 63;
/** Namespaces follow Kubernetes' DNS label rule. */
export const NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

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
