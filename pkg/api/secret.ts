// Secrets of the embedded home: named maps of string values (connector tokens). Requests carry the
// values; no response ever does: they list names, keys and the URLs the secret is bound to.
// A secret is only ever sent to URLs under its allowedUrls (docs/connectors.md, "Bindings").

import { nameSchema, namespaceSchema } from './agent.js';
import type { Cause } from './errors.js';
import { SECRET_KEY_PATTERN } from './connector.js';
import { formatPrefix, parseUrlPrefix } from './url-prefix.js';

export const SECRET_KIND = 'Secret';

// The Kubernetes Secrets agentplane makes in the cluster home carry the labels of ./labels.ts; a
// Secret without them is not agentplane's, and agentplane never overwrites or deletes it. Their
// component is `connector-secret` (the secrets API) or `model-credential` (a mirror).
export { COMPONENT_LABEL, MANAGED_BY, MANAGED_BY_LABEL } from './labels.js';
export const CONNECTOR_SECRET_COMPONENT = 'connector-secret';
export const MODEL_CREDENTIAL_COMPONENT = 'model-credential';
/** On a mirrored model credential: the namespace of the Secret it copies (the install namespace). */
export const MIRRORED_FROM_LABEL = 'agentplane.io/mirrored-from';
export const SECRET_VALUE_MAX_LENGTH = 65536;
export const SECRET_MAX_KEYS = 64;
export const SECRET_MAX_ALLOWED_URLS = 32;

/** POST /api/v1/secrets body; PUT /api/v1/secrets/:name takes the same (name optional there). */
export interface SecretRequest {
  name?: string;
  namespace?: string;
  data: Record<string, string>;
  /**
   * URL prefixes the secret may be sent to. Omitted on create: bound to the first connector that
   * names it. Omitted on PUT: the current binding is kept.
   */
  allowedUrls?: string[];
}

/** What a client sees of a secret. */
export interface SecretResponse {
  name: string;
  namespace: string;
  keys: string[];
  /** Normalized prefixes; [] until the secret is bound. Prefixes are not secret. */
  allowedUrls: string[];
  createdAt: string;
}

const dataSchema = {
  type: 'object',
  minProperties: 1,
  maxProperties: SECRET_MAX_KEYS,
  additionalProperties: {
    type: 'string',
    maxLength: SECRET_VALUE_MAX_LENGTH,
    description: `a string value of at most ${SECRET_VALUE_MAX_LENGTH} characters`,
  },
  description: `key -> value; at least one key; keys match ${SECRET_KEY_PATTERN}, at most 253 characters (checked by secretDataCauses)`,
} as const;

const allowedUrlsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: SECRET_MAX_ALLOWED_URLS,
  items: { type: 'string', minLength: 1, maxLength: 2048, description: 'scheme://host[:port][/path], matched as a prefix' },
  description:
    'URL prefixes the secret may be sent to (scheme://host[:port][/path]; path matched on segment boundaries). ' +
    'Omitted on create: bound to the URL of the first connector that names it; omitted on PUT: the binding is kept.',
} as const;

const keyRe = new RegExp(SECRET_KEY_PATTERN);

/**
 * Each allowed URL must be an http(s) prefix without credentials, query or fragment. Call after
 * schema validation passed; `normalizeAllowedUrls` gives the stored form.
 */
export function allowedUrlsCauses(urls: readonly string[] | undefined, root = 'allowedUrls'): Cause[] {
  const causes: Cause[] = [];
  for (const [i, raw] of (urls ?? []).entries()) {
    const p = parseUrlPrefix(raw);
    if (typeof p === 'string') causes.push({ field: `${root}[${i}]`, message: p });
  }
  return causes;
}

/** Normalized, deduplicated, sorted. */
export function normalizeAllowedUrls(urls: readonly string[]): string[] {
  const out = new Set<string>();
  for (const raw of urls) {
    const p = parseUrlPrefix(raw);
    if (typeof p !== 'string') out.add(formatPrefix(p));
  }
  return [...out].sort();
}

/**
 * The key rule, which JSON Schema could only say with `propertyNames` (not in OpenAPI 3.0) and
 * whose errors would not name the key. Call after schema validation passed.
 */
export function secretDataCauses(data: Record<string, unknown>, root = 'data'): Cause[] {
  const causes: Cause[] = [];
  for (const key of Object.keys(data)) {
    if (key.length > 253 || !keyRe.test(key)) {
      causes.push({
        field: `${root}[${JSON.stringify(key.slice(0, 64))}]`,
        message: 'keys must be letters, digits, "-", "_" and ".", at most 253 characters, not "." nor starting with ".."',
      });
    }
  }
  return causes;
}

export const secretCreateRequestSchema = {
  $id: 'SecretCreateRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'data'],
  properties: { name: nameSchema, namespace: namespaceSchema, data: dataSchema, allowedUrls: allowedUrlsSchema },
} as const;

export const secretReplaceRequestSchema = {
  $id: 'SecretReplaceRequest',
  type: 'object',
  additionalProperties: false,
  required: ['data'],
  properties: { name: nameSchema, namespace: namespaceSchema, data: dataSchema, allowedUrls: allowedUrlsSchema },
} as const;

/** PATCH body: a merge. Given keys are set; a `null` value removes the key; other keys stay. */
export const secretPatchRequestSchema = {
  $id: 'SecretPatchRequest',
  type: 'object',
  additionalProperties: false,
  required: ['data'],
  properties: {
    name: nameSchema,
    namespace: namespaceSchema,
    data: {
      type: 'object',
      minProperties: 1,
      maxProperties: SECRET_MAX_KEYS,
      additionalProperties: { type: 'string', maxLength: SECRET_VALUE_MAX_LENGTH, nullable: true },
      description: 'key -> new value, or null to remove the key; keys not named are kept',
    },
  },
} as const;

export const secretResponseSchema = {
  $id: 'SecretResponse',
  type: 'object',
  required: ['name', 'namespace', 'keys', 'allowedUrls', 'createdAt'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    keys: { type: 'array', items: { type: 'string' } },
    allowedUrls: {
      type: 'array',
      items: { type: 'string' },
      description: 'normalized URL prefixes (scheme://host:port[/path]) the secret may be sent to; [] until bound by the first connector that names it',
    },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
