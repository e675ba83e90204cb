// The OpenAPI paths of a kind served by the REST mirror's generic routes
// (pkg/server/routes/kind-routes.ts): list and create on /api/v1/<plural>, get, patch and delete on
// /api/v1/<plural>/{name}. Its schemas are the components `<Kind>Request`, `<Kind>PatchRequest`
// and `<Kind>Response`, which the kind's own file adds.

import type { OpenAPIV3 } from 'openapi-types';
import { errors, json, listNsParam, nameParam, nsParam, ref } from './openapi-common.js';

export interface KindPaths {
  plural: string;
  kind: string;
  /** What one object in an answer is ("the budget with its current period's spend"). */
  one: string;
  /** What a list holds. */
  list: string;
}

const title = (s: string): string => s[0].toUpperCase() + s.slice(1);

export function kindPaths(d: KindPaths): OpenAPIV3.PathsObject {
  const response = ref(`${d.kind}Response`);
  const one = { description: d.one, content: json(response) };
  return {
    [`/api/v1/${d.plural}`]: {
      get: {
        operationId: `list${title(d.plural)}`,
        parameters: [listNsParam],
        responses: {
          '200': {
            description: d.list,
            content: json({ type: 'object', required: [d.plural], properties: { [d.plural]: { type: 'array', items: response } } }),
          },
          ...errors(400),
        },
      },
      post: {
        operationId: `create${d.kind}`,
        requestBody: { required: true, content: json(ref(`${d.kind}Request`)) },
        responses: { '201': { description: 'created', content: json(response) }, ...errors(400, 409, 413, 415) },
      },
    },
    [`/api/v1/${d.plural}/{name}`]: {
      get: { operationId: `get${d.kind}`, parameters: [nameParam, nsParam], responses: { '200': one, ...errors(400, 404) } },
      patch: {
        operationId: `patch${d.kind}`,
        parameters: [nameParam, nsParam],
        requestBody: { required: true, content: json(ref(`${d.kind}PatchRequest`)) },
        responses: { '200': one, ...errors(400, 404, 409, 413, 415) },
      },
      delete: {
        operationId: `delete${d.kind}`,
        parameters: [nameParam, nsParam],
        responses: { '200': { description: 'deleted; as it was', content: json(response) }, ...errors(400, 404) },
      },
    },
  };
}
