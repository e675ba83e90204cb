import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { ApiError } from '../../pkg/api/errors.js';
import { secretCreateRequestSchema, secretDataCauses } from '../../pkg/api/secret.js';
import { validateSchema } from '../../pkg/api/validation.js';
import { FileSecretStore } from '../../pkg/registry/secrets/file-secret-store.js';
import { rejection } from '../support/assert.js';

const mode = (p: string): number => fs.statSync(p).mode & 0o777;

describe('FileSecretStore', () => {
  let dir: string;
  let root: string;
  let store: FileSecretStore;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-secrets-'));
    root = path.join(dir, 'secrets');
    store = new FileSecretStore(root);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes <root>/<namespace>/<name>.json with 0700 directories and a 0600 file', async () => {
    const old = process.umask(0o000); // the store must not rely on the umask
    try {
      await store.put('default', 'github-token', { token: 'ghp-secret-value' });
    } finally {
      process.umask(old);
    }
    const file = path.join(root, 'default', 'github-token.json');
    expect(mode(root)).to.equal(0o700);
    expect(mode(path.join(root, 'default'))).to.equal(0o700);
    expect(mode(file)).to.equal(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).data).to.deep.equal({ token: 'ghp-secret-value' });
    // No temporary file is left behind.
    expect(fs.readdirSync(path.join(root, 'default'))).to.deep.equal(['github-token.json']);
  });

  it('returns names and keys (sorted) from put, list and delete, never values', async () => {
    const meta = await store.put('default', 'multi', { b: 'value-b', a: 'value-a' });
    expect(meta).to.deep.equal({ name: 'multi', namespace: 'default', keys: ['a', 'b'], allowedUrls: [], createdAt: meta.createdAt });
    expect(Date.parse(meta.createdAt)).to.be.closeTo(Date.now(), 10_000);
    const listed = await store.list();
    expect(JSON.stringify(listed)).to.not.contain('value-');
    expect(listed).to.deep.equal([meta]);
    const removed = await store.delete('default', 'multi');
    expect(removed).to.deep.equal(meta);
    expect(JSON.stringify(removed)).to.not.contain('value-');
  });

  it('gets the values (internal use)', async () => {
    await store.put('team', 'tok', { token: 't1' });
    expect((await store.get('team', 'tok'))!.data).to.deep.equal({ token: 't1' });
    expect(await store.get('team', 'other')).to.equal(undefined);
    expect(await store.get('nowhere', 'tok')).to.equal(undefined);
  });

  it('refuses to create an existing secret (409 AlreadyExists) and keeps the first', async () => {
    await store.put('default', 'tok', { token: 'first' });
    const err = await rejection(store.put('default', 'tok', { token: 'second' }), ApiError);
    expect(err.reason).to.equal('AlreadyExists');
    expect(err.code).to.equal(409);
    expect((await store.get('default', 'tok'))!.data.token).to.equal('first');
  });

  it('lets exactly one of many concurrent creators win', async () => {
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.put('default', 'race', { token: `v${i}` })));
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
    expect(results.filter((r) => r.status === 'rejected')).to.have.length(9);
    expect(fs.readdirSync(path.join(root, 'default'))).to.deep.equal(['race.json']);
  });

  it('replaces (keeping createdAt and 0600) or creates', async () => {
    const first = await store.replace('default', 'tok', { token: 'one' });
    expect(first.created).to.equal(true);
    const second = await store.replace('default', 'tok', { token: 'two', extra: 'x' });
    expect(second.created).to.equal(false);
    expect(second.secret.createdAt).to.equal(first.secret.createdAt);
    expect(second.secret.keys).to.deep.equal(['extra', 'token']);
    expect((await store.get('default', 'tok'))!.data).to.deep.equal({ token: 'two', extra: 'x' });
    expect(mode(path.join(root, 'default', 'tok.json'))).to.equal(0o600);
  });

  it('stores the binding; replace without one keeps it, with one replaces it', async () => {
    const made = await store.put('default', 'bound', { token: 'one' }, ['https://a.example:443/api']);
    expect(made.allowedUrls).to.deep.equal(['https://a.example:443/api']);
    const kept = await store.replace('default', 'bound', { token: 'two' });
    expect(kept.secret.allowedUrls).to.deep.equal(['https://a.example:443/api']);
    const changed = await store.replace('default', 'bound', { token: 'three' }, ['https://b.example:443']);
    expect(changed.secret.allowedUrls).to.deep.equal(['https://b.example:443']);
    expect((await store.get('default', 'bound'))!.allowedUrls).to.deep.equal(['https://b.example:443']);
    expect((await store.replace('default', 'fresh', { token: 'x' })).secret.allowedUrls).to.deep.equal([]);
  });

  it('binds an unbound secret once: the first binder wins, a bound secret is left as it is', async () => {
    await store.put('default', 'tofu', { token: 'v' });
    const results = await Promise.all(
      ['http://a.example:80/x', 'http://b.example:80/y', 'http://c.example:80/z'].map((p) => store.bindIfUnbound('default', 'tofu', p)),
    );
    const winner = results[0]!.allowedUrls;
    expect(winner).to.have.length(1);
    for (const r of results) expect(r!.allowedUrls).to.deep.equal(winner);
    expect((await store.get('default', 'tofu'))!.allowedUrls).to.deep.equal(winner);
    expect((await store.get('default', 'tofu'))!.data).to.deep.equal({ token: 'v' });
    expect(await store.bindIfUnbound('default', 'ghost', 'http://a.example:80')).to.equal(undefined);
    // A binding survives a concurrent replace that does not name one.
    await store.put('default', 'race', { token: 'v1' });
    await Promise.all([store.bindIfUnbound('default', 'race', 'http://a.example:80/mcp'), store.replace('default', 'race', { token: 'v2' })]);
    expect((await store.get('default', 'race'))!.allowedUrls).to.deep.equal(['http://a.example:80/mcp']);
  });

  it('reads a file written before bindings existed as unbound', async () => {
    fs.mkdirSync(path.join(root, 'default'), { recursive: true, mode: 0o700 });
    const body = { name: 'legacy', namespace: 'default', createdAt: new Date().toISOString(), updatedAt: new Date().toISOString(), data: { k: 'v' } };
    fs.writeFileSync(path.join(root, 'default', 'legacy.json'), JSON.stringify(body), { mode: 0o600 });
    expect((await store.get('default', 'legacy'))!.allowedUrls).to.deep.equal([]);
  });

  it('lists per namespace and across namespaces, in order', async () => {
    await store.put('b-ns', 'zeta', { k: 'v' });
    await store.put('a-ns', 'beta', { k: 'v' });
    await store.put('a-ns', 'alpha', { k: 'v' });
    expect((await store.list()).map((s) => `${s.namespace}/${s.name}`)).to.deep.equal(['a-ns/alpha', 'a-ns/beta', 'b-ns/zeta']);
    expect((await store.list('a-ns')).map((s) => s.name)).to.deep.equal(['alpha', 'beta']);
    expect(await store.list('empty')).to.deep.equal([]);
  });

  it('answers undefined when deleting what is not there', async () => {
    expect(await store.delete('default', 'ghost')).to.equal(undefined);
  });

  it('refuses names and namespaces that could leave its directory', async () => {
    for (const [ns, name] of [
      ['default', '../escape'],
      ['default', 'a/b'],
      ['..', 'tok'],
      ['default', 'Tok'],
      ['default', ''],
    ] as const) {
      const err = await rejection(store.put(ns, name, { k: 'v' }), ApiError);
      expect(err.code, `${ns}/${name}`).to.equal(400);
    }
    expect(fs.existsSync(path.join(dir, 'escape.json'))).to.equal(false);
  });
});

