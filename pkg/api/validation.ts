// One ajv instance holds every resource schema; validation errors become field-named causes.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Cause } from './errors.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, verbose: true });
addFormats(ajv);
// Kubernetes' merge markers (read by the field manager and published in OpenAPI) and its mark of
// a free-form value (an approval's tool input); no validation.
ajv.addVocabulary(['x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-preserve-unknown-fields']);

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
  // A bodiless request to an endpoint that needs a body (see pkg/server/body.ts).
  if (value === undefined && root === '') return [{ field: '(body)', message: 'is required: send a JSON object' }];
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
    default:
      return { field: path || '(body)', message: messageOf(e) };
  }
}

/**
 * A message a person can act on, not schema jargon. A string with a pattern is explained by its
 * schema's description, which states the whole rule ("lowercase letters, digits and hyphens,
 * ..., at most 63 characters"), whichever of its parts was broken.
 */
function messageOf(e: ErrorObject): string {
  const schema = (e.parentSchema ?? {}) as { description?: string; pattern?: string };
  const rule = schema.pattern && schema.description ? `must be ${schema.description}` : undefined;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'pattern':
      return rule ?? 'has an invalid format';
    case 'maxLength':
      return rule ?? `must be at most ${String(p.limit)} characters`;
    case 'minLength':
      return rule ?? (p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`);
    case 'type':
      return `must be ${article(String(p.type))}`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'minItems':
      return `must have at least ${String(p.limit)} items`;
    case 'uniqueItems': {
      const items = e.data as unknown[];
      return `must not list ${JSON.stringify(items[p.j as number])} twice`;
    }
    case 'minProperties':
      return p.limit === 1 ? 'must set at least one field' : `must set at least ${String(p.limit)} fields`;
    case 'maxProperties':
      return `must set at most ${String(p.limit)} fields`;
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'minimum':
    case 'maximum':
      return `must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${String(p.limit)}`;
    default:
      return e.message ?? 'is invalid';
  }
}

const article = (type: string): string =>
  ({ object: 'a JSON object', array: 'an array', integer: 'an integer', string: 'a string', number: 'a number', boolean: 'true or false' })[type] ?? type;

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
