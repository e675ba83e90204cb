import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { ApiError } from '../../pkg/api/errors.js';
import { secretCreateRequestSchema, secretDataCauses } from '../../pkg/api/secret.js';
import { validateSchema } from '../../pkg/api/validation.js';
import { FileSecretStore, SecretKeyMismatchError } from '../../pkg/registry/secrets/file-secret-store.js';
import { loadSecretsKey, SecretsKeyError } from '../../pkg/registry/secrets/secrets-key.js';
import { secretStoreConformance } from '../conformance/secret-store.js';
import { rejection } from '../support/assert.js';

const mode = (p: string): number => fs.statSync(p).mode & 0o777;

// The behaviour every SecretStore shares (test/conformance/secret-store.ts); the cases below are
// this store's own: files, modes, encryption at rest, older files.
secretStoreConformance('FileSecretStore', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-secrets-'));
  return { store: new FileSecretStore(path.join(dir, 'secrets'), randomBytes(32)), cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
});

describe('FileSecretStore', () => {
  let dir: string;
  let root: string;
  let store: FileSecretStore;
  let key: Buffer;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-secrets-'));
    root = path.join(dir, 'secrets');
    key = randomBytes(32);
    store = new FileSecretStore(root, key);
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
    const onDisk = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(onDisk.data).to.equal(undefined);
    expect(onDisk).to.deep.include({ name: 'github-token', namespace: 'default', keys: ['token'], allowedUrls: [] });
    expect(onDisk.encrypted.alg).to.equal('AES-256-GCM');
    expect(fs.readFileSync(file, 'utf8')).to.not.contain('ghp-secret-value');
    // No temporary file is left behind.
    expect(fs.readdirSync(path.join(root, 'default'))).to.deep.equal(['github-token.json']);
  });

  it('keeps the winner of concurrent creators as the only file, no temporary file left', async () => {
    await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.put('default', 'race', { token: `v${i}` })));
    expect(fs.readdirSync(path.join(root, 'default'))).to.deep.equal(['race.json']);
  });

  it('keeps 0600 on replace', async () => {
    await store.replace('default', 'tok', { token: 'one' });
    await store.replace('default', 'tok', { token: 'two' });
    expect(mode(path.join(root, 'default', 'tok.json'))).to.equal(0o600);
  });

  it('reads a file written before bindings existed as unbound', async () => {
    fs.mkdirSync(path.join(root, 'default'), { recursive: true, mode: 0o700 });
    const body = { name: 'legacy', namespace: 'default', createdAt: new Date().toISOString(), updatedAt: new Date().toISOString(), data: { k: 'v' } };
    fs.writeFileSync(path.join(root, 'default', 'legacy.json'), JSON.stringify(body), { mode: 0o600 });
    expect((await store.get('default', 'legacy'))!.allowedUrls).to.deep.equal([]);
  });

  it('refuses names and namespaces that could leave its directory', async () => {
    for (const [ns, name] of [
      ['default', '../escape'],
      ['..', 'tok'],
    ] as const) {
      const err = await rejection(store.put(ns, name, { k: 'v' }), ApiError);
      expect(err.code, `${ns}/${name}`).to.equal(400);
    }
    expect(fs.existsSync(path.join(dir, 'escape.json'))).to.equal(false);
    expect(fs.existsSync(path.join(dir, 'tok.json'))).to.equal(false);
  });
});

describe('secret request validation', () => {
  it('accepts a valid request', () => {
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { token: 'x', 'a.b_c-d': '' } })).to.deep.equal([]);
  });
  it('wants at least one key, string values up to 64 KiB, and known fields only', () => {
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: {} }).map((c) => c.field)).to.deep.equal(['data']);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 5 } }).map((c) => c.field)).to.deep.equal(['data.k']);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 'x'.repeat(65537) } }).map((c) => c.field)).to.deep.equal(['data.k']);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 'x'.repeat(65536) } })).to.deep.equal([]);
    expect(validateSchema(secretCreateRequestSchema, { name: 'tok', data: { k: 'v' }, value: 'x' }).map((c) => c.field)).to.deep.equal(['value']);
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
    store = new FileSecretStore(dir, randomBytes(32));
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

