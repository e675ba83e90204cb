import { expect } from 'chai';

import { ApiError } from '../../pkg/api/errors.js';
import { compare, toFieldSet } from '../../pkg/registry/fieldmanager/extract.js';
import { FieldManager, managerFromUserAgent } from '../../pkg/registry/fieldmanager/field-manager.js';
import { FieldSet, pathString } from '../../pkg/registry/fieldmanager/fieldset.js';
import type { ManagedFieldsEntry } from '../../pkg/registry/fieldmanager/managed.js';
import { merge } from '../../pkg/registry/fieldmanager/merge.js';
import { fromJsonSchema, objectSchema } from '../../pkg/registry/fieldmanager/schema.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';
import { openApiV2, openApiV3 } from '../../pkg/server/aggregated/openapi.js';
import { type AggregatedApiDeps, buildResources } from '../../pkg/server/aggregated/resources.js';

const SPEC = {
  type: 'object',
  properties: {
    model: { type: 'string' },
    instructions: { type: 'string' },
    connectors: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    tags: { type: 'array', items: { type: 'string' } },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
    },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    selector: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' },
  },
};
const schema = objectSchema(SPEC);
const API = 'agentplane.io/v1alpha1';
const T0 = new Date('2026-01-01T00:00:00.123Z');

type Obj = { apiVersion: string; kind: string; metadata: Record<string, unknown> & { managedFields?: ManagedFieldsEntry[] }; spec: Record<string, unknown> };
const obj = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Obj => ({
  apiVersion: API,
  kind: 'Agent',
  metadata: { name: 'a', namespace: 'ns', ...metadata },
  spec,
});

const fm = new FieldManager(schema, () => T0);

/** An Update by `manager` from `live` to `next`; returns `next` with its managedFields. */
function update(live: Obj | undefined, next: Obj, manager: string): Obj {
  const out = structuredClone(next);
  out.metadata.managedFields = live?.metadata.managedFields;
  out.metadata.managedFields = fm.record(live, out, { manager, operation: 'Update' });
  return out;
}
function apply(live: Obj | undefined, config: Record<string, unknown>, manager: string, force = false): Obj {
  const next = fm.applyConfiguration(live, config, manager);
  next.metadata.managedFields = fm.record(live, next, { manager, operation: 'Apply', force });
  return next;
}
const fields = (o: Obj, manager: string, operation = 'Apply'): unknown =>
  o.metadata.managedFields?.find((e) => e.manager === manager && e.operation === operation)?.fieldsV1;
const config = (spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: API,
  kind: 'Agent',
  metadata: { name: 'a', ...(labels ? { labels } : {}) },
  spec,
});

function conflictOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected a conflict');
}

describe('field manager: field sets (FieldsV1)', () => {
  it('round-trips FieldsV1 with "." on nodes that are members and have children', () => {
    const v1 = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:ports': { 'k:{"name":"http"}': { '.': {}, 'f:port': {} } } } };
    const s = FieldSet.fromFieldsV1(v1);
    expect(s.toFieldsV1()).to.deep.equal(v1);
    expect(s.has(['f:metadata', 'f:labels'])).to.equal(true);
    expect(s.has(['f:metadata'])).to.equal(false);
    expect(() => FieldSet.fromFieldsV1({ 'x:y': {} })).to.throw(/unknown path element/);
  });

  it('unions, differences and intersections path by path', () => {
    const a = FieldSet.of(['f:spec', 'f:a'], ['f:spec', 'f:b']);
    const b = FieldSet.of(['f:spec', 'f:b'], ['f:spec', 'f:c']);
    expect(a.union(b).paths()).to.deep.equal([
      ['f:spec', 'f:a'],
      ['f:spec', 'f:b'],
      ['f:spec', 'f:c'],
    ]);
    expect(a.difference(b).paths()).to.deep.equal([['f:spec', 'f:a']]);
    expect(a.intersection(b).paths()).to.deep.equal([['f:spec', 'f:b']]);
    expect(a.difference(a).empty()).to.equal(true);
    expect(a.union(b).equals(b.union(a))).to.equal(true);
  });

  it('prints paths as kube-apiserver does in conflicts', () => {
    expect(pathString(['f:spec', 'f:model'])).to.equal('.spec.model');
    expect(pathString(['f:spec', 'f:ports', 'k:{"name":"http"}', 'f:port'])).to.equal('.spec.ports[name="http"].port');
    expect(pathString(['f:spec', 'f:connectors', 'v:"gh"'])).to.equal('.spec.connectors[="gh"]');
    expect(pathString(['f:spec', 'f:tags', 'i:2'])).to.equal('.spec.tags[2]');
  });
});

