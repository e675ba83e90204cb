// The audit policy: one level for every audited request, as kube-apiserver's policy levels
// (None, Metadata, Request; RequestResponse is not offered: responses may carry what the
// caller may read but the log's readers may not). Only mutating requests are audited.

import type { RequestAttributes } from '../auth/attributes.js';

export const AUDIT_LEVELS = ['None', 'Metadata', 'Request'] as const;
export type AuditLevel = (typeof AUDIT_LEVELS)[number];

export const isAuditLevel = (s: string): s is AuditLevel => (AUDIT_LEVELS as readonly string[]).includes(s);

/** Kubernetes verbs that change state; get, list and watch are not audited. */
export const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
/** For paths outside any resource (non-resource URLs): the methods that may change state. */
const MUTATING_METHODS = new Set(['post', 'put', 'patch', 'delete']);

export function isMutating(attrs: RequestAttributes): boolean {
  return 'resource' in attrs ? MUTATING_VERBS.has(attrs.resource.verb) : MUTATING_METHODS.has(attrs.nonResource.verb);
}
