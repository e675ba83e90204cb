// Query parameter parsing shared by the routes: strict, with field-named 400s.

import { badRequest, type Cause, invalid } from '../api/errors.js';
import { DEFAULT_NAMESPACE, NAMESPACE_PATTERN, NAMESPACE_RULE } from '../api/meta.js';

const nsRe = new RegExp(NAMESPACE_PATTERN);

export type Query = Record<string, string | string[] | undefined>;

export function namespaceOf(q: Query): string {
  const ns = single(q, 'namespace');
  if (ns === undefined || ns === '') return DEFAULT_NAMESPACE;
  if (ns.length > 63 || !nsRe.test(ns)) {
    throw invalid('namespace', ns, [{ field: 'namespace', message: `must be ${NAMESPACE_RULE}` }]);
  }
  return ns;
}

/** The query's namespace; undefined when none is given (a list then covers every namespace). */
export function queryNamespaceOf(q: Query): string | undefined {
  const ns = single(q, 'namespace');
  return ns === undefined || ns === '' ? undefined : namespaceOf(q);
}

/**
 * A create body with the namespace of `?namespace=` when the body names none, so a client that
 * puts the namespace in the query (as on every other call) creates where it meant to. Both
 * given and different is a 400: guessing would send a task to another team's agent.
 */
export function withQueryNamespace(body: unknown, q: Query): unknown {
  const fromQuery = single(q, 'namespace');
  if (fromQuery === undefined || fromQuery === '') return body;
  const ns = namespaceOf(q);
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const given = (body as { namespace?: unknown }).namespace;
  if (given === undefined) return { ...body, namespace: ns };
  if (given !== ns) {
    throw badRequest(
      `the body's namespace "${typeof given === 'string' ? given : JSON.stringify(given)}" differs from the query's "${ns}": give one of them, or the same in both`,
      {
        causes: [{ field: 'namespace', message: `differs from ?namespace=${ns}` }],
      },
    );
  }
  return body;
}

/** An integer query parameter in [min, max], or the default when absent. */
export function intParam(
  q: Query,
  name: string,
  opts: { min: number; max?: number; default?: number; /** above max means max (as clients expect of page sizes) */ clamp?: boolean },
): number | undefined {
  const raw = single(q, name);
  if (raw === undefined) return opts.default;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (opts.clamp && opts.max !== undefined && /^\d+$/.test(raw) && n > opts.max) return opts.max;
  if (!Number.isSafeInteger(n) || n < opts.min || (opts.max !== undefined && n > opts.max)) {
    const range = opts.max !== undefined ? `from ${opts.min} to ${opts.max}` : `${opts.min} or more`;
    const cause: Cause = { field: name, message: `must be an integer ${range}` };
    throw invalid('query', undefined, [cause]);
  }
  return n;
}

/**
 * 400 for a query parameter this route does not take but a client may mean something by (a
 * filter or a cursor it would otherwise silently not get): `refused` maps each such name to what
 * to do instead.
 */
export function refuseQuery(q: Query, refused: Readonly<Record<string, string>>): void {
  const causes: Cause[] = Object.keys(refused)
    .filter((name) => q[name] !== undefined)
    .map((name) => ({ field: name, message: `is not supported: ${refused[name]}` }));
  if (causes.length) throw badRequest(causes.map((c) => `query parameter "${c.field}" ${c.message}`).join('; '), { causes });
}

function single(q: Query, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) throw badRequest(`query parameter "${name}" is given more than once`);
  return v;
}
