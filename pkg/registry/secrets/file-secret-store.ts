// Secrets of the embedded home as files: <root>/<namespace>/<name>.json, directories 0700, files
// 0600. Every write goes to a temporary file first (fsynced), then link (create: fails if the
// name is taken, so two creators cannot both win) or rename (replace) puts it in place
// atomically: a reader sees the old secret or the new one, never half of one. Writes of one
// secret that read it first (replace, bind) run one at a time, so a binding is never lost.
//
// The values are encrypted at rest with AES-256-GCM (secrets-key.ts has the key): a fresh random
// 96-bit nonce per write, the 128-bit tag checked on every read. Name, namespace, keys,
// allowedUrls and times stay readable (the API shows them anyway, and listing needs no key) but
// are authenticated: the additional data binds namespace/name (a file moved to another name does
// not decrypt), createdAt, keys and allowedUrls (a binding edited on disk does not decrypt).
// Files written before encryption (values in clear) are re-written encrypted by open() at
// start-up, or on their first read.

import { createCipheriv, createDecipheriv, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { alreadyExists, invalid } from '../../api/errors.js';
import { NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, NAMESPACE_PATTERN, NAMESPACE_RULE } from '../../api/meta.js';
import { SECRET_KIND } from '../../api/secret.js';
import { type Secret, type SecretMeta, type SecretStore } from '../secrets.js';
import { SECRETS_KEY_BYTES } from './secrets-key.js';

const nameRe = new RegExp(NAME_PATTERN);
const nsRe = new RegExp(NAMESPACE_PATTERN);
const SUFFIX = '.json';
const TMP_SUFFIX = '.tmp';
/** A file that exists but does not hold a readable secret. */
const CORRUPT = 'corrupt' as const;
const ALG = 'AES-256-GCM';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** What a file holds. */
interface SecretFile {
  name: string;
  namespace: string;
  createdAt: string;
  updatedAt: string;
  /** Absent in files written before bindings existed: unbound. */
  allowedUrls?: string[];
  /** Sorted; in clear so that listing needs no key (authenticated with the values). */
  keys?: string[];
  /** The values in clear: only in files written before encryption (migrated by open()). */
  data?: Record<string, string>;
  /** The values, JSON, encrypted. */
  encrypted?: { alg: string; keyId: string; nonce: string; tag: string; ciphertext: string };
}

/** A secret as the store works with it, values decrypted. */
interface Plain {
  createdAt: string;
  updatedAt: string;
  allowedUrls: string[];
  data: Record<string, string>;
}

/** The stored secret was encrypted with another key: refuse, overwrite nothing. */
export class SecretKeyMismatchError extends Error {}

export interface OpenResult {
  /** Files with values in clear (older versions) now re-written encrypted. */
  migrated: string[];
}

export class FileSecretStore implements SecretStore {
  /** Per-file tail of the writes that read the file first. */
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly key: Buffer;
  /** Names the key in each file (not the key: an HMAC of a constant under it). */
  private readonly keyId: string;

  /** `root` is the secrets directory, e.g. <dataDir>/secrets; `key` 32 bytes (loadSecretsKey). */
  constructor(
    private readonly root: string,
    key: Buffer,
  ) {
    if (key.length !== SECRETS_KEY_BYTES) throw new Error(`the secrets key must be ${SECRETS_KEY_BYTES} bytes, got ${key.length}`);
    this.key = Buffer.from(key);
    this.keyId = keyIdOf(this.key);
  }

  /**
   * At start-up: refuses (SecretKeyMismatchError, nothing written) when any stored secret was
   * encrypted with another key; else re-writes the files that hold values in clear, encrypted,
   * and removes temporary files a crash left behind (they may hold values in clear).
   */
  async open(): Promise<OpenResult> {
    const found: { ns: string; name: string; raw: SecretFile }[] = [];
    const otherKey: string[] = [];
    for (const ns of (await readDir(this.root)).filter((n) => nsRe.test(n)).sort()) {
      const dir = join(this.root, ns);
      for (const f of (await readDir(dir)).sort()) {
        if (f.startsWith('.') && f.endsWith(TMP_SUFFIX)) {
          await fs.rm(join(dir, f), { force: true });
          continue;
        }
        if (!f.endsWith(SUFFIX) || !nameRe.test(f.slice(0, -SUFFIX.length))) continue;
        const raw = await readSecretFile(join(dir, f)).catch(() => undefined);
        if (!raw) continue;
        const name = f.slice(0, -SUFFIX.length);
        if (raw.encrypted && raw.encrypted.keyId !== this.keyId) otherKey.push(`${ns}/${name}`);
        found.push({ ns, name, raw });
      }
    }
    if (otherKey.length) {
      throw new SecretKeyMismatchError(
        `${otherKey.length} stored secret(s) (${otherKey.slice(0, 5).join(', ')}${otherKey.length > 5 ? ', ...' : ''}) were encrypted ` +
          `with another key than the secrets key file's: is --secrets-key-file the key this data directory was written with? Nothing was changed`,
      );
    }
    const migrated: string[] = [];
    for (const { ns, name, raw } of found) {
      if (raw.encrypted) continue;
      if (await this.migrate(ns, name)) migrated.push(`${ns}/${name}`);
    }
    return { migrated };
  }

  /** Re-writes a file that holds its values in clear, encrypted; false when there is none. */
  private migrate(namespace: string, name: string): Promise<boolean> {
    const file = this.file(namespace, name);
    return this.serialized(file, async () => {
      const raw = await readSecretFile(file);
      if (!raw || raw.encrypted) return false;
      const plain = this.decrypt(namespace, name, raw);
      await this.writeInPlace(namespace, name, file, plain);
      return true;
    });
  }

  async put(namespace: string, name: string, data: Record<string, string>, allowedUrls: string[] = []): Promise<SecretMeta> {
    const file = this.file(namespace, name);
    const now = new Date().toISOString();
    const body: Plain = { createdAt: now, updatedAt: now, allowedUrls: [...allowedUrls], data: { ...data } };
    const tmp = await this.writeTemp(namespace, name, body);
    try {
      await fs.link(tmp, file);
    } catch (err) {
      if (code(err) === 'EEXIST') throw alreadyExists(SECRET_KIND, name);
      throw err;
    } finally {
      await fs.rm(tmp, { force: true });
    }
    await syncDir(this.dir(namespace));
    return metaOf(namespace, name, body);
  }

  async replace(namespace: string, name: string, data: Record<string, string>, allowedUrls?: string[]): Promise<{ secret: SecretMeta; created: boolean }> {
    const file = this.file(namespace, name);
    return this.serialized(file, async () => {
      // Another key's secret is not replaced (the key is wrong, not the secret); a damaged file is.
      const old = await this.read(namespace, name, file).catch((err: unknown) => {
        if (err instanceof SecretKeyMismatchError) throw err;
        return CORRUPT;
      });
      const prev = old && old !== CORRUPT ? old : undefined;
      const now = new Date().toISOString();
      const body: Plain = {
        createdAt: prev?.createdAt ?? now,
        updatedAt: now,
        allowedUrls: [...(allowedUrls ?? prev?.allowedUrls ?? [])],
        data: { ...data },
      };
      await this.writeInPlace(namespace, name, file, body);
      return { secret: metaOf(namespace, name, body), created: !old };
    });
  }

  async bindIfUnbound(namespace: string, name: string, prefix: string): Promise<SecretMeta | undefined> {
    const file = this.file(namespace, name);
    return this.serialized(file, async () => {
      const cur = await this.read(namespace, name, file);
      if (!cur) return undefined;
      if (cur.allowedUrls.length) return metaOf(namespace, name, cur);
      const body: Plain = { ...cur, allowedUrls: [prefix], updatedAt: new Date().toISOString() };
      await this.writeInPlace(namespace, name, file, body);
      return metaOf(namespace, name, body);
    });
  }

  /** Temporary file, then rename over the old one. */
  private async writeInPlace(namespace: string, name: string, file: string, body: Plain): Promise<void> {
    const tmp = await this.writeTemp(namespace, name, body);
    try {
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    await syncDir(this.dir(namespace));
  }

  private serialized<R>(file: string, fn: () => Promise<R>): Promise<R> {
    const prev = this.locks.get(file) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(file, tail);
    void tail.then(() => {
      if (this.locks.get(file) === tail) this.locks.delete(file);
    });
    return run;
  }

  async get(namespace: string, name: string): Promise<Secret | undefined> {
    const file = this.file(namespace, name);
    const raw = await readSecretFile(file);
    if (!raw) return undefined;
    const plain = this.decrypt(namespace, name, raw);
    // Values in clear (an older version wrote them): encrypted from now on.
    if (!raw.encrypted) await this.migrate(namespace, name);
    return { ...metaOf(namespace, name, plain), data: plain.data };
  }

  async list(namespace?: string): Promise<SecretMeta[]> {
    const namespaces = namespace !== undefined ? [this.checkNamespace(namespace)] : (await readDir(this.root)).filter((n) => nsRe.test(n)).sort();
    const out: SecretMeta[] = [];
    for (const ns of namespaces) {
      const files = (await readDir(join(this.root, ns))).filter((f) => f.endsWith(SUFFIX) && nameRe.test(f.slice(0, -SUFFIX.length))).sort();
      for (const f of files) {
        // An unreadable file is left out of the list (get names it; delete removes it).
        const body = await readSecretFile(join(this.root, ns, f)).catch(() => undefined);
        const meta = body && headerMeta(ns, f.slice(0, -SUFFIX.length), body);
        if (meta) out.push(meta);
      }
    }
    return out;
  }

  async delete(namespace: string, name: string): Promise<SecretMeta | undefined> {
    const file = this.file(namespace, name);
    return this.serialized(file, () => this.deleteFile(namespace, name, file));
  }

  private async deleteFile(namespace: string, name: string, file: string): Promise<SecretMeta | undefined> {
    const body = await readSecretFile(file).catch(() => CORRUPT);
    if (!body) return undefined;
    try {
      await fs.unlink(file);
    } catch (err) {
      if (code(err) === 'ENOENT') return undefined;
      throw err;
    }
    await syncDir(this.dir(namespace));
    const meta = body === CORRUPT ? undefined : headerMeta(namespace, name, body);
    return meta ?? { name, namespace, keys: [], allowedUrls: [], createdAt: new Date(0).toISOString() };
  }

  /** The secret with its values; undefined when absent; throws when it does not decrypt. */
  private async read(namespace: string, name: string, file: string): Promise<Plain | undefined> {
    const raw = await readSecretFile(file);
    return raw && this.decrypt(namespace, name, raw);
  }

  /** The values of a file (decrypted, tag checked), or those in clear of an older file. */
  private decrypt(namespace: string, name: string, raw: SecretFile): Plain {
    const where = `secret ${namespace}/${name}`;
    const allowedUrls = urlsOf(raw);
    if (!raw.encrypted) {
      if (!isData(raw.data)) throw new Error(`${where}: its file does not hold a secret`);
      return { createdAt: raw.createdAt, updatedAt: raw.updatedAt, allowedUrls, data: raw.data };
    }
    const e = raw.encrypted;
    if (e.alg !== ALG) throw new Error(`${where}: its file is encrypted with ${JSON.stringify(e.alg)}, not ${ALG}`);
    if (e.keyId !== this.keyId) {
      throw new SecretKeyMismatchError(
        `${where} was encrypted with another key than the secrets key file's: is --secrets-key-file the key this data directory was written with?`,
      );
    }
    const nonce = Buffer.from(String(e.nonce), 'base64');
    const tag = Buffer.from(String(e.tag), 'base64');
    const damaged = new Error(`${where} does not decrypt: its file was altered, or moved from another secret's name`);
    if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES || !Array.isArray(raw.keys)) throw damaged;
    let data: unknown;
    try {
      const d = createDecipheriv('aes-256-gcm', this.key, nonce, { authTagLength: TAG_BYTES });
      d.setAAD(aad(namespace, name, raw.createdAt, raw.keys, allowedUrls));
      d.setAuthTag(tag);
      const clear = Buffer.concat([d.update(Buffer.from(String(e.ciphertext), 'base64')), d.final()]);
      data = JSON.parse(clear.toString('utf8'));
    } catch {
      // Neither the cipher's message nor JSON.parse's: the latter quotes the text, the values.
      throw damaged;
    }
    if (!isData(data) || JSON.stringify(Object.keys(data).sort()) !== JSON.stringify(raw.keys)) throw damaged;
    return { createdAt: raw.createdAt, updatedAt: raw.updatedAt, allowedUrls, data };
  }

  /** The file's content for `body`: values encrypted under a fresh nonce. */
  private encrypt(namespace: string, name: string, body: Plain): SecretFile {
    const keys = Object.keys(body.data).sort();
    const nonce = randomBytes(NONCE_BYTES);
    const c = createCipheriv('aes-256-gcm', this.key, nonce, { authTagLength: TAG_BYTES });
    c.setAAD(aad(namespace, name, body.createdAt, keys, body.allowedUrls));
    const ciphertext = Buffer.concat([c.update(JSON.stringify(body.data), 'utf8'), c.final()]);
    return {
      name,
      namespace,
      createdAt: body.createdAt,
      updatedAt: body.updatedAt,
      allowedUrls: [...body.allowedUrls],
      keys,
      encrypted: {
        alg: ALG,
        keyId: this.keyId,
        nonce: nonce.toString('base64'),
        tag: c.getAuthTag().toString('base64'),
        ciphertext: ciphertext.toString('base64'),
      },
    };
  }

  private dir(namespace: string): string {
    return join(this.root, this.checkNamespace(namespace));
  }

  /** The path of a secret; names are checked here too, so no input can point outside the root. */
  private file(namespace: string, name: string): string {
    if (!name || name.length > NAME_MAX_LENGTH || !nameRe.test(name)) {
      throw invalid(SECRET_KIND, undefined, [{ field: 'name', message: `must be ${NAME_RULE}` }]);
    }
    return join(this.dir(namespace), name + SUFFIX);
  }

  private checkNamespace(namespace: string): string {
    if (!namespace || namespace.length > 63 || !nsRe.test(namespace)) {
      throw invalid(SECRET_KIND, undefined, [{ field: 'namespace', message: `must be ${NAMESPACE_RULE}` }]);
    }
    return namespace;
  }

  /** Writes `body` to a fresh 0600 file next to its final place and fsyncs it; returns its path. */
  private async writeTemp(namespace: string, name: string, body: Plain): Promise<string> {
    const content = JSON.stringify(this.encrypt(namespace, name, body));
    const dir = this.dir(namespace);
    await ensurePrivateDir(this.root);
    await ensurePrivateDir(dir);
    const tmp = join(dir, `.${name}.${randomUUID()}${TMP_SUFFIX}`);
    const handle = await fs.open(tmp, 'wx', 0o600);
    try {
      await handle.chmod(0o600); // whatever the umask did
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } catch (err) {
      await handle.close();
      await fs.rm(tmp, { force: true });
      throw err;
    }
    await handle.close();
    return tmp;
  }
}

async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await fs.stat(dir);
  if ((st.mode & 0o777) !== 0o700) await fs.chmod(dir, 0o700);
}

