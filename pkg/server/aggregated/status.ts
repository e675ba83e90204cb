// Errors of this API as kube-apiserver words them: `agents.agentplane.io "x" not found`,
// `Agent.agentplane.io "x" is invalid: ...`, `Operation cannot be fulfilled on ...`, with
// details naming the resource (NotFound, AlreadyExists, Conflict) or the kind (Invalid), so
// kubectl prints what users know from built-in resources.

import { type ApiError, type Status, toStatus } from '../../api/errors.js';
import { GROUP } from '../../api/meta.js';
import type { ResourceDef } from './resources.js';

export function statusOf(err: ApiError, resources: ResourceDef[]): Status {
  const status = toStatus(err, GROUP);
  const d = status.details;
  const def = d?.kind ? resources.find((r) => r.kind === d.kind) : undefined;
  if (!d || !def || !d.name) return status;
  const resource = `${def.plural}.${GROUP}`;
  switch (err.reason) {
    case 'NotFound':
      return { ...status, message: `${resource} "${d.name}" not found`, details: { ...d, kind: def.plural } };
    case 'AlreadyExists':
      return { ...status, message: `${resource} "${d.name}" already exists`, details: { ...d, kind: def.plural } };
    case 'Conflict':
      return {
        ...status,
        message: err.message.startsWith('Operation cannot be fulfilled')
          ? err.message
          : `Operation cannot be fulfilled on ${resource} "${d.name}": ${err.message}`,
        details: { ...d, kind: def.plural },
      };
    case 'Invalid': {
      const prefix = `${def.kind} "${d.name}" is invalid: `;
      const rest = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
      return { ...status, message: `${def.kind}.${GROUP} "${d.name}" is invalid: ${rest}` };
    }
    default:
      return status;
  }
}
