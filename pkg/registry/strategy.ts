// A strategy holds one resource's rules, as in Kubernetes' sample-apiserver: defaults, validation,
// what create and update may change. The generic Registry applies it on every write path
// (REST, aggregated API, controllers), so each rule lives in exactly one place.

import type { ApiError, Cause } from '../api/errors.js';
import type { StoredObject } from './store.js';

export interface Strategy<T extends StoredObject> {
  readonly kind: string;
  /** Sets defaults and the initial status of a new object. */
  prepareForCreate(obj: T): void;
  /** Carries over what a spec update must not change (status), bumps generation on spec change. */
  prepareForUpdate(obj: T, old: T): void;
  validate(obj: T): Cause[];
  /** Update-only rules; may return an ApiError (e.g. Conflict) rather than causes. */
  validateUpdate(obj: T, old: T): Cause[] | ApiError;
  /** When true, delete marks the object and a controller removes it after cleanup. */
  readonly finalized: boolean;
}
