// Deletion rules (pkg/api/deletion.ts) and the generic Registry's deletion: finalizers hold an
// object, the write removing the last one deletes it, propagationPolicy only where a garbage
// collector runs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CONNECTOR_KIND, type Connector, type ConnectorSpec } from '../../pkg/api/connector.js';
import { finalizersForPolicy, validateFinalizers, validateOwnerReferences } from '../../pkg/api/deletion.js';
import { ApiError } from '../../pkg/api/errors.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { WatchEvent } from '../../pkg/registry/store.js';
import { rejection } from '../support/assert.js';

const fields = (causes: { field: string }[]): string[] => causes.map((c) => c.field);

describe('deletion rules', () => {
  it('finalizers: qualified names, prefixed unless standard, not orphan and foregroundDeletion together', () => {
    expect(validateFinalizers(['example.com/a', 'orphan', 'a.b/c_d.e-f'])).to.deep.equal([]);
    expect(validateFinalizers(undefined)).to.deep.equal([]);
    expect(fields(validateFinalizers(['custom', 'Example.com/x', '/x', 'example.com/', `example.com/${'a'.repeat(64)}`]))).to.deep.equal([
      'metadata.finalizers[0]',
      'metadata.finalizers[1]',
      'metadata.finalizers[2]',
      'metadata.finalizers[3]',
      'metadata.finalizers[4]',
    ]);
    expect(fields(validateFinalizers(['orphan', 'foregroundDeletion']))).to.deep.equal(['metadata.finalizers']);
  });

  it('owner references: apiVersion, kind, name, uid required; one controller at most', () => {
    const ref = (name: string, controller?: boolean) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name,
      uid: `u-${name}`,
      ...(controller !== undefined ? { controller } : {}),
    });
    expect(validateOwnerReferences([ref('a', true), ref('b', false), ref('c')])).to.deep.equal([]);
    expect(fields(validateOwnerReferences([{ apiVersion: '', kind: '', name: '', uid: '' }]))).to.deep.equal([
      'metadata.ownerReferences[0].apiVersion',
      'metadata.ownerReferences[0].kind',
      'metadata.ownerReferences[0].name',
      'metadata.ownerReferences[0].uid',
    ]);
    expect(fields(validateOwnerReferences([{ ...ref('a'), apiVersion: 'a/b/c' }]))).to.deep.equal(['metadata.ownerReferences[0].apiVersion']);
    const two = validateOwnerReferences([ref('a', true), ref('b', true)]);
    expect(two).to.have.length(1);
    expect(two[0].message).to.contain('ConfigMap/a and ConfigMap/b');
  });

  it('propagation policies add or remove the garbage collector finalizers, keeping others', () => {
    expect(finalizersForPolicy(['x.io/a'], undefined)).to.deep.equal(['x.io/a']);
    expect(finalizersForPolicy(['x.io/a', 'orphan'], 'Foreground')).to.deep.equal(['x.io/a', 'foregroundDeletion']);
    expect(finalizersForPolicy(['foregroundDeletion'], 'Orphan')).to.deep.equal(['orphan']);
    expect(finalizersForPolicy(['orphan', 'x.io/a'], 'Background')).to.deep.equal(['x.io/a']);
  });
});

describe('Registry deletion (on SqliteState)', () => {
  let dir: string;
  let state: SqliteState;
  const registry = (garbageCollector: boolean) =>
    new Registry<Connector>(state.store<Connector>(CONNECTOR_KIND), connectorStrategy, undefined, { garbageCollector });
  const draft = (name: string, finalizers?: string[]): Connector => ({
    apiVersion: '',
    kind: '',
    metadata: { name, namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '', ...(finalizers ? { finalizers } : {}) },
    spec: { url: 'http://127.0.0.1:9/mcp' } as ConnectorSpec,
    status: undefined as unknown as Connector['status'],
  });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-deletion-'));
    state = new SqliteState(path.join(dir, 'state.db'));
  });
  afterEach(() => {
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('marks an object with finalizers, keeps the timestamp, refuses new finalizers, deletes on the last removal', async () => {
    const r = registry(false);
    await r.create(draft('held', ['example.com/a', 'example.com/b']));
    const events: WatchEvent<Connector>[] = [];
    const unwatch = r.watch((ev) => events.push(ev));
    const marked = await r.delete('default', 'held');
    expect(marked.metadata.deletionTimestamp).to.be.a('string');
    expect((await r.delete('default', 'held')).metadata.deletionTimestamp).to.equal(marked.metadata.deletionTimestamp);

    const added = await rejection(
      r.update('default', 'held', (c) => void c.metadata.finalizers!.push('example.com/c')),
      ApiError,
    );
    expect(added.reason).to.equal('Invalid');
    expect(added.message).to.contain('no new finalizers');
    // deletionTimestamp is the server's: a write cannot clear it.
    await r.update('default', 'held', (c) => {
      delete c.metadata.deletionTimestamp;
      c.metadata.labels = { still: 'writable' };
    });
    expect((await r.get('default', 'held'))!.metadata.deletionTimestamp).to.equal(marked.metadata.deletionTimestamp);

    await r.removeFinalizer('default', 'held', 'example.com/a');
    expect(await r.get('default', 'held')).to.not.equal(undefined);
    await r.update('default', 'held', (c) => void (c.metadata.finalizers = []));
    expect(await r.get('default', 'held')).to.equal(undefined);
    unwatch();
    expect(events.map((e) => e.type)).to.deep.equal(['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
  });

  it('without a garbage collector propagationPolicy changes nothing: no finalizers, deleted at once', async () => {
    const r = registry(false);
    await r.create(draft('plain'));
    await r.delete('default', 'plain', { propagationPolicy: 'Foreground' });
    expect(await r.get('default', 'plain')).to.equal(undefined);
  });

  it('with a garbage collector Foreground and Orphan add their finalizer, Background removes them', async () => {
    const r = registry(true);
    await r.create(draft('fg'));
    const fg = await r.delete('default', 'fg', { propagationPolicy: 'Foreground' });
    expect(fg.metadata.finalizers).to.deep.equal(['foregroundDeletion']);
    expect(fg.metadata.deletionTimestamp).to.be.a('string');
    const orphan = await r.delete('default', 'fg', { propagationPolicy: 'Orphan' });
    expect(orphan.metadata.finalizers).to.deep.equal(['orphan']);
    expect(orphan.metadata.deletionTimestamp).to.equal(fg.metadata.deletionTimestamp);
    await r.delete('default', 'fg', { propagationPolicy: 'Background' });
    expect(await r.get('default', 'fg')).to.equal(undefined);

    await r.create(draft('dry'));
    const dry = await r.delete('default', 'dry', { propagationPolicy: 'Orphan', dryRun: true });
    expect(dry.metadata.finalizers).to.deep.equal(['orphan']);
    expect((await r.get('default', 'dry'))!.metadata.deletionTimestamp).to.equal(undefined);
  });

  it('refuses invalid finalizers and owner references on create and update', async () => {
    const r = registry(false);
    const bad = await rejection(r.create(draft('bad', ['nope'])), ApiError);
    expect(bad.details.causes!.map((c) => c.field)).to.deep.equal(['metadata.finalizers[0]']);
    await r.create(draft('ok'));
    const refs = await rejection(
      r.update('default', 'ok', (c) => void (c.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '' }])),
      ApiError,
    );
    expect(refs.details.causes!.map((c) => c.field)).to.deep.equal(['metadata.ownerReferences[0].uid']);
  });
});