describe('FileSecretStore encryption at rest', () => {
  const VALUE = 'sk-live-at-rest-9f8e7d6c5b4a';
  let dir: string;
  let key: Buffer;
  let store: FileSecretStore;
  const file = (ns: string, name: string): string => path.join(dir, ns, `${name}.json`);
  const failure = async (p: Promise<unknown>): Promise<Error> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'expected a rejection').to.be.instanceOf(Error);
    expect((err as Error).message).to.not.contain(VALUE);
    return err as Error;
  };
  /** Legacy: a file as versions before encryption wrote it, the values in clear. */
  const writeLegacy = (ns: string, name: string, data: Record<string, string>, allowedUrls?: string[]): void => {
    fs.mkdirSync(path.join(dir, ns), { recursive: true, mode: 0o700 });
    const now = new Date().toISOString();
    const body = { name, namespace: ns, createdAt: now, updatedAt: now, ...(allowedUrls ? { allowedUrls } : {}), data };
    fs.writeFileSync(file(ns, name), JSON.stringify(body), { mode: 0o600 });
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-secrets-'));
    key = randomBytes(32);
    store = new FileSecretStore(dir, key);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('round-trips values; no write leaves the value (or its base64) on disk', async () => {
    await store.put('default', 'tok', { token: VALUE, other: 'x' });
    expect((await store.get('default', 'tok'))!.data).to.deep.equal({ token: VALUE, other: 'x' });
    const b64 = Buffer.from(VALUE).toString('base64').slice(0, 16);
    const check = (): void => {
      const bytes = fs.readFileSync(file('default', 'tok'));
      expect(bytes.includes(VALUE), 'value in the file').to.equal(false);
      expect(bytes.includes(b64), 'base64 of the value in the file').to.equal(false);
    };
    check();
    await store.bindIfUnbound('default', 'tok', 'https://a.example:443/x');
    check();
    await store.replace('default', 'tok', { token: VALUE });
    check();
    expect((await store.get('default', 'tok'))!).to.deep.include({ data: { token: VALUE }, allowedUrls: ['https://a.example:443/x'] });
    expect(mode(file('default', 'tok'))).to.equal(0o600);
  });

  it('uses a fresh nonce for every write', async () => {
    await store.put('default', 'tok', { token: VALUE });
    const first = JSON.parse(fs.readFileSync(file('default', 'tok'), 'utf8')).encrypted;
    await store.replace('default', 'tok', { token: VALUE });
    const second = JSON.parse(fs.readFileSync(file('default', 'tok'), 'utf8')).encrypted;
    expect(Buffer.from(first.nonce, 'base64')).to.have.length(12);
    expect(second.nonce).to.not.equal(first.nonce);
    expect(second.ciphertext).to.not.equal(first.ciphertext);
  });

  it('refuses a file with any byte of its ciphertext or tag changed', async () => {
    await store.put('default', 'tok', { token: VALUE });
    const original = fs.readFileSync(file('default', 'tok'), 'utf8');
    for (const field of ['ciphertext', 'tag', 'nonce'] as const) {
      const body = JSON.parse(original);
      const bytes = Buffer.from(body.encrypted[field], 'base64');
      bytes[bytes.length - 1] ^= 0x01;
      body.encrypted[field] = bytes.toString('base64');
      fs.writeFileSync(file('default', 'tok'), JSON.stringify(body));
      const err = await failure(store.get('default', 'tok'));
      expect(err.message, field).to.contain('does not decrypt');
    }
    fs.writeFileSync(file('default', 'tok'), original);
    expect((await store.get('default', 'tok'))!.data.token).to.equal(VALUE);
  });

  it('refuses a file whose readable binding or keys were edited', async () => {
    await store.put('default', 'tok', { token: VALUE }, ['https://a.example:443/api']);
    const original = fs.readFileSync(file('default', 'tok'), 'utf8');
    const rebound = { ...JSON.parse(original), allowedUrls: ['https://evil.example:443'] };
    fs.writeFileSync(file('default', 'tok'), JSON.stringify(rebound));
    expect((await failure(store.get('default', 'tok'))).message).to.contain('does not decrypt');
    // Bind-on-first-use cannot be tricked into rewriting it either.
    fs.writeFileSync(file('default', 'tok'), JSON.stringify({ ...JSON.parse(original), allowedUrls: [] }));
    await failure(store.bindIfUnbound('default', 'tok', 'https://evil.example:443'));
    fs.writeFileSync(file('default', 'tok'), JSON.stringify({ ...JSON.parse(original), keys: ['other'] }));
    await failure(store.get('default', 'tok'));
  });

  it('does not decrypt a file moved to another name or namespace', async () => {
    await store.put('default', 'victim', { token: VALUE });
    fs.copyFileSync(file('default', 'victim'), file('default', 'mine'));
    expect((await failure(store.get('default', 'mine'))).message).to.contain('moved');
    fs.mkdirSync(path.join(dir, 'evil'), { mode: 0o700 });
    fs.copyFileSync(file('default', 'victim'), file('evil', 'victim'));
    await failure(store.get('evil', 'victim'));
    expect((await store.get('default', 'victim'))!.data.token).to.equal(VALUE);
  });

  it('with another key: a clear error on read, open and replace, and nothing overwritten', async () => {
    await store.put('default', 'tok', { token: VALUE });
    const before = fs.readFileSync(file('default', 'tok'));
    const other = new FileSecretStore(dir, randomBytes(32));
    const onGet = await failure(other.get('default', 'tok'));
    expect(onGet).to.be.instanceOf(SecretKeyMismatchError);
    expect(onGet.message).to.contain('another key').and.to.contain('--secrets-key-file');
    const onOpen = await failure(other.open());
    expect(onOpen).to.be.instanceOf(SecretKeyMismatchError);
    expect(onOpen.message).to.contain('default/tok').and.to.contain('Nothing was changed');
    expect(await failure(other.replace('default', 'tok', { token: 'new' }))).to.be.instanceOf(SecretKeyMismatchError);
    expect(await failure(other.bindIfUnbound('default', 'tok', 'https://a.example:443'))).to.be.instanceOf(SecretKeyMismatchError);
    expect(fs.readFileSync(file('default', 'tok')).equals(before), 'file unchanged').to.equal(true);
    // A key of the wrong size is refused outright.
    expect(() => new FileSecretStore(dir, randomBytes(16))).to.throw('32 bytes');
  });

  it('open() encrypts files an older version wrote in clear, keeping binding and createdAt', async () => {
    writeLegacy('default', 'legacy', { token: VALUE }, ['https://a.example:443/api']);
    writeLegacy('team', 'older', { k: VALUE });
    await store.put('default', 'fresh', { token: 'new' });
    const createdAt = JSON.parse(fs.readFileSync(file('default', 'legacy'), 'utf8')).createdAt;
    // A temporary file a crash left behind (may hold values in clear) goes too.
    fs.writeFileSync(path.join(dir, 'default', '.legacy.1234.tmp'), VALUE, { mode: 0o600 });
    const { migrated } = await store.open();
    expect(migrated).to.deep.equal(['default/legacy', 'team/older']);
    for (const [ns, name] of [
      ['default', 'legacy'],
      ['team', 'older'],
    ] as const) {
      expect(fs.readFileSync(file(ns, name), 'utf8')).to.not.contain(VALUE);
      expect(JSON.parse(fs.readFileSync(file(ns, name), 'utf8')).encrypted).to.be.an('object');
      expect(mode(file(ns, name))).to.equal(0o600);
    }
    expect(fs.readdirSync(path.join(dir, 'default')).sort()).to.deep.equal(['fresh.json', 'legacy.json']);
    expect(await store.get('default', 'legacy')).to.deep.include({ data: { token: VALUE }, allowedUrls: ['https://a.example:443/api'], createdAt });
    expect((await store.get('team', 'older'))!.data).to.deep.equal({ k: VALUE });
    expect((await store.open()).migrated).to.deep.equal([]);
  });

  it('encrypts a file written in clear on its first read', async () => {
    writeLegacy('default', 'legacy', { token: VALUE });
    expect((await store.list()).map((s) => [s.name, s.keys])).to.deep.equal([['legacy', ['token']]]);
    expect((await store.get('default', 'legacy'))!.data).to.deep.equal({ token: VALUE });
    expect(fs.readFileSync(file('default', 'legacy'), 'utf8')).to.not.contain(VALUE);
    expect((await store.get('default', 'legacy'))!.data).to.deep.equal({ token: VALUE });
  });

  it('lists names, keys and bindings without decrypting (and without the values)', async () => {
    await store.put('default', 'tok', { token: VALUE, b: 'x' }, ['https://a.example:443']);
    const listed = await new FileSecretStore(dir, randomBytes(32)).list();
    expect(listed.map((s) => [s.name, s.keys, s.allowedUrls])).to.deep.equal([['tok', ['b', 'token'], ['https://a.example:443']]]);
    expect(JSON.stringify(listed)).to.not.contain(VALUE);
  });
});

