// Pod templates: what an agent's `templateRef` names in the cluster home. A template is a
// ConfigMap in the install namespace labelled `agentplane.io/template=<name>` whose
// `template.yaml` key holds the fields below (docs/kubernetes-runtime.md "Templates"). The
// template "default" exists always: the server's flags give it, and a ConfigMap for "default"
// overrides them field by field.

import type { V1ResourceRequirements, V1Toleration } from '@kubernetes/client-node';
import { loadYaml } from '@kubernetes/client-node';
import { deadlineSecondsProblem, type TemplateSettings } from '../../api/template-settings.js';

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
}

export const BUILTIN_TEMPLATE: Omit<WorkerTemplate, 'image'> = {
  imagePullPolicy: 'IfNotPresent',
  runAsUser: 10001,
  runAsGroup: 10001,
  storage: { size: '1Gi' },
};

const PULL = ['Always', 'IfNotPresent', 'Never'];
const FIELDS = ['image', 'imagePullPolicy', 'resources', 'nodeSelector', 'tolerations', 'runAsUser', 'runAsGroup', 'storage', 'modelTaskDeadlineSeconds'];

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
    throw new Error(`${TEMPLATE_KEY} is not YAML: ${(err as Error).message}`);
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
  if (doc.resources !== undefined) t.resources = obj(doc.resources, 'resources') as V1ResourceRequirements;
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
  if (!t.image) throw new Error('image is required');
  return t;
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
