// Pod templates: what an agent's `templateRef` names in the cluster home. A template is a
// ConfigMap in the install namespace labelled `agentplane.io/template=<name>` whose
// `template.yaml` key holds the fields below (docs/kubernetes-runtime.md "Templates"). The
// template "default" exists always: the server's flags give it, and a ConfigMap for "default"
// overrides them field by field.

import type { V1ResourceRequirements, V1Toleration } from '@kubernetes/client-node';
import { loadYaml } from '@kubernetes/client-node';
import { deadlineSecondsProblem, egressSettings, type TemplateSettings } from '../../api/template-settings.js';
import { type Role, ROLES } from '../../api/agent.js';
import { NAME_MAX_LENGTH, NAMESPACE_PATTERN } from '../../api/meta.js';

export const TEMPLATE_LABEL = 'agentplane.io/template';
export const TEMPLATE_KEY = 'template.yaml';

export interface WorkerTemplate extends TemplateSettings {
  image: string;
  imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  resources?: V1ResourceRequirements;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  /** The worker's user and group (non-root); also the pod's fsGroup. */
  runAsUser: number;
  runAsGroup: number;
  /** The workspace claim: its size and storage class (the cluster's default when absent). */
  storage: { size: string; storageClassName?: string };
  /** Pods made ahead of any agent, for new solo agents of this template to take (./pod-pool.ts). */
  warmPool?: PodPoolSettings;
}

/** A template's warm pool: `size` ready pods in each of `namespaces`, made for agents of `role`. */
export interface PodPoolSettings {
  size: number;
  /** Where (a pod cannot move to another namespace). */
  namespaces: string[];
  /** The role its pods are made for (a manager's pod has its namespace's service account); default manager, the agents' default. */
  role: Role;
}

/** At most this many pods per namespace: a pool holds claims and pods that cost whether used or not. */
const MAX_POOL_SIZE = 20;
const NAMESPACE = new RegExp(NAMESPACE_PATTERN);

export const BUILTIN_TEMPLATE: Omit<WorkerTemplate, 'image'> = {
  imagePullPolicy: 'IfNotPresent',
  runAsUser: 10001,
  runAsGroup: 10001,
  storage: { size: '1Gi' },
};

const PULL = ['Always', 'IfNotPresent', 'Never'];
const FIELDS = [
  'image',
  'imagePullPolicy',
  'resources',
  'nodeSelector',
  'tolerations',
  'runAsUser',
  'runAsGroup',
  'storage',
  'modelTaskDeadlineSeconds',
  'warmPool',
  'egress',
  'egressAllow',
];

/**
 * Reads a template's YAML over `base`. Throws an Error whose message names the field, so a bad
 * ConfigMap is reported (and skipped) rather than making pods that cannot start.
 */
