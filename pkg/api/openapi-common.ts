// What the OpenAPI document's parts share: schema conversion, the error body, references,
// responses and the common parameters.

import type { OpenAPIV3 } from 'openapi-types';
import { MODEL_PATTERN, MODEL_PATTERN_PORTABLE } from './agent.js';
import { NAME_MAX_LENGTH, NAME_PATTERN, NAMESPACE_PATTERN } from './meta.js';

export type Schema = OpenAPIV3.SchemaObject;

/**
 * JSON Schema (draft 7 subset we use) -> OpenAPI schema object: drop `$id`; publish patterns in
 * a dialect every OpenAPI tool reads (no Unicode properties).
 */
export const toOpenApi = (schema: object): Schema => {
  const { $id: _id, ...rest } = schema as { $id?: string };
  return JSON.parse(JSON.stringify(rest, (k, v: unknown) => (k === 'pattern' && v === MODEL_PATTERN ? MODEL_PATTERN_PORTABLE : v))) as Schema;
};

export const errorSchema: Schema = {
  type: 'object',
  required: ['error', 'reason', 'code'],
  properties: {
    error: { type: 'string' },
    reason: { type: 'string' },
    code: { type: 'integer' },
    details: {
      type: 'object',
      properties: {
        kind: { type: 'string' },
        name: { type: 'string' },
        causes: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
};

export const ref = (name: string): OpenAPIV3.ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Schema | OpenAPIV3.ReferenceObject) => ({ 'application/json': { schema } });
export const errors = (...codes: number[]): Record<string, OpenAPIV3.ResponseObject> =>
  Object.fromEntries(codes.map((c) => [String(c), { description: 'error', content: json(ref('Error')) }]));

export const nsParam: OpenAPIV3.ParameterObject = {
  name: 'namespace',
  in: 'query',
  required: false,
  schema: { type: 'string', pattern: `^$|${NAMESPACE_PATTERN}`, maxLength: NAME_MAX_LENGTH },
  description: 'namespace; omitted or empty: "default"',
};
/** A list's namespace: omitted or empty lists every namespace (docs/decisions.md). */
export const listNsParam: OpenAPIV3.ParameterObject = {
  ...nsParam,
  description: 'namespace to list; omitted or empty: every namespace',
};
export const nameParam: OpenAPIV3.ParameterObject = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: NAME_PATTERN, maxLength: NAME_MAX_LENGTH },
};
