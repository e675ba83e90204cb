// manifests/crds/*.yaml and pkg/registry/kubernetes/crds.ts describe the same storage CRDs: one
// is applied by installers, the other by the server at start-up, and they must not drift.

import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { parse } from 'yaml';

import { RECORD_KINDS, recordCrd } from '../../pkg/registry/kubernetes/crds.js';
import { fromRecord, recordNames, toRecord } from '../../pkg/registry/kubernetes/records.js';
import type { StoredObject } from '../../pkg/registry/store.js';

// Compiled to dist/test/unit/: the sources are three levels up.
const CRDS = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../manifests/crds');
const load = (file: string): unknown => parse(readFileSync(join(CRDS, file), 'utf8'));

describe('Kubernetes storage CRDs', () => {
  it('each kind has a YAML file equal to recordCrd(kind)', () => {
    for (const kind of RECORD_KINDS) {
      const crd = recordCrd(kind);
      const file = `${recordNames(kind).plural}.yaml`;
      expect(load(file), file).to.deep.equal(crd);
    }
  });

  it('the kustomization lists exactly the CRD files', () => {
    const k = load('kustomization.yaml') as { resources: string[] };
    const files = readdirSync(CRDS).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect([...k.resources].sort()).to.deep.equal([...files].sort());
    expect([...k.resources].sort()).to.deep.equal(RECORD_KINDS.map((kind) => `${recordNames(kind).plural}.yaml`).sort());
  });

  it('is namespaced, without subresources or categories, with a structural schema', () => {
    const crd = recordCrd('Agent');
    const spec = crd.spec as {
      scope: string;
      names: Record<string, unknown>;
      versions: { name: string; storage: boolean; subresources?: unknown; schema: { openAPIV3Schema: { type: string } } }[];
    };
    expect(crd.metadata.name).to.equal('agentrecords.internal.agentplane.io');
    expect(spec.scope).to.equal('Namespaced');
    expect(spec.names).to.deep.equal({
      kind: 'AgentRecord',
      listKind: 'AgentRecordList',
      plural: 'agentrecords',
      singular: 'agentrecord',
    });
    expect(spec.versions).to.have.length(1);
    expect(spec.versions[0].storage).to.equal(true);
    expect(spec.versions[0].subresources).to.equal(undefined);
    expect(spec.versions[0].schema.openAPIV3Schema.type).to.equal('object');
    expect(recordCrd('Squad', 'example.com').spec).to.include({ group: 'example.com' });
  });

  it('maps an object to a record and back without loss', () => {
    const obj: StoredObject = {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Agent',
      metadata: {
        name: 'a',
        namespace: 'team',
        uid: 'u-1',
        resourceVersion: '42',
        generation: 3,
        creationTimestamp: '2026-01-02T03:04:05Z',
        deletionTimestamp: '2026-01-02T03:04:06.789Z',
        labels: { x: 'y' },
        annotations: { note: 'n' },
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Apply',
            apiVersion: 'agentplane.io/v1alpha1',
            time: '2026-01-02T03:04:05Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:task': {} } },
          },
        ],
      },
      spec: { task: 2, nested: { list: [1, null] } },
      status: { phase: 'Running' },
    };
    const rec = toRecord(obj, 'internal.agentplane.io/v1alpha1', 'AgentRecord', true);
    expect(rec.metadata).to.deep.equal({
      name: 'a',
      namespace: 'team',
      resourceVersion: '42',
      labels: { x: 'y' },
      annotations: { note: 'n' },
    });
    expect(rec.spec.generation).to.equal(3);
    // The object's uid is agentplane's, kept apart from the record's (the garbage collector keys by uid).
    expect(rec.spec.uid).to.equal('u-1');
    expect(rec.spec.deletionTimestamp).to.equal('2026-01-02T03:04:06.789Z');
    // Field ownership is the object's, in the record's spec; the record's own metadata has none of it.
    expect(rec.spec.managedFields).to.deep.equal(obj.metadata.managedFields);
    // Kubernetes assigns the record's creationTimestamp; on the way back it is the object's.
    const back = fromRecord({ ...rec, metadata: { ...rec.metadata, creationTimestamp: '2026-01-02T03:04:05Z' } });
    expect(back).to.deep.equal(obj);
    // On create no identity is sent: the API server assigns it.
    const fresh = toRecord(obj, 'internal.agentplane.io/v1alpha1', 'AgentRecord', false);
    expect(fresh.metadata).to.not.have.any.keys('uid', 'resourceVersion', 'creationTimestamp');
  });

  it('refuses a kind that cannot name a CRD', () => {
    expect(() => recordNames('agent')).to.throw(/invalid kind/);
    expect(() => recordNames('Agent-X')).to.throw(/invalid kind/);
  });
});