export function parseTemplate(yaml: string, base: WorkerTemplate): WorkerTemplate {
  if (!yaml.trim()) return base;
  let doc: Record<string, unknown> | null;
  try {
    doc = loadYaml(yaml);
  } catch (err) {
    throw new Error(`${TEMPLATE_KEY} is not YAML: ${(err as Error).message}`, { cause: err });
  }
  if (doc === null || doc === undefined) return base;
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${TEMPLATE_KEY} must be a mapping`);
  const unknown = Object.keys(doc).filter((k) => !FIELDS.includes(k));
  if (unknown.length) throw new Error(`unknown field(s) ${unknown.join(', ')}; known: ${FIELDS.join(', ')}`);
  const t: WorkerTemplate = { ...base, storage: { ...base.storage } };
  if (doc.image !== undefined) t.image = str(doc.image, 'image');
  if (doc.imagePullPolicy !== undefined) {
    const p = str(doc.imagePullPolicy, 'imagePullPolicy');
    if (!PULL.includes(p)) throw new Error(`imagePullPolicy must be one of ${PULL.join(', ')}`);
    t.imagePullPolicy = p as WorkerTemplate['imagePullPolicy'];
  }
  if (doc.resources !== undefined) t.resources = obj(doc.resources, 'resources');
  if (doc.nodeSelector !== undefined) t.nodeSelector = strings(doc.nodeSelector, 'nodeSelector');
  if (doc.tolerations !== undefined) {
    if (!Array.isArray(doc.tolerations)) throw new Error('tolerations must be a list');
    t.tolerations = doc.tolerations as V1Toleration[];
  }
  for (const k of ['runAsUser', 'runAsGroup'] as const) {
    if (doc[k] === undefined) continue;
    const n = doc[k];
    // Workers never run as root: their tools run whatever the model asks for.
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new Error(`${k} must be a positive integer (workers never run as root)`);
    t[k] = n;
  }
  if (doc.storage !== undefined) {
    const s = obj(doc.storage, 'storage');
    if (s.size !== undefined) t.storage.size = str(s.size, 'storage.size');
    if (s.storageClassName !== undefined) t.storage.storageClassName = str(s.storageClassName, 'storage.storageClassName');
  }
  if (doc.modelTaskDeadlineSeconds !== undefined) {
    const problem = deadlineSecondsProblem(doc.modelTaskDeadlineSeconds);
    if (problem) throw new Error(`modelTaskDeadlineSeconds ${problem}`);
    t.modelTaskDeadlineSeconds = doc.modelTaskDeadlineSeconds as number;
  }
  if (doc.egress !== undefined || doc.egressAllow !== undefined) {
    // Over what it inherits: a mode of its own drops an inherited allow-list unless it is Proxy again.
    const e = egressSettings(doc.egress ?? base.egress, doc.egressAllow);
    if ('field' in e) throw new Error(`${e.field} ${e.message}`);
    delete t.egress;
    delete t.egressAllow;
    if (e.egress) t.egress = e.egress;
    const allow = e.egressAllow ?? (e.egress === 'Proxy' ? base.egressAllow : undefined);
    if (allow) t.egressAllow = allow;
  }
  if (doc.warmPool !== undefined) {
    const pool = poolSettings(doc.warmPool);
    if (pool) t.warmPool = pool;
    else delete t.warmPool;
  }
  if (!t.image) throw new Error('image is required');
  return t;
}

function poolSettings(v: unknown): PodPoolSettings | undefined {
  if (v === null) return undefined; // `warmPool: null` turns an inherited pool off
  const o = obj(v, 'warmPool');
  const unknown = Object.keys(o).filter((k) => !['size', 'namespaces', 'role'].includes(k));
  if (unknown.length) throw new Error(`warmPool: unknown field(s) ${unknown.join(', ')}; known: size, namespaces, role`);
  const size = o.size;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || size > MAX_POOL_SIZE)
    throw new Error(`warmPool.size must be a whole number from 0 to ${MAX_POOL_SIZE}`);
  if (!Array.isArray(o.namespaces) || o.namespaces.some((n) => typeof n !== 'string' || n.length > NAME_MAX_LENGTH || !NAMESPACE.test(n))) {
    throw new Error('warmPool.namespaces must be a list of namespace names');
  }
  const role = o.role ?? 'manager';
  if (!ROLES.includes(role as Role)) throw new Error(`warmPool.role must be one of ${ROLES.join(', ')}`);
  return { size, namespaces: [...new Set(o.namespaces as string[])], role: role as Role };
}

function str(v: unknown, field: string): string {
  if (typeof v !== 'string' || !v) throw new Error(`${field} must be a non-empty string`);
  return v;
}

function obj(v: unknown, field: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${field} must be a mapping`);
  return v as Record<string, unknown>;
}

function strings(v: unknown, field: string): Record<string, string> {
  const o = obj(v, field);
  for (const [k, x] of Object.entries(o)) if (typeof x !== 'string') throw new Error(`${field}.${k} must be a string`);
  return o as Record<string, string>;
}
