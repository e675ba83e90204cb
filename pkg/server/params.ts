// Query parameter parsing shared by the routes: strict, with field-named 400s.

import { badRequest, type Cause, invalid } from '../api/errors.js';
import { DEFAULT_NAMESPACE, NAMESPACE_PATTERN } from '../api/meta.js';

const nsRe = new RegExp(NAMESPACE_PATTERN);

export type Query = Record<string, string | string[] | undefined>;

export function namespaceOf(q: Query): string {
  const ns = single(q, 'namespace');
  if (ns === undefined || ns === '') return DEFAULT_NAMESPACE;
  if (ns.length > 63 || !nsRe.test(ns)) {
    throw invalid('namespace', ns, [{ field: 'namespace', message: 'must be a DNS label (lowercase letters, digits, hyphens)' }]);
  }
  return ns;
}

/** An integer query parameter in [min, max], or the default when absent. */
export function intParam(q: Query, name: string, opts: { min: number; max?: number; default?: number }): number | undefined {
  const raw = single(q, name);
  if (raw === undefined) return opts.default;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < opts.min || (opts.max !== undefined && n > opts.max)) {
    const range = opts.max !== undefined ? `from ${opts.min} to ${opts.max}` : `${opts.min} or more`;
    const cause: Cause = { field: name, message: `must be an integer ${range}` };
    throw invalid('query', undefined, [cause]);
  }
  return n;
}

function single(q: Query, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) throw badRequest(`query parameter "${name}" is given more than once`);
  return v;
}
