// Query parameters of the Kubernetes verbs: strict parsing with 400 BadRequest Status errors.

import { badRequest } from '../../api/errors.js';

export type Query = Record<string, string | string[] | undefined>;

/** The first value of a parameter (Kubernetes decodes repeated scalars the same way). */
export function single(q: Query, name: string): string | undefined {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
}

export function all(q: Query, name: string): string[] {
  const v = q[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** A boolean parameter; absent is undefined, an empty value is no boolean (400), as the schema says. */
export function boolParam(q: Query, name: string): boolean | undefined {
  const v = single(q, name);
  if (v === undefined) return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw badRequest(`query parameter "${name}" must be true or false, not "${v}"`);
}

/** An integer parameter; absent is undefined, an empty value is no integer (400), as the schema says. */
export function intParam(q: Query, name: string, opts: { min: number; max?: number }): number | undefined {
  const v = single(q, name);
  if (v === undefined) return undefined;
  const n = /^-?\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < opts.min || (opts.max !== undefined && n > opts.max)) {
    const range = opts.max !== undefined ? `from ${opts.min} to ${opts.max}` : `${opts.min} or more`;
    throw badRequest(`query parameter "${name}" must be an integer ${range}, not "${v}"`);
  }
  return n;
}

/** `dryRun=All` (the only stage there is); anything else is refused. */
export function dryRun(q: Query, body?: unknown): boolean {
  const values = [...all(q, 'dryRun'), ...bodyDryRun(body)];
  for (const v of values) if (v !== 'All') throw badRequest(`unsupported dryRun value "${v}": the only supported value is "All"`);
  return values.length > 0;
}

function bodyDryRun(body: unknown): string[] {
  const v = body && typeof body === 'object' ? (body as { dryRun?: unknown }).dryRun : undefined;
  return Array.isArray(v) ? v.map(String) : [];
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** How unknown fields are treated (Kubernetes' default is Warn; kubectl sends Strict). */
export function fieldValidation(q: Query): FieldValidation {
  const v = single(q, 'fieldValidation');
  if (v === undefined || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw badRequest(`fieldValidation must be one of "Ignore", "Warn" or "Strict", not "${v}"`);
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function includeObject(q: Query): IncludeObject {
  const v = single(q, 'includeObject');
  if (v === undefined || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`unrecognized includeObject value: "${v}"`);
}

/**
 * Parses the ListOptions a list, watch or deletecollection takes but may not use itself, as
 * kube-apiserver decodes every one of them: a malformed value is 400, never silently ignored
 * (found by fuzzing).
 */
export function checkListOptions(q: Query): void {
  intParam(q, 'limit', { min: 0 });
  intParam(q, 'timeoutSeconds', { min: 0 });
  for (const flag of ['allowWatchBookmarks', 'sendInitialEvents', 'watch']) boolParam(q, flag);
}
