// Secrets of the embedded home as files: <root>/<namespace>/<name>.json, directories 0700, files
// 0600. Every write goes to a temporary file first (fsynced), then link (create: fails if the
// name is taken, so two creators cannot both win) or rename (replace) puts it in place
// atomically: a reader sees the old secret or the new one, never half of one. Writes of one
// secret that read it first (replace, bind) run one at a time, so a binding is never lost.

import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { alreadyExists, invalid } from '../../api/errors.js';
import { NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, NAMESPACE_PATTERN, NAMESPACE_RULE } from '../../api/meta.js';
import { SECRET_KIND } from '../../api/secret.js';
import { type Secret, type SecretMeta, secretMeta, type SecretStore } from '../secrets.js';

const nameRe = new RegExp(NAME_PATTERN);
const nsRe = new RegExp(NAMESPACE_PATTERN);
const SUFFIX = '.json';
/** A file that exists but does not hold a readable secret. */
const CORRUPT = 'corrupt' as const;

interface SecretFile {
  name: string;
  namespace: string;
  createdAt: string;
  updatedAt: string;
  /** Absent in files written before bindings existed: unbound. */
  allowedUrls?: string[];
  data: Record<string, string>;
}

export class FileSecretStore implements SecretStore {
  /** Per-file tail of the writes that read the file first. */
  private readonly locks = new Map<string, Promise<unknown>>();

  /** `root` is the secrets directory, e.g. <dataDir>/secrets. */
  constructor(private readonly root: string) {}

  async put(namespace: string, name: string, data: Record<string, string>, allowedUrls: string[] = []): Promise<SecretMeta> {
    const file = this.file(namespace, name);
    const now = new Date().toISOString();
    const body: SecretFile = { name, namespace, createdAt: now, updatedAt: now, allowedUrls: [...allowedUrls], data: { ...data } };
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
    return secretMeta(toSecret(body));
  }

  async replace(
    namespace: string,
    name: string,
    data: Record<string, string>,
    allowedUrls?: string[],
  ): Promise<{ secret: SecretMeta; created: boolean }> {
    const file = this.file(namespace, name);
    return this.serialized(file, async () => {
      const old = await readSecretFile(file).catch(() => CORRUPT);
      const prev = old && old !== CORRUPT ? old : undefined;
      const now = new Date().toISOString();
      const body: SecretFile = {
        name,
        namespace,
        createdAt: prev?.createdAt ?? now,
        updatedAt: now,
        allowedUrls: [...(allowedUrls ?? prev?.allowedUrls ?? [])],
        data: { ...data },
      };
      await this.writeInPlace(namespace, name, file, body);
      return { secret: secretMeta(toSecret(body)), created: !old };
    });
  }

  async bindIfUnbound(namespace: string, name: string, prefix: string): Promise<SecretMeta | undefined> {
    const file = this.file(namespace, name);
    return this.serialized(file, async () => {
      const cur = await readSecretFile(file);
      if (!cur) return undefined;
      if (cur.allowedUrls?.length) return secretMeta(toSecret(cur));
      const body: SecretFile = { ...cur, allowedUrls: [prefix], updatedAt: new Date().toISOString() };
      await this.writeInPlace(namespace, name, file, body);
      return secretMeta(toSecret(body));
    });
  }

  /** Temporary file, then rename over the old one. */
  private async writeInPlace(namespace: string, name: string, file: string, body: SecretFile): Promise<void> {
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
    const body = await readSecretFile(this.file(namespace, name));
    return body && toSecret(body);
  }

  async list(namespace?: string): Promise<SecretMeta[]> {
    const namespaces = namespace !== undefined ? [this.checkNamespace(namespace)] : (await readDir(this.root)).filter((n) => nsRe.test(n)).sort();
    const out: SecretMeta[] = [];
    for (const ns of namespaces) {
      const files = (await readDir(join(this.root, ns))).filter((f) => f.endsWith(SUFFIX) && nameRe.test(f.slice(0, -SUFFIX.length))).sort();
      for (const f of files) {
        // An unreadable file is left out of the list (get names it; delete removes it).
        const body = await readSecretFile(join(this.root, ns, f)).catch(() => undefined);
        if (body) out.push(secretMeta(toSecret(body)));
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
    return body === CORRUPT ? { name, namespace, keys: [], allowedUrls: [], createdAt: new Date(0).toISOString() } : secretMeta(toSecret(body));
  }

  private dir(namespace: string): string {
    return join(this.root, this.checkNamespace(namespace));
  }

  /** The path of a secret; names are checked here too, so no input can point outside the root. */
  private file(namespace: string, name: string): string {
    if (!name || name.length > NAME_MAX_LENGTH || !nameRe.test(name)) {
      throw invalid(SECRET_KIND, undefined, [
        { field: 'name', message: `must be ${NAME_RULE}` },
      ]);
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
  private async writeTemp(namespace: string, name: string, body: SecretFile): Promise<string> {
    const dir = this.dir(namespace);
    await ensurePrivateDir(this.root);
    await ensurePrivateDir(dir);
    const tmp = join(dir, `.${name}.${randomUUID()}.tmp`);
    const handle = await fs.open(tmp, 'wx', 0o600);
    try {
      await handle.chmod(0o600); // whatever the umask did
      await handle.writeFile(JSON.stringify(body), 'utf8');
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
  if (!body || typeof body !== 'object' || !body.data || typeof body.data !== 'object') {
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

const toSecret = (b: SecretFile): Secret => ({
  name: b.name,
  namespace: b.namespace,
  keys: Object.keys(b.data).sort(),
  allowedUrls: Array.isArray(b.allowedUrls) ? b.allowedUrls.filter((u) => typeof u === 'string') : [],
  createdAt: b.createdAt,
  data: b.data,
});

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;
