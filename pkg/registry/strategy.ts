// A strategy holds one resource's rules, as in Kubernetes' sample-apiserver: defaults, validation,
// what create and update may change, how the resource prints as a table and which fields a
// field selector may name. The generic Registry applies it on every write path (REST, aggregated
// API, controllers), so each rule lives in exactly one place.

import type { ApiError, Cause } from '../api/errors.js';
import type { StoredObject } from './store.js';

export interface Strategy<T extends StoredObject> {
  readonly kind: string;
  /**
   * The spec's JSON Schema: its x-kubernetes-list-type / -map-type markers tell the field
   * manager how lists and maps merge on apply (without one, the spec merges as untyped JSON).
   */
  readonly specSchema?: object;
  /** Sets defaults and the initial status of a new object. */
  prepareForCreate(obj: T): void;
  /** Carries over what a spec update must not change (status), bumps generation on spec change. */
  prepareForUpdate(obj: T, old: T): void;
  validate(obj: T): Cause[];
  /** Update-only rules; may return an ApiError (e.g. Conflict) rather than causes. */
  validateUpdate(obj: T, old: T): Cause[] | ApiError;
  /** A status write (spec and metadata kept): sets what the status derives. */
  prepareForStatusUpdate?(obj: T, old: T): void;
  /** Rules of a status write: its writers are controllers, so a cause here is a bug caught early. */
  validateStatusUpdate?(obj: T, old: T): Cause[];
  /** `kubectl get` columns (Kubernetes' TableConvertor). */
  readonly table: TableConvertor<T>;
  /**
   * The fields a field selector may name, with their values for `obj` (Kubernetes' GetAttrs):
   * `metadata.name` and `metadata.namespace` (objectMetaFields) plus the resource's own.
   */
  selectableFields(obj: T): Record<string, string>;
}

/** meta.k8s.io/v1 TableColumnDefinition. */
export interface TableColumnDefinition {
  name: string;
  /** An OpenAPI type: string, integer, number, boolean, date. */
  type: string;
  /** An OpenAPI format; "name" marks the column that identifies the object. */
  format: string;
  description: string;
  /** 0: always shown; 1 and more: only with `-o wide`. */
  priority: number;
}

export interface TableConvertor<T> {
  readonly columns: TableColumnDefinition[];
  /** One cell per column; null prints as `<none>`. `now` is for ages. */
  row(obj: T, now: number): unknown[];
}
