// Deletion as Kubernetes does it: finalizers hold a deleted object (it keeps a deletionTimestamp
// until the last one is removed), owner references tie dependents to owners for
// kube-controller-manager's garbage collector, and a DELETE's propagationPolicy chooses how.
// The rules below are kube-apiserver's ObjectMeta validation of the two fields.

import type { Cause } from './errors.js';
import type { ObjectMeta, OwnerReference } from './meta.js';

/** Set by propagationPolicy=Orphan: the garbage collector orphans the dependents, then removes it. */
export const FINALIZER_ORPHAN = 'orphan';
/** Set by propagationPolicy=Foreground: the garbage collector deletes the dependents first. */
export const FINALIZER_FOREGROUND = 'foregroundDeletion';
/**
 * agentplane's own: set on every agent at create, removed by the agent controller once the
 * agent's worker and workspace are gone and no other finalizer remains (see pkg/controller/agent-finalizer.ts).
 */
export const FINALIZER_AGENT_CLEANUP = 'agentplane.io/cleanup';
/** The finalizers agentplane adds itself: no field manager owns them. */
export const SERVER_FINALIZERS: readonly string[] = [FINALIZER_AGENT_CLEANUP];

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';
export const PROPAGATION_POLICIES: readonly PropagationPolicy[] = ['Background', 'Foreground', 'Orphan'];

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Kubernetes' IsQualifiedName: an optional DNS subdomain prefix and "/", then a name of at most 63. */
export function isQualifiedName(v: string): boolean {
  const slash = v.indexOf('/');
  const prefix = slash >= 0 ? v.slice(0, slash) : undefined;
  const name = slash >= 0 ? v.slice(slash + 1) : v;
  if (prefix !== undefined && !(prefix.length > 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}

/**
 * metadata.finalizers: qualified names, either domain-prefixed (`example.com/x`) or one of the
 * two standard ones the garbage collector acts on; never both of those at once.
 */
export function validateFinalizers(finalizers: string[] | undefined): Cause[] {
  const causes: Cause[] = [];
  (finalizers ?? []).forEach((f, i) => {
    const field = `metadata.finalizers[${i}]`;
    if (!isQualifiedName(f)) {
      causes.push({ field, message: `"${f}" is not a qualified name (an optional DNS subdomain and "/", then at most 63 alphanumerics, "-", "_" or ".")` });
    } else if (!f.includes('/') && f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND) {
      causes.push({ field, message: `"${f}" is neither a standard finalizer name (orphan, foregroundDeletion) nor fully qualified (e.g. example.com/${f})` });
    }
  });
  if (finalizers?.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    causes.push({ field: 'metadata.finalizers', message: `"${FINALIZER_ORPHAN}" and "${FINALIZER_FOREGROUND}" cannot both be set` });
  }
  return causes;
}

/** metadata.ownerReferences: apiVersion, kind, name and uid on each; at most one controller. */
export function validateOwnerReferences(refs: OwnerReference[] | undefined): Cause[] {
  const causes: Cause[] = [];
  const controllers: string[] = [];
  (refs ?? []).forEach((r, i) => {
    const at = `metadata.ownerReferences[${i}]`;
    if (!r.apiVersion) causes.push({ field: `${at}.apiVersion`, message: 'must not be empty (version, or group/version, of the owner)' });
    else if (r.apiVersion.split('/').length > 2) causes.push({ field: `${at}.apiVersion`, message: `"${r.apiVersion}" is not a version or group/version` });
    if (!r.kind) causes.push({ field: `${at}.kind`, message: "must not be empty (the owner's kind)" });
    if (!r.name) causes.push({ field: `${at}.name`, message: "must not be empty (the owner's name)" });
    if (!r.uid) causes.push({ field: `${at}.uid`, message: "must not be empty (the owner's metadata.uid)" });
    if (r.controller) controllers.push(`${r.kind}/${r.name}`);
  });
  if (controllers.length > 1) {
    causes.push({
      field: 'metadata.ownerReferences',
      message: `only one reference can have controller set to true; found "true" in references for ${controllers.join(' and ')}`,
    });
  }
  return causes;
}

/** The finalizers a DELETE with `policy` leaves on the object (Kubernetes' deletionFinalizersForGarbageCollection). */
export function finalizersForPolicy(finalizers: string[], policy: PropagationPolicy | undefined): string[] {
  if (policy === undefined) return finalizers;
  const others = finalizers.filter((f) => f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND);
  if (policy === 'Orphan') return [...others, FINALIZER_ORPHAN];
  if (policy === 'Foreground') return [...others, FINALIZER_FOREGROUND];
  return others;
}

export const isDeleting = (meta: ObjectMeta): boolean => !!meta.deletionTimestamp;
