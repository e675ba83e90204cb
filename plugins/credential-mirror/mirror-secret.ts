// What a mirror Secret is and should be: how one of ours is recognised, the Secret a namespace
// should hold, and whether a stored one already is that.

import type { V1Secret } from '@kubernetes/client-node';
import { COMPONENT_LABEL, MANAGED_BY, MANAGED_BY_LABEL, MIRRORED_FROM_LABEL, MODEL_CREDENTIAL_COMPONENT } from '../../pkg/api/secret.js';

/** The Secret is a mirror this installation (its install namespace) made. */
export function isMirror(s: V1Secret, installNamespace: string): boolean {
  const l = s.metadata?.labels ?? {};
  return l[MANAGED_BY_LABEL] === MANAGED_BY && l[MIRRORED_FROM_LABEL] === installNamespace;
}

/** The mirror a namespace should hold: Opaque, our labels, the source's data. */
export function desiredMirror(name: string, ns: string, installNamespace: string, source: V1Secret): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name,
      namespace: ns,
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [COMPONENT_LABEL]: MODEL_CREDENTIAL_COMPONENT,
        [MIRRORED_FROM_LABEL]: installNamespace,
      },
    },
    data: { ...(source.data ?? {}) },
  };
}

/** The stored mirror made right: our labels and the data; others' labels and annotations kept. */
export function repairedMirror(cur: V1Secret, want: V1Secret): V1Secret {
  return {
    ...want,
    metadata: { ...cur.metadata, labels: { ...cur.metadata?.labels, ...want.metadata!.labels } },
  };
}

/** The mirror is as it should be: Opaque, our labels, exactly the source's data. */
export function sameMirror(cur: V1Secret, want: V1Secret): boolean {
  if ((cur.type ?? 'Opaque') !== 'Opaque' || cur.immutable) return false;
  const labels = cur.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(want.metadata!.labels!)) if (labels[k] !== v) return false;
  const a = cur.data ?? {};
  const b = want.data ?? {};
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}

/** The HTTP status of a failed Kubernetes call, however the client reports it. */
export const codeOf = (err: unknown): number | undefined => {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  return typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
};
