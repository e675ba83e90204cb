import { expect } from 'chai';
import type { OpenAPIV3 } from 'openapi-types';

import { agentPatchRequestSchema, agentResponseSchema, agentTaskRequestSchema, MODEL_PATTERN, MODEL_PATTERN_PORTABLE } from '../../pkg/api/agent.js';
import { EVENT_TYPES, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from '../../pkg/api/event.js';
import { NAME_MAX_LENGTH, NAME_PATTERN, NAMESPACE_PATTERN } from '../../pkg/api/meta.js';
import { buildOpenApi } from '../../pkg/api/openapi.js';
import { messageRequestSchema } from '../../pkg/api/agent-message.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Every `$ref` string anywhere in the value, with the JSON path where it was found. */
function collectRefs(value: unknown, at = '#', out: { ref: string; at: string }[] = []): { ref: string; at: string }[] {
  if (Array.isArray(value)) value.forEach((v, i) => collectRefs(v, `${at}/${i}`, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push({ ref: v, at });
      else collectRefs(v, `${at}/${k}`, out);
    }
  }
  return out;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  expect(ref.startsWith('#/'), `${ref} is a local reference`).to.equal(true);
  let cur: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!cur || typeof cur !== 'object' || !(seg in cur)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

const withoutId = (s: object): object => {
  const { $id: _id, ...rest } = s as { $id?: string };
  return JSON.parse(JSON.stringify(rest)) as object;
};

describe('OpenAPI document', () => {
  let doc: OpenAPIV3.Document;
  before(() => {
    doc = buildOpenApi();
  });

  it('is OpenAPI 3.x with title and version', () => {
    expect(doc.openapi).to.match(/^3\.\d+\.\d+$/);
    expect(doc.info.title).to.equal('agentplane');
    expect(doc.info.version).to.be.a('string').and.not.equal('');
  });

  it('is plain JSON (serializes and parses back unchanged)', () => {
    expect(JSON.parse(JSON.stringify(doc))).to.deep.equal(doc);
  });

  it('has every operation of the agents API', () => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]) =>
      METHODS.filter((m) => item && (item as Record<string, unknown>)[m]).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops).to.include.members([
      'POST /api/v1/agents',
      'GET /api/v1/agents',
      'GET /api/v1/agents/{name}',
      'PATCH /api/v1/agents/{name}',
      'DELETE /api/v1/agents/{name}',
      'POST /api/v1/agents/{name}/cancel',
      'GET /api/v1/agents/{name}/events',
    ]);
  });

  it('gives every operation a unique operationId and at least one 2xx response', () => {
    const ids: string[] = [];
    for (const item of Object.values(doc.paths)) {
      for (const m of METHODS) {
        const op = (item as Record<string, OpenAPIV3.OperationObject | undefined>)[m];
        if (!op) continue;
        expect(op.operationId).to.be.a('string');
        ids.push(op.operationId!);
        // 101: the WebSocket upgrade succeeds by switching protocols.
        expect(
          Object.keys(op.responses).some((c) => /^(2\d\d|101)$/.test(c)),
          op.operationId,
        ).to.equal(true);
      }
    }
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('declares a required path parameter for every {template} in a path', () => {
    for (const [p, item] of Object.entries(doc.paths)) {
      const templated = [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const m of METHODS) {
        const op = (item as Record<string, OpenAPIV3.OperationObject | undefined>)[m];
        if (!op) continue;
        const pathParams = (op.parameters ?? []).map((x) => x as OpenAPIV3.ParameterObject).filter((x) => x.in === 'path');
        expect(pathParams.map((x) => x.name).sort(), `${m} ${p}`).to.deep.equal([...templated].sort());
        for (const pp of pathParams) expect(pp.required, `${m} ${p} ${pp.name}`).to.equal(true);
      }
    }
  });

  it('resolves every $ref to a schema under components.schemas', () => {
    const refs = collectRefs(doc);
    expect(refs.length).to.be.greaterThan(5);
    for (const { ref, at } of refs) {
      expect(ref, `at ${at}`).to.match(/^#\/components\/schemas\/[^/]+$/);
      const target = resolvePointer(doc, ref);
      expect(target, `${ref} (at ${at}) resolves`).to.be.an('object');
    }
    // And every component is used by something.
    const used = new Set(refs.map((r) => r.ref.split('/').pop()));
    for (const name of Object.keys(doc.components!.schemas!)) expect(used.has(name), `${name} is referenced`).to.equal(true);
  });

  it('uses the same request schemas as validation (ajv schemas minus $id)', () => {
    const schemas = doc.components!.schemas!;
    // Published in a regex dialect every OpenAPI tool reads: the model pattern spelled out.
    const published = (s: object) => JSON.parse(JSON.stringify(withoutId(s)).replaceAll(JSON.stringify(MODEL_PATTERN), JSON.stringify(MODEL_PATTERN_PORTABLE)));
    expect(schemas.AgentTaskRequest).to.deep.equal(published(agentTaskRequestSchema));
    expect(schemas.AgentPatchRequest).to.deep.equal(published(agentPatchRequestSchema));
    expect(schemas.MessageRequest).to.deep.equal(published(messageRequestSchema));
    expect(schemas.AgentResponse).to.deep.equal(published(agentResponseSchema));
    expect(JSON.stringify(schemas)).to.contain(JSON.stringify(MODEL_PATTERN_PORTABLE).slice(1, -1)).and.not.contain('p{Cc}');
    for (const s of Object.values(schemas)) expect(s).to.not.have.property('$id');
  });

  it('points request bodies at the request schemas', () => {
    const body = (op?: OpenAPIV3.OperationObject) =>
      ((op?.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content['application/json']?.schema as OpenAPIV3.ReferenceObject)?.$ref;
    expect(body(doc.paths['/api/v1/agents']!.post)).to.equal('#/components/schemas/AgentTaskRequest');
    expect(body(doc.paths['/api/v1/agents/{name}']!.patch)).to.equal('#/components/schemas/AgentPatchRequest');
  });

  it('describes name and namespace parameters with the same rules as the API', () => {
    const params = doc.paths['/api/v1/agents/{name}']!.get!.parameters as OpenAPIV3.ParameterObject[];
    const name = params.find((p) => p.name === 'name')!;
    const ns = params.find((p) => p.name === 'namespace')!;
    expect(name.schema).to.deep.include({ pattern: NAME_PATTERN, maxLength: NAME_MAX_LENGTH });
    expect(ns.in).to.equal('query');
    expect(ns.required).to.equal(false);
    // Empty is accepted and means "default", as for kubectl.
    expect(ns.schema).to.deep.include({ pattern: `^$|${NAMESPACE_PATTERN}`, maxLength: 63 });
  });

  it('says a list without a namespace (or with an empty one) covers every namespace', () => {
    for (const path of ['/api/v1/agents', '/api/v1/squads', '/api/v1/connectors', '/api/v1/secrets']) {
      const ns = (doc.paths[path]!.get!.parameters as OpenAPIV3.ParameterObject[]).find((p) => p.name === 'namespace')!;
      expect(ns.description, path).to.contain('every namespace');
      expect(new RegExp((ns.schema as OpenAPIV3.SchemaObject).pattern!).test(''), path).to.equal(true);
    }
    const get = (doc.paths['/api/v1/agents/{name}']!.get!.parameters as OpenAPIV3.ParameterObject[]).find((p) => p.name === 'namespace')!;
    expect(get.description).to.contain('omitted or empty: "default"');
  });

  it('documents the events limit and before parameters and event types', () => {
    const op = doc.paths['/api/v1/agents/{name}/events']!.get!;
    const params = op.parameters as OpenAPIV3.ParameterObject[];
    const limit = params.find((p) => p.name === 'limit')!;
    // Accepted above the cap and read as it, so the document sets no maximum.
    expect(limit.schema).to.deep.equal({ type: 'integer', minimum: 1, default: EVENTS_DEFAULT_LIMIT });
    expect(limit.description).to.contain(`read as ${EVENTS_MAX_LIMIT}`);
    expect(params.find((p) => p.name === 'before')!.schema).to.deep.include({ type: 'integer', minimum: 1 });
    const event = doc.components!.schemas!.Event as OpenAPIV3.SchemaObject;
    expect((event.properties!.type as OpenAPIV3.SchemaObject).enum).to.deep.equal([...EVENT_TYPES]);
  });

  it('documents error responses with the Error schema', () => {
    const post = doc.paths['/api/v1/agents']!.post!;
    for (const code of ['400', '409']) {
      const r = post.responses[code] as OpenAPIV3.ResponseObject;
      expect((r.content!['application/json'].schema as OpenAPIV3.ReferenceObject).$ref).to.equal('#/components/schemas/Error');
    }
    expect(doc.paths['/api/v1/agents/{name}']!.get!.responses).to.have.property('404');
  });

  it('builds a fresh document each call (callers may not corrupt the schemas)', () => {
    const a = buildOpenApi();
    (a.components!.schemas!.AgentTaskRequest as OpenAPIV3.SchemaObject).required!.push('hacked');
    const b = buildOpenApi();
    expect((b.components!.schemas!.AgentTaskRequest as OpenAPIV3.SchemaObject).required).to.deep.equal(['name', 'instructions']);
    expect([...agentTaskRequestSchema.required]).to.deep.equal(['name', 'instructions']);
  });

  it('is structurally OpenAPI 3.0: described responses, complete parameters, no draft-7-only keywords', () => {
    expect(doc.openapi).to.match(/^3\.0\.\d+$/);
    for (const [p, item] of Object.entries(doc.paths)) {
      expect(p.startsWith('/'), p).to.equal(true);
      for (const m of METHODS) {
        const op = (item as Record<string, OpenAPIV3.OperationObject | undefined>)[m];
        if (!op) continue;
        for (const [c, r] of Object.entries(op.responses)) {
          expect(c, `${m} ${p}`).to.match(/^([1-5]\d\d|default)$/);
          expect((r as OpenAPIV3.ResponseObject).description, `${m} ${p} ${c}`).to.be.a('string');
        }
        for (const prm of (op.parameters ?? []) as OpenAPIV3.ParameterObject[]) {
          expect(prm.name, `${m} ${p}`).to.be.a('string');
          expect(['query', 'path', 'header', 'cookie']).to.include(prm.in);
          expect(prm.schema, `${m} ${p} ${prm.name}`).to.be.an('object');
        }
      }
    }
    const banned = ['$id', '$schema', 'propertyNames', 'const', 'examples', 'if', 'then', 'else', 'contains'];
    const walk = (v: unknown, at: string): void => {
      if (!v || typeof v !== 'object') return;
      for (const [k, child] of Object.entries(v)) {
        // 'properties' maps property names, which may be anything.
        if (!at.endsWith('.properties')) expect(banned, `${at}.${k}`).to.not.include(k);
        walk(child, `${at}.${k}`);
      }
    };
    walk(doc.components, 'components');
  });
});