describe('secret request validation', () => {
  it('accepts a valid request', () => {
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { token: 'x', 'a.b_c-d': '' } })).to.deep.equal([]);
  });
  it('wants at least one key, string values up to 64 KiB, and known fields only', () => {
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: {} }).map((c) => c.field)).to.deep.equal(['data']);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 5 } }).map((c) => c.field)).to.deep.equal(['data.k']);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 'x'.repeat(65537) } }).map((c) => c.field)).to.deep.equal([
      'data.k',
    ]);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 'x'.repeat(65536) } })).to.deep.equal([]);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 'v' }, value: 'x' }).map((c) => c.field)).to.deep.equal([
      'value',
    ]);
    expect(validateSchema(secretCreateRequestSchema, { name: 'Tok1', data: { k: 'v' } }).map((c) => c.field)).to.deep.equal(['name']);
  });
  it('names a bad key', () => {
    expect(secretDataCauses({ 'bad key': 'v', good: 'v', 'a/b': 'v' }).map((c) => c.field)).to.deep.equal(['data["bad key"]', 'data["a/b"]']);
  });
});

describe('FileSecretStore with a damaged file', () => {
  let dir: string;
  let store: FileSecretStore;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-secrets-'));
    store = new FileSecretStore(dir);
    await store.put('default', 'good', { k: 'v' });
    fs.writeFileSync(path.join(dir, 'default', 'broken.json'), 'sk-live-damaged-value', { mode: 0o600 });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('fails get without quoting the content, leaves it out of the list, and can delete or replace it', async () => {
    let err: unknown;
    try {
      await store.get('default', 'broken');
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Error);
    expect(String((err as Error).message)).to.not.contain('damaged');
    expect((await store.list('default')).map((s) => s.name)).to.deep.equal(['good']);
    expect((await store.replace('default', 'broken', { k: 'new' })).created).to.equal(false);
    expect((await store.get('default', 'broken'))!.data).to.deep.equal({ k: 'new' });
    fs.writeFileSync(path.join(dir, 'default', 'broken.json'), '{', { mode: 0o600 });
    expect((await store.delete('default', 'broken'))!.name).to.equal('broken');
    expect(fs.existsSync(path.join(dir, 'default', 'broken.json'))).to.equal(false);
  });
});
