// A namespace's own caps (docs/admission.md), as the embedded home's config file ("namespaces")
// and the cluster home's ConfigMap `agentplane-limits` state them: `{"maxWorkers": 2, "maxTasks": 1}`.

/** Caps of one namespace; absent or 0 means no cap. */
export interface NamespaceLimits {
  workers?: number;
  tasks?: number;
}

/** The ConfigMap in the install namespace whose keys are namespaces and values their caps (JSON). */
export const LIMITS_CONFIGMAP = 'agentplane-limits';

/** Parses one namespace's caps; throws an Error naming `where` and the field at fault. */
export function parseNamespaceLimits(v: unknown, where: string): NamespaceLimits {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${where} must be an object with maxWorkers and/or maxTasks`);
  const out: NamespaceLimits = {};
  for (const [k, n] of Object.entries(v as Record<string, unknown>)) {
    if (k !== 'maxWorkers' && k !== 'maxTasks') throw new Error(`${where}.${k} is not a known field: use maxWorkers or maxTasks`);
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Error(`${where}.${k} must be a whole number, 0 for no limit`);
    out[k === 'maxWorkers' ? 'workers' : 'tasks'] = n;
  }
  return out;
}