async function readSecretFile(file: string): Promise<SecretFile | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined;
    throw err;
  }
  let body: SecretFile;
  try {
    body = JSON.parse(text) as SecretFile;
  } catch {
    // Not JSON.parse's message: it quotes the text, which is the secret.
    throw new Error(`secret file ${file} is not valid JSON`);
  }
  if (!body || typeof body !== 'object' || (!body.encrypted && !body.data) || (body.encrypted && typeof body.encrypted !== 'object')) {
    throw new Error(`secret file ${file} does not hold a secret`);
  }
  return body;
}

async function readDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (err) {
    if (code(err) === 'ENOENT') return [];
    throw err;
  }
}

/** Makes a link/rename/unlink durable. Best effort: not every platform can open a directory. */
async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // ignore
  } finally {
    await handle?.close();
  }
}

const isData = (d: unknown): d is Record<string, string> =>
  !!d && typeof d === 'object' && !Array.isArray(d) && Object.values(d).every((v) => typeof v === 'string');

const urlsOf = (b: SecretFile): string[] => (Array.isArray(b.allowedUrls) ? b.allowedUrls.filter((u) => typeof u === 'string') : []);

const metaOf = (namespace: string, name: string, b: Plain): SecretMeta => ({
  name,
  namespace,
  keys: Object.keys(b.data).sort(),
  allowedUrls: [...b.allowedUrls],
  createdAt: b.createdAt,
});

/** Names, keys and binding from the readable part of a file (no key needed); undefined if unusable. */
function headerMeta(namespace: string, name: string, b: SecretFile): SecretMeta | undefined {
  const keys = b.encrypted ? b.keys : isData(b.data) ? Object.keys(b.data) : undefined;
  if (!Array.isArray(keys)) return undefined;
  return { name, namespace, keys: keys.filter((k) => typeof k === 'string').sort(), allowedUrls: urlsOf(b), createdAt: b.createdAt };
}

/** What the tag covers besides the values: where the secret lives and what reads show of it. */
const aad = (namespace: string, name: string, createdAt: string, keys: string[], allowedUrls: string[]): Buffer =>
  Buffer.from(JSON.stringify(['agentplane.io/secret/v1', namespace, name, createdAt, keys, allowedUrls]), 'utf8');

/** Tells keys apart without revealing them: an HMAC of a constant, shortened. */
const keyIdOf = (key: Buffer): string => createHmac('sha256', key).update('agentplane secrets key id').digest('base64url').slice(0, 16);

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;
