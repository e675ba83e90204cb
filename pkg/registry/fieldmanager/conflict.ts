// The 409 of an apply that would change fields other managers own, worded as kube-apiserver
// words it, with one cause per field.

import { ApiError } from '../../api/errors.js';
import { type Path, pathString } from './fieldset.js';
import type { ManagerId } from './managed.js';

export interface FieldConflict {
  manager: ManagerId;
  path: Path;
}

/** `"m"`, or `"m" using agentplane.io/v1alpha1` for an Update manager (`with subresource "s"` when set). */
export function printManager(m: ManagerId): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  return m.operation === 'Update' ? `${s} using ${m.apiVersion}` : s;
}

export function conflictError(conflicts: FieldConflict[]): ApiError {
  const causes = conflicts.map((c) => ({ field: pathString(c.path), message: `conflict with ${printManager(c.manager)}`, reason: 'FieldManagerConflict' }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${pathString(conflicts[0].path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const m = printManager(c.manager);
      byManager.set(m, [...(byManager.get(m) ?? []), pathString(c.path)]);
    }
    const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${m}:`, ...byManager.get(m)!.map((p) => `- ${p}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError('Conflict', 409, message, { causes });
}