describe('field manager: extracting and comparing under a schema', () => {
  it('owns leaves, granular map keys, list items by key or value, atomic lists and maps whole', () => {
    const s = toFieldSet(
      { spec: { model: 'm', connectors: ['a', 'b'], tags: ['x'], ports: [{ name: 'http', port: 80 }], env: { A: '1' }, selector: { k: 'v' } } },
      schema,
    );
    expect(s.toFieldsV1()).to.deep.equal({
      'f:spec': {
        'f:connectors': { 'v:"a"': {}, 'v:"b"': {} },
        'f:env': { 'f:A': {} },
        'f:model': {},
        'f:ports': { 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
        'f:selector': {},
        'f:tags': {},
      },
    });
  });

  it('marks maps and lists that appear as added nodes, and tells modified and removed leaves', () => {
    const c = compare({ spec: { model: 'm', tags: ['x'] } }, { metadata: { labels: { a: 'b' } }, spec: { model: 'n', env: { A: '1' } } }, schema);
    expect(c.added.toFieldsV1()).to.deep.equal({
      'f:metadata': { '.': {}, 'f:labels': { '.': {}, 'f:a': {} } },
      'f:spec': { 'f:env': { '.': {}, 'f:A': {} } },
    });
    expect(c.modified.paths()).to.deep.equal([['f:spec', 'f:model']]);
    expect(c.removed.paths()).to.deep.equal([['f:spec', 'f:tags']]);
  });

  it('merges sets and keyed lists item by item, replaces atomic lists and maps', () => {
    const live = {
      spec: {
        connectors: ['a', 'b'],
        tags: ['x', 'y'],
        ports: [
          { name: 'http', port: 80 },
          { name: 'ssh', port: 22 },
        ],
        selector: { a: '1', b: '2' },
        env: { A: '1' },
      },
    };
    const cfg = { spec: { connectors: ['c', 'a'], tags: ['z'], ports: [{ name: 'http', port: 8080 }], selector: { c: '3' }, env: { B: '2' } } };
    expect(merge(live, cfg, schema)).to.deep.equal({
      spec: {
        connectors: ['c', 'a', 'b'],
        tags: ['z'],
        ports: [
          { name: 'http', port: 8080 },
          { name: 'ssh', port: 22 },
        ],
        selector: { c: '3' },
        env: { A: '1', B: '2' },
      },
    });
  });

  it('reads list and map types from the markers; lists without one are atomic', () => {
    const t = fromJsonSchema(SPEC);
    expect(t.type).to.equal('map');
    const f = (t as { fields: Record<string, { type: string; listType?: string; keys?: string[] }> }).fields;
    expect(f.connectors).to.include({ type: 'list', listType: 'set' });
    expect(f.ports).to.deep.include({ type: 'list', listType: 'map', keys: ['name'] });
    expect(f.tags.type).to.equal('leaf');
    expect(f.selector.type).to.equal('leaf');
    expect(f.env.type).to.equal('map');
  });
});

describe('field manager: updates and applies', () => {
  it('a create owns every field it set, with "." on new nodes; server fields and status are nobody\'s', () => {
    const o = update(
      undefined,
      { ...obj({ model: 'm' }, { uid: 'u', resourceVersion: '1', labels: { a: 'b' } }), status: { phase: 'x' } } as Obj,
      'kubectl-create',
    );
    expect(o.metadata.managedFields).to.deep.equal([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: API,
        time: '2026-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } }, 'f:spec': { '.': {}, 'f:model': {} } },
      },
    ]);
  });

  it('an apply owns exactly its configuration (no "." on declared fields), not defaults filled in later', () => {
    const o = apply(undefined, config({ model: 'm' }, { app: 'x' }), 'flux');
    expect(fields(o, 'flux')).to.deep.equal({ 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:model': {} } });
    o.spec.instructions = 'defaulted';
    const again = apply(o, config({ model: 'm' }, { app: 'x' }), 'flux');
    expect(again.spec.instructions).to.equal('defaulted');
  });

  it('a second manager changing an applied field gets 409 naming the field and the manager, as kube-apiserver words it', () => {
    const o = apply(undefined, config({ model: 'm', env: { A: '1' } }), 'argocd');
    const err = conflictOf(() => apply(o, config({ model: 'other', env: { A: '2' } }), 'flux'));
    expect(err.code).to.equal(409);
    expect(err.reason).to.equal('Conflict');
    expect(err.message).to.equal('Apply failed with 2 conflicts: conflicts with "argocd":\n- .spec.env.A\n- .spec.model');
    expect(err.details.causes).to.deep.equal([
      { field: '.spec.env.A', message: 'conflict with "argocd"', reason: 'FieldManagerConflict' },
      { field: '.spec.model', message: 'conflict with "argocd"', reason: 'FieldManagerConflict' },
    ]);
  });

  it('names an Update manager with its apiVersion in a conflict', () => {
    const o = update(undefined, obj({ model: 'm' }), 'kubectl-client-side-apply');
    const err = conflictOf(() => apply(o, config({ model: 'x' }), 'kubectl'));
    expect(err.message).to.equal(`Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using ${API}: .spec.model`);
  });

  it('force takes ownership away from the other manager', () => {
    const o = apply(undefined, config({ model: 'm', instructions: 'i' }), 'argocd');
    const forced = apply(o, config({ model: 'x' }), 'flux', true);
    expect(forced.spec.model).to.equal('x');
    expect(fields(forced, 'argocd')).to.deep.equal({ 'f:spec': { 'f:instructions': {} } });
    expect(fields(forced, 'flux')).to.deep.equal({ 'f:spec': { 'f:model': {} } });
  });

  it('equal values share ownership, so the field stays while either still applies it', () => {
    const o = apply(undefined, config({ model: 'm', instructions: 'i' }), 'a');
    const shared = apply(o, config({ model: 'm' }), 'b');
    expect(fields(shared, 'a')).to.deep.equal({ 'f:spec': { 'f:instructions': {}, 'f:model': {} } });
    expect(fields(shared, 'b')).to.deep.equal({ 'f:spec': { 'f:model': {} } });
    const aLeaves = apply(shared, config({ instructions: 'i' }), 'a');
    expect(aLeaves.spec.model, 'b still owns it').to.equal('m');
    // An empty spec is a value too (b would own `spec`): b applies no spec at all.
    const bLeaves = apply(aLeaves, { apiVersion: API, kind: 'Agent', metadata: { name: 'a' } }, 'b');
    expect(bLeaves.spec).to.not.have.property('model');
    expect(bLeaves.metadata.managedFields!.map((e) => e.manager)).to.deep.equal(['a']);
  });

  it('a field that leaves the configuration is removed, items of sets and keyed lists too', () => {
    const o = apply(
      undefined,
      config(
        {
          model: 'm',
          connectors: ['a', 'b'],
          ports: [
            { name: 'h', port: 1 },
            { name: 's', port: 2 },
          ],
        },
        { x: '1', y: '2' },
      ),
      'm',
    );
    const next = apply(o, config({ connectors: ['b'], ports: [{ name: 's', port: 2 }] }, { y: '2' }), 'm');
    expect(next.spec).to.deep.equal({ connectors: ['b'], ports: [{ name: 's', port: 2 }] });
    expect(next.metadata.labels).to.deep.equal({ y: '2' });
  });

  it('set items added by different managers both stay, each owned by its applier', () => {
    const o = apply(undefined, config({ connectors: ['a'] }), 'one');
    const both = apply(o, config({ connectors: ['b'] }), 'two');
    expect(both.spec.connectors).to.deep.equal(['a', 'b']);
    const oneGone = apply(both, config({ model: 'm' }), 'one');
    expect(oneGone.spec).to.deep.equal({ connectors: ['b'], model: 'm' });
  });

  it('an Update takes the fields it changes from an applier, and keeps its own over later writes', () => {
    const o = apply(undefined, config({ model: 'm', instructions: 'i' }), 'flux');
    const edited = update(o, { ...structuredClone(o), spec: { model: 'edited', instructions: 'i' } }, 'kubectl-edit');
    expect(fields(edited, 'flux')).to.deep.equal({ 'f:spec': { 'f:instructions': {} } });
    expect(fields(edited, 'kubectl-edit', 'Update')).to.deep.equal({ 'f:spec': { 'f:model': {} } });
    // The applier may take it back only by force.
    expect(() => apply(edited, config({ model: 'm', instructions: 'i' }), 'flux')).to.throw(/conflict with "kubectl-edit" using/);
  });

  it('an apply does not contend for fields the server changes after it (a task counter), nor take them', () => {
    const o = update(undefined, obj({ instructions: 'i', task: 1 }), 'agentplane-rest');
    const next = fm.applyConfiguration(o, config({ instructions: 'j' }), 'kubectl');
    next.spec.task = 2; // the strategy's doing, not the configuration's
    const err = conflictOf(() => fm.record(o, next, { manager: 'kubectl', operation: 'Apply' }));
    expect(err.details.causes!.map((c) => c.field)).to.deep.equal(['.spec.instructions']);
    next.metadata.managedFields = fm.record(o, next, { manager: 'kubectl', operation: 'Apply', force: true });
    expect(fields(next, 'agentplane-rest', 'Update')).to.deep.equal({ 'f:spec': { '.': {}, 'f:task': {} } });
    expect(fields(next, 'kubectl')).to.deep.equal({ 'f:spec': { 'f:instructions': {} } });
  });

  it('a no-op write changes neither fields nor times', () => {
    const o = apply(undefined, config({ model: 'm' }), 'a');
    const later = new FieldManager(schema, () => new Date('2027-01-01T00:00:00Z'));
    const next = later.applyConfiguration(o, config({ model: 'm' }), 'a');
    next.metadata.managedFields = later.record(o, next, { manager: 'a', operation: 'Apply' });
    expect(next.metadata.managedFields).to.deep.equal(o.metadata.managedFields);
    const same = structuredClone(o);
    expect(later.record(o, same, { manager: 'b', operation: 'Update' })).to.deep.equal(o.metadata.managedFields);
  });

  it('an object written before field tracking belongs to before-first-apply on its first apply', () => {
    const legacy = obj({ model: 'm', instructions: 'i' });
    const err = conflictOf(() => apply(legacy, config({ model: 'x' }), 'flux'));
    expect(err.message).to.equal(`Apply failed with 1 conflict: conflict with "before-first-apply" using ${API}: .spec.model`);
  });

  it('derives the manager of an Update from the User-Agent as kube-apiserver does', () => {
    expect(managerFromUserAgent('kubectl/v1.34.0 (linux/amd64) kubernetes/abcdef')).to.equal('kubectl');
    expect(managerFromUserAgent('Go-http-client/1.1')).to.equal('Go-http-client');
    expect(managerFromUserAgent('x'.repeat(200))).to.have.length(128);
    expect(managerFromUserAgent(undefined)).to.equal('');
  });
});

describe('field manager: list and map types as published', () => {
  // Only the schemas are read: no registry or cache is needed.
  const resources = buildResources({ reads: {} } as unknown as AggregatedApiDeps);
  const docs: [string, Record<string, Record<string, unknown>>][] = [
    ['v2', openApiV2(resources).definitions as Record<string, Record<string, unknown>>],
    ['v3', (openApiV3(resources).components as { schemas: Record<string, Record<string, unknown>> }).schemas],
  ];
  const prop = (defs: Record<string, Record<string, unknown>>, def: string, p: string): Record<string, unknown> =>
    (defs[`io.agentplane.v1alpha1.${def}`].properties as Record<string, Record<string, unknown>>)[p];

  for (const [v, defs] of docs) {
    it(`OpenAPI ${v} declares connectors a set, squad members atomic, conditions a map keyed by type`, () => {
      expect(prop(defs, 'AgentSpec', 'connectors')['x-kubernetes-list-type']).to.equal('set');
      expect(prop(defs, 'SquadSpec', 'members')['x-kubernetes-list-type']).to.equal('atomic');
      expect(prop(defs, 'AgentStatus', 'conditions')).to.deep.include({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
    });
  }

  it("the field manager reads the same markers from the strategies' schemas", () => {
    const agentFields = new FieldManager(objectSchema(agentStrategy.specSchema));
    expect(agentFields.fieldSet({ spec: { connectors: ['a'] } }).toFieldsV1()).to.deep.equal({ 'f:spec': { 'f:connectors': { 'v:"a"': {} } } });
    const squadFields = new FieldManager(objectSchema(squadStrategy.specSchema));
    expect(squadFields.fieldSet({ spec: { members: [{ ref: { name: 'a' } }] } }).toFieldsV1()).to.deep.equal({ 'f:spec': { 'f:members': {} } });
  });
});
