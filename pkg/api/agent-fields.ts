// The schemas of an agent's name, namespace and connector list, shared by its request and spec
// schemas (./agent.ts, which re-exports the first two).

import { NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, NAMESPACE_PATTERN, NAMESPACE_RULE } from './meta.js';

export const nameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  pattern: NAME_PATTERN,
  description: NAME_RULE,
} as const;

export const namespaceSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: NAMESPACE_PATTERN,
  description: NAMESPACE_RULE,
} as const;

export const connectorListSchema = {
  type: 'array',
  items: nameSchema,
  uniqueItems: true,
  maxItems: 64,
  // Server-side apply merges it as a set: managers that each apply their own connectors keep them all.
  'x-kubernetes-list-type': 'set',
  description: 'names of connectors to attach',
} as const;
