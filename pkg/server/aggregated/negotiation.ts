// Content negotiation of the Accept header, as kube-apiserver does it for JSON: a plain object,
// a meta.k8s.io Table (kubectl get), or PartialObjectMetadata (metadata-only clients such as
// the garbage collector). Protobuf is not served; a client that also accepts JSON gets JSON.

import { ApiError } from '../../api/errors.js';

export type MetaKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export type Target = { as: 'object' } | { as: MetaKind; /** meta.k8s.io version: v1 or v1beta1. */ version: 'v1' | 'v1beta1' };

interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || !header.trim()) return [];
  const ranges = header.split(',').map((part, i) => {
    const [type = '', ...rest] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0)
        params[p.slice(0, eq).trim().toLowerCase()] = p
          .slice(eq + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1');
    }
    const q = params.q !== undefined ? Number(params.q) : 1;
    return { type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 0, i };
  });
  return ranges.filter((r) => r.type && r.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
}

const jsonLike = (type: string): boolean => type === 'application/json' || type === 'application/*' || type === '*/*';

/**
 * The representation to answer with. `allowed` are the meta.k8s.io kinds this request can be
 * rendered as. Throws 406 NotAcceptable when nothing acceptable is JSON.
 */
export function negotiate(header: string | undefined, allowed: readonly MetaKind[]): Target {
  const ranges = parseAccept(header);
  if (ranges.length === 0) return { as: 'object' };
  for (const r of ranges) {
    if (!jsonLike(r.type)) continue;
    const as = r.params.as;
    if (!as) return { as: 'object' };
    const version = r.params.v;
    if (r.params.g === 'meta.k8s.io' && (version === 'v1' || version === 'v1beta1') && (allowed as readonly string[]).includes(as)) {
      return { as: as as MetaKind, version };
    }
  }
  throw new ApiError(
    'NotAcceptable',
    406,
    `only the following media types are accepted: application/json${allowed.map((k) => `, application/json;as=${k};v=v1;g=meta.k8s.io`).join('')}`,
  );
}
