// One ajv instance holds every resource schema; validation errors become field-named causes.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Cause } from './errors.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, verbose: true });
addFormats(ajv);

const compiled = new Map<object, ValidateFunction>();

function compile(schema: object): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

/** Validates `value` against `schema`; returns causes naming each offending field (empty when valid). */
export function validateSchema(schema: object, value: unknown, root = ''): Cause[] {
  const fn = compile(schema);
  if (fn(value)) return [];
  return dedupe((fn.errors ?? []).map((e) => toCause(e, root)));
}

function toCause(e: ErrorObject, root: string): Cause {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), root);
  switch (e.keyword) {
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      return { field: join(path, missing), message: 'is required' };
    }
    case 'additionalProperties': {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      return { field: join(path, extra), message: 'is not a known field' };
    }
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      return { field: path || '(body)', message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
    }
    case 'pattern':
    case 'maxLength':
    case 'minLength': {
      const desc = describe(e);
      return { field: path || '(body)', message: desc };
    }
    default:
      return { field: path || '(body)', message: e.message ?? 'is invalid' };
  }
}

function describe(e: ErrorObject): string {
  const hint = (e.parentSchema as { description?: string } | undefined)?.description;
  const base = e.message ?? 'is invalid';
  return hint ? `${base} (${hint})` : base;
}

const join = (path: string, field: string): string => (path ? `${path}.${field}` : field);

function dedupe(causes: Cause[]): Cause[] {
  const seen = new Set<string>();
  return causes.filter((c) => {
    const k = `${c.field}\u0000${c.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
