// A SQLite database holds state only the server's user may read. It is created 0600 (SQLite
// gives its -wal and -shm files the database file's mode), and one that exists, with its -wal,
// -shm and -journal, is made 0600 when opened: also one an older version left 0644. Here, in
// the plugin contract, so that the server's state store and a plugin's event store share it.

import { chmodSync, closeSync, openSync } from 'node:fs';

export function makeDatabasePrivate(path: string): void {
  if (path === '' || path === ':memory:' || path.startsWith('file:')) return;
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    try {
      chmodSync(file, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}
