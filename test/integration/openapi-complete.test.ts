// /openapi.json lists every route the REST server serves (and nothing it does not), so generated
// clients and fuzzers see the whole API. /internal/... and /apis/... are out by design.

import { expect } from 'chai';
import type { OpenAPIV3 } from 'openapi-types';
import { type Harness, startHarness } from '../support/harness.js';

// /openapi/v2 and /openapi/v3 belong to the aggregated API (kube-apiserver fetches them); /ui is
// the dashboard's static files, not API, and so is its icon at /favicon.ico.
const UNDOCUMENTED = /^\/(internal|apis|openapi\/v[23]|ui|favicon\.ico)(\/|$)/;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
// fastify ':name' -> OpenAPI '{name}'; a trailing wildcard (the rest of the path) is documented as '{path}'
const toTemplate = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/\*$/, '/{path}');

describe('OpenAPI document completeness (integration)', function () {
  this.timeout(60_000);
  let h: Harness;
  let doc: OpenAPIV3.Document;

  before(async () => {
    h = await startHarness();
    doc = (await h.api('GET', '/openapi.json')).body as OpenAPIV3.Document;
  });
  after(async () => h?.close());

  const served = (): Set<string> =>
    new Set(
      h.server
        .routes()
        .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !UNDOCUMENTED.test(r.url))
        .map((r) => `${r.method} ${toTemplate(r.url)}`),
    );

  it('documents every served route with a response schema', () => {
    const routes = served();
    expect(routes.size).to.be.greaterThan(20);
    for (const key of routes) {
      const [method, path] = key.split(' ');
      const op = (doc.paths[path] as Record<string, OpenAPIV3.OperationObject> | undefined)?.[method.toLowerCase()];
      expect(op, `${key} missing from /openapi.json`).to.not.equal(undefined);
      const ok = Object.entries(op!.responses).filter(([c]) => /^(2\d\d|101)$/.test(c));
      expect(ok.length, key).to.be.greaterThan(0);
      for (const [c, r] of ok) {
        // MCP's 202 (a message with nothing to answer) has no body, as the MCP specification says.
        if (key === 'POST /mcp' && c === '202') continue;
        expect((r as OpenAPIV3.ResponseObject).content, `${key} ${c}`).to.not.equal(undefined);
      }
    }
  });

  it('includes the squad paths and the WebSocket path', () => {
    for (const [path, methods] of [
      ['/api/v1/squads', ['get', 'post']],
      ['/api/v1/squads/{name}', ['get', 'patch', 'delete']],
      ['/api/v1/agents/{name}/compact', ['post']],
      ['/api/v1/agents/{name}/cost', ['get']],
      ['/api/v1/agents/{name}/download/{path}', ['get']],
      ['/api/v1/squads/{name}/members', ['post']],
      ['/api/v1/squads/{name}/members/{agent}', ['delete']],
      ['/api/v1/squads/{name}/break-up', ['post']],
      ['/api/v1/agents/{name}/ws', ['get']],
    ] as const) {
      for (const m of methods) expect((doc.paths[path] as Record<string, unknown> | undefined)?.[m], `${m} ${path}`).to.not.equal(undefined);
    }
  });

  it('gives every write that reads a body a request schema (only cancel, break-up and trigger take none)', () => {
    const bodiless = new Set(['POST /api/v1/agents/{name}/cancel', 'POST /api/v1/squads/{name}/break-up', 'POST /api/v1/schedules/{name}/trigger']);
    for (const key of served()) {
      const [method, path] = key.split(' ');
      if (!['POST', 'PUT', 'PATCH'].includes(method) || bodiless.has(key)) continue;
      const op = (doc.paths[path] as Record<string, OpenAPIV3.OperationObject>)[method.toLowerCase()];
      const body = op.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      expect(body?.content?.['application/json']?.schema, `${key} request schema`).to.not.equal(undefined);
    }
  });

  it('serves every documented operation', () => {
    const routes = served();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        if ((item as Record<string, unknown>)[m]) expect(routes.has(`${m.toUpperCase()} ${path}`), `${m} ${path}`).to.equal(true);
      }
    }
  });
});
