// Storage faults as the API answers them (docs/reliability.md "Full disk, read-only data
// directory"): the errors real SQLite and fs calls raise map to 503 ServiceUnavailable with the
// fault as the cause; anything else is left alone.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { toStatus } from '../../pkg/api/errors.js';
import { asStorageError, isStorageUnavailable, storageFault } from '../../pkg/api/storage-errors.js';
import { toApiError } from '../../pkg/server/app.js';

/** The error `fn` throws. */
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
};

describe('storage errors', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-storage-'));
    file = join(dir, 'x.db');
    const db = new Database(file);
    db.exec('CREATE TABLE t (v TEXT)');
    db.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('SQLITE_FULL (a database that may not grow) is StorageFull: 503 with the cause', () => {
    const db = new Database(file);
    try {
      const pages = (db.pragma('page_count', { simple: true }) as number) + 1;
      db.pragma(`max_page_count = ${pages}`);
      const err = thrown(() => db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000)));
      expect((err as { code: string }).code).to.equal('SQLITE_FULL');
      const api = asStorageError(err)!;
      expect(api).to.include({ reason: 'ServiceUnavailable', code: 503 });
      expect(api.message).to.equal('storage unavailable: the disk holding the server’s data is full (SQLITE_FULL); retry once space is freed');
      expect(api.details.causes).to.deep.equal([{ field: '', reason: 'StorageFull', message: 'SQLITE_FULL' }]);
      expect(toStatus(api)).to.deep.include({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
      expect(isStorageUnavailable(api)).to.equal(true);
    } finally {
      db.close();
    }
  });

  it('SQLITE_READONLY is StorageReadOnly', () => {
    const db = new Database(file, { readonly: true });
    try {
      const err = thrown(() => db.prepare('INSERT INTO t VALUES (?)').run('x'));
      expect((err as { code: string }).code).to.equal('SQLITE_READONLY');
      expect(storageFault(err)).to.equal('StorageReadOnly');
      expect(asStorageError(err)!.message).to.contain('the server’s data directory is read-only (SQLITE_READONLY); retry once it is writable again');
    } finally {
      db.close();
    }
  });

  it('SQLite I/O errors and the file system’s ENOSPC, EDQUOT, EROFS and EIO are faults too', () => {
    const e = (code: string): Error => Object.assign(new Error(code), { code });
    expect(storageFault(e('SQLITE_IOERR_WRITE'))).to.equal('StorageIOError');
    expect(storageFault(e('SQLITE_IOERR'))).to.equal('StorageIOError');
    expect(storageFault(e('SQLITE_READONLY_DBMOVED'))).to.equal('StorageReadOnly');
    expect(storageFault(e('ENOSPC'))).to.equal('StorageFull');
    expect(storageFault(e('EDQUOT'))).to.equal('StorageFull');
    expect(storageFault(e('EROFS'))).to.equal('StorageReadOnly');
    expect(storageFault(e('EIO'))).to.equal('StorageIOError');
  });

  it('leaves other errors alone: a constraint, a missing file, a plain Error', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE u (k TEXT PRIMARY KEY)');
      db.prepare('INSERT INTO u VALUES (?)').run('a');
      const err = thrown(() => db.prepare('INSERT INTO u VALUES (?)').run('a'));
      expect(storageFault(err)).to.equal(undefined);
    } finally {
      db.close();
    }
    expect(storageFault(Object.assign(new Error('x'), { code: 'ENOENT' }))).to.equal(undefined);
    expect(storageFault(new Error('x'))).to.equal(undefined);
    expect(storageFault(undefined)).to.equal(undefined);
    expect(isStorageUnavailable(new Error('x'))).to.equal(false);
  });

  it('the server renders a raw storage fault as 503, never as a bare 500', () => {
    const api = toApiError(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
    expect(api).to.include({ reason: 'ServiceUnavailable', code: 503 });
    expect(toApiError(new Error('boom') as never)).to.include({ reason: 'InternalError', code: 500 });
  });
});
