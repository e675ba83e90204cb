// The audit policy (docs/audit.md): which level each audited request is written at, as
// kube-apiserver's audit.k8s.io/v1 Policy decides it. Rules are tried in order and the first
// that matches sets the level; when none matches, the default level (--audit-level) does.
// Levels: None, Metadata, Request. RequestResponse (accepted in a policy file) is written as
// Request: responses are never logged, as they may carry what the caller may read but the
// log's readers may not. Only mutating requests are audited, whatever the policy says.

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

/** The stages of kube-apiserver's audit events; only ResponseComplete is written here. */
export const AUDIT_STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = (typeof AUDIT_STAGES)[number];

export interface GroupResources {
  /** The API group; "" for the core group (secrets). */
  group: string;
  /** `resource`, `resource/subresource`, `*`, `*\/subresource` or `resource/*`; empty: all of the group's. */
  resources: string[];
  /** Empty: every name. */
  resourceNames: string[];
}

/** One rule: every list given must match (an empty list matches anything). */
export interface PolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: AuditStage[];
  omitManagedFields?: boolean;
}

export interface AuditPolicy {
  rules: PolicyRule[];
  /** The level of a request no rule matches (--audit-level). */
  defaultLevel: AuditLevel;
  omitStages: AuditStage[];
  omitManagedFields: boolean;
}

export interface AuditDecision {
  level: AuditLevel;
  omitManagedFields: boolean;
}

/** The policy of a plain --audit-level: no rules. */
export const levelPolicy = (level: AuditLevel): AuditPolicy => ({ rules: [], defaultLevel: level, omitStages: [], omitManagedFields: false });

/** Whether the policy can write anything at all (else the log is not installed). */
export const writesAnything = (p: AuditPolicy): boolean =>
  !p.omitStages.includes('ResponseComplete') && (p.defaultLevel !== 'None' || p.rules.some((r) => r.level !== 'None'));

/** The level of one request by `user`, as kube's policy checker decides it. */
export function decide(p: AuditPolicy, attrs: RequestAttributes, user: { username: string; groups: string[] }): AuditDecision {
  const rule = p.rules.find((r) => ruleMatches(r, attrs, user));
  const omitted = p.omitStages.includes('ResponseComplete') || !!rule?.omitStages.includes('ResponseComplete');
  return { level: omitted ? 'None' : (rule?.level ?? p.defaultLevel), omitManagedFields: rule?.omitManagedFields ?? p.omitManagedFields };
}

function ruleMatches(r: PolicyRule, attrs: RequestAttributes, user: { username: string; groups: string[] }): boolean {
  if (r.users.length > 0 && !r.users.includes(user.username)) return false;
  if (r.userGroups.length > 0 && !user.groups.some((g) => r.userGroups.includes(g))) return false;
  const verb = 'resource' in attrs ? attrs.resource.verb : attrs.nonResource.verb;
  if (r.verbs.length > 0 && !r.verbs.includes(verb)) return false;
  if ('resource' in attrs) {
    // A rule about non-resource URLs says nothing about resources.
    if (r.nonResourceURLs.length > 0) return false;
    const a = attrs.resource;
    if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
    return r.resources.length === 0 || r.resources.some((gr) => groupResourceMatches(gr, a.group, a.resource, a.subresource, a.name));
  }
  if (r.resources.length > 0 || r.namespaces.length > 0) return false;
  return r.nonResourceURLs.length === 0 || r.nonResourceURLs.some((spec) => pathMatches(attrs.nonResource.path, spec));
}

function groupResourceMatches(gr: GroupResources, group: string, resource: string, subresource: string, name: string): boolean {
  if (gr.group !== group) return false;
  if (gr.resources.length === 0) return true;
  if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(name)) return false;
  const combined = subresource ? `${resource}/${subresource}` : resource;
  // As kube: `resource/*` covers the resource itself and every subresource of it.
  return gr.resources.some((res) => res === combined || res === '*' || res === `${resource}/*` || (!!subresource && res === `*/${subresource}`));
}

/** A non-resource URL rule: the exact path, `*`, or a prefix ending in `*`. */
function pathMatches(path: string, spec: string): boolean {
  return spec === '*' || spec === path || (spec.endsWith('*') && path.startsWith(spec.slice(0, -1)));
}
