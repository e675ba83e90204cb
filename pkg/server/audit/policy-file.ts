// Reads an audit.k8s.io/v1 Policy file (YAML or JSON) for --audit-policy-file, the subset of
// kube-apiserver's that applies here (docs/audit.md "Policy file"). Read once at start-up; a
// file that does not parse, or names an unknown level, stage or field, stops start-up with an
// error naming the place (`rules[1].level`).

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { AUDIT_STAGES, type AuditLevel, type AuditPolicy, type AuditStage, type GroupResources, type PolicyRule } from './policy.js';

export class AuditPolicyError extends Error {}

/** The levels a policy file may name; RequestResponse is written as Request (policy.ts). */
const FILE_LEVELS: Record<string, AuditLevel> = { None: 'None', Metadata: 'Metadata', Request: 'Request', RequestResponse: 'Request' };
const POLICY_FIELDS = ['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields'];
const RULE_FIELDS = ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields'];
const GROUP_RESOURCE_FIELDS = ['group', 'resources', 'resourceNames'];

/** Reads and checks the policy at `path`; `defaultLevel` applies when no rule matches. */
export function loadAuditPolicy(path: string, defaultLevel: AuditLevel): AuditPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AuditPolicyError(`audit policy ${path}: cannot read: ${(err as Error).message}`);
  }
  try {
    return parseAuditPolicy(text, defaultLevel);
  } catch (err) {
    if (err instanceof AuditPolicyError) throw new AuditPolicyError(`audit policy ${path}: ${err.message}`);
    throw err;
  }
}

export function parseAuditPolicy(text: string, defaultLevel: AuditLevel): AuditPolicy {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new AuditPolicyError(`not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const d = mapping(doc, 'the document', POLICY_FIELDS);
  if (d.apiVersion !== 'audit.k8s.io/v1' || d.kind !== 'Policy') {
    throw new AuditPolicyError(
      `expected apiVersion: audit.k8s.io/v1 and kind: Policy, got ${JSON.stringify(d.apiVersion ?? null)} and ${JSON.stringify(d.kind ?? null)}`,
    );
  }
  if (!Array.isArray(d.rules)) throw new AuditPolicyError('"rules" must be a list of rules (the first that matches a request sets its level)');
  return {
    rules: d.rules.map((r, i) => parseRule(r, `rules[${i}]`)),
    defaultLevel,
    omitStages: stages(d.omitStages, 'omitStages'),
    omitManagedFields: bool(d.omitManagedFields, 'omitManagedFields') ?? false,
  };
}

function parseRule(raw: unknown, at: string): PolicyRule {
  const r = mapping(raw, at, RULE_FIELDS);
  if (typeof r.level !== 'string' || !(r.level in FILE_LEVELS)) {
    throw new AuditPolicyError(`${at}.level: must be one of ${Object.keys(FILE_LEVELS).join(', ')}, got ${JSON.stringify(r.level ?? null)}`);
  }
  const rule: PolicyRule = {
    level: FILE_LEVELS[r.level],
    users: strings(r.users, `${at}.users`),
    userGroups: strings(r.userGroups, `${at}.userGroups`),
    verbs: strings(r.verbs, `${at}.verbs`),
    resources: list(r.resources, `${at}.resources`).map((gr, i) => parseGroupResources(gr, `${at}.resources[${i}]`)),
    namespaces: strings(r.namespaces, `${at}.namespaces`),
    nonResourceURLs: strings(r.nonResourceURLs, `${at}.nonResourceURLs`),
    omitStages: stages(r.omitStages, `${at}.omitStages`),
  };
  const omitManagedFields = bool(r.omitManagedFields, `${at}.omitManagedFields`);
  if (omitManagedFields !== undefined) rule.omitManagedFields = omitManagedFields;
  // As kube-apiserver's validation: a rule is about resources or about other paths, not both.
  if (rule.nonResourceURLs.length > 0 && (rule.resources.length > 0 || rule.namespaces.length > 0)) {
    throw new AuditPolicyError(`${at}: a rule with nonResourceURLs cannot also name resources or namespaces`);
  }
  for (const [i, u] of rule.nonResourceURLs.entries()) {
    if (!u.startsWith('/') && u !== '*') throw new AuditPolicyError(`${at}.nonResourceURLs[${i}]: must start with "/" (or be "*"), got ${JSON.stringify(u)}`);
    if (u.slice(0, -1).includes('*')) throw new AuditPolicyError(`${at}.nonResourceURLs[${i}]: "*" may only end a path, got ${JSON.stringify(u)}`);
  }
  return rule;
}

function parseGroupResources(raw: unknown, at: string): GroupResources {
  const g = mapping(raw, at, GROUP_RESOURCE_FIELDS);
  if (g.group !== undefined && typeof g.group !== 'string') throw new AuditPolicyError(`${at}.group: must be a string ("" for the core group)`);
  const resources = strings(g.resources, `${at}.resources`);
  for (const [i, res] of resources.entries()) {
    if (res === '' || res.split('/').length > 2)
      throw new AuditPolicyError(`${at}.resources[${i}]: must be "resource" or "resource/subresource", got ${JSON.stringify(res)}`);
  }
  const resourceNames = strings(g.resourceNames, `${at}.resourceNames`);
  return { group: g.group ?? '', resources, resourceNames };
}

function mapping(v: unknown, at: string, fields: string[]): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new AuditPolicyError(`${at}: must be a mapping`);
  const unknown = Object.keys(v).find((k) => !fields.includes(k));
  if (unknown !== undefined) throw new AuditPolicyError(`${at}: unknown field ${JSON.stringify(unknown)} (known: ${fields.join(', ')})`);
  return v as Record<string, unknown>;
}

function list(v: unknown, at: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new AuditPolicyError(`${at}: must be a list`);
  return v;
}

function strings(v: unknown, at: string): string[] {
  const l = list(v, at);
  const bad = l.findIndex((s) => typeof s !== 'string');
  if (bad >= 0) throw new AuditPolicyError(`${at}[${bad}]: must be a string`);
  return l as string[];
}

function stages(v: unknown, at: string): AuditStage[] {
  const l = strings(v, at);
  const bad = l.findIndex((s) => !(AUDIT_STAGES as readonly string[]).includes(s));
  if (bad >= 0) throw new AuditPolicyError(`${at}[${bad}]: must be one of ${AUDIT_STAGES.join(', ')}, got ${JSON.stringify(l[bad])}`);
  return l as AuditStage[];
}

function bool(v: unknown, at: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new AuditPolicyError(`${at}: must be true or false`);
  return v;
}
