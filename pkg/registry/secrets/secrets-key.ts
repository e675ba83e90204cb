// The key that encrypts stored secret values at rest (file-secret-store.ts): 32 random bytes in a
// key file, 0600. The default file (<dataDir>/secrets.key) is created on first start; a file the
// operator names must exist. A key file of the wrong size, or one that group or others may read
// or write, stops start-up: a key that others can read protects nothing.

import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';

/** AES-256: 32 bytes. */
export const SECRETS_KEY_BYTES = 32;

export interface LoadSecretsKeyOptions {
  /** Create the file with a fresh random key when it does not exist (the default file only). */
  createIfAbsent?: boolean;
}

/** Thrown with a message that says what is wrong with the key file and how to fix it. */
export class SecretsKeyError extends Error {}

/** Reads (or, with createIfAbsent, creates) the key file; throws SecretsKeyError when unusable. */
export function loadSecretsKey(path: string, o: LoadSecretsKeyOptions = {}): Buffer {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new SecretsKeyError(`cannot read the secrets key file ${path}: ${(err as Error).message}`);
    if (!o.createIfAbsent) {
      throw new SecretsKeyError(
        `the secrets key file ${path} does not exist; create one with ` +
          `"head -c ${SECRETS_KEY_BYTES} /dev/urandom > ${path} && chmod 600 ${path}", or leave --secrets-key-file unset to use <data-dir>/secrets.key`,
      );
    }
    createKeyFile(path);
    st = statSync(path);
  }
  if (!st.isFile()) throw new SecretsKeyError(`the secrets key file ${path} is not a regular file`);
  if ((st.mode & 0o077) !== 0) {
    throw new SecretsKeyError(
      `the secrets key file ${path} is accessible to group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); ` + `run "chmod 600 ${path}"`,
    );
  }
  const key = readFileSync(path);
  if (key.length !== SECRETS_KEY_BYTES) {
    throw new SecretsKeyError(
      `the secrets key file ${path} must hold exactly ${SECRETS_KEY_BYTES} bytes (a raw AES-256 key), it holds ${key.length}; ` +
        `create one with "head -c ${SECRETS_KEY_BYTES} /dev/urandom > ${path}"`,
    );
  }
  return key;
}

/** A fresh key, written 0600 (whatever the umask) to a file that must not exist yet. */
function createKeyFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw new SecretsKeyError(`cannot create the secrets key file ${path}: ${(err as Error).message}`);
  }
  try {
    fchmodSync(fd, 0o600); // whatever the umask did
    const key = randomBytes(SECRETS_KEY_BYTES);
    writeSync(fd, key);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