describe('loadSecretsKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-secrets-key-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const refusal = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      expect(err).to.be.instanceOf(SecretsKeyError);
      return (err as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('creates the default key file (32 random bytes, 0600 whatever the umask) once, then reads it', () => {
    const file = path.join(dir, 'secrets.key');
    const old = process.umask(0o000);
    let key: Buffer;
    try {
      key = loadSecretsKey(file, { createIfAbsent: true });
    } finally {
      process.umask(old);
    }
    expect(key).to.have.length(32);
    expect(mode(file)).to.equal(0o600);
    expect(fs.readFileSync(file).equals(key)).to.equal(true);
    expect(loadSecretsKey(file, { createIfAbsent: true }).equals(key)).to.equal(true);
    expect(loadSecretsKey(path.join(dir, 'other.key'), { createIfAbsent: true }).equals(key)).to.equal(false);
  });

  it('refuses a named key file that does not exist, saying how to make one', () => {
    const msg = refusal(() => loadSecretsKey(path.join(dir, 'missing.key')));
    expect(msg).to.contain('does not exist').and.to.contain('head -c 32 /dev/urandom');
    expect(fs.existsSync(path.join(dir, 'missing.key'))).to.equal(false);
  });

  it('refuses a key file group or others may access', () => {
    const file = path.join(dir, 'k');
    fs.writeFileSync(file, randomBytes(32));
    for (const m of [0o640, 0o604, 0o620, 0o602]) {
      fs.chmodSync(file, m);
      expect(
        refusal(() => loadSecretsKey(file)),
        m.toString(8),
      )
        .to.contain(`mode 0${m.toString(8)}`)
        .and.to.contain('chmod 600');
    }
    fs.chmodSync(file, 0o400);
    expect(loadSecretsKey(file)).to.have.length(32);
  });

  it('refuses a key file of another size than 32 bytes', () => {
    const file = path.join(dir, 'k');
    for (const n of [0, 16, 31, 33, 44]) {
      fs.writeFileSync(file, randomBytes(n), { mode: 0o600 });
      expect(
        refusal(() => loadSecretsKey(file)),
        String(n),
      )
        .to.contain(`exactly 32 bytes`)
        .and.to.contain(`holds ${n}`);
    }
  });
});
