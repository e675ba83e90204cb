// Storage that cannot take a write (a full disk, a read-only data directory, an I/O error) is a
// condition of the server, not a mistake of the client: 503 ServiceUnavailable, as kube-apiserver
// answers when its storage is unavailable, with a cause naming what is wrong
// (docs/reliability.md "Full disk, read-only data directory"). Recognised by the codes SQLite
// (better-sqlite3's SqliteError.code) and Node's fs give, so every store maps alike.

import { ApiError } from './errors.js';

export type StorageFault = 'StorageFull' | 'StorageReadOnly' | 'StorageIOError';

const WHAT: Record<StorageFault, [string, string]> = {
  StorageFull: ['the disk holding the server’s data is full', 'retry once space is freed'],
  StorageReadOnly: ['the server’s data directory is read-only', 'retry once it is writable again'],
  StorageIOError: ['the disk holding the server’s data reported an I/O error', 'retry later; the server’s log has the details'],
};

/** The fault an error of SQLite or the file system stands for, if it is one. */
export function storageFault(err: unknown): StorageFault | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return 'StorageFull';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'StorageReadOnly';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'StorageIOError';
  return undefined;
}

/** A storage fault as the API answers it: 503 with the fault as the cause's reason. */
export function storageUnavailable(fault: StorageFault, code: string): ApiError {
  return new ApiError('ServiceUnavailable', 503, `storage unavailable: ${WHAT[fault][0]} (${code}); ${WHAT[fault][1]}`, {
    causes: [{ field: '', reason: fault, message: code }],
  });
}

/** `err` as an ApiError when it is a storage fault; undefined otherwise. */
export function asStorageError(err: unknown): ApiError | undefined {
  const fault = storageFault(err);
  return fault ? storageUnavailable(fault, String((err as { code: string }).code)) : undefined;
}

/** True for an error that means the storage cannot take writes now (raw or already mapped). */
export function isStorageUnavailable(err: unknown): boolean {
  if (err instanceof ApiError) return err.reason === 'ServiceUnavailable' && !!err.details.causes?.some((c) => c.reason?.startsWith('Storage'));
  return storageFault(err) !== undefined;
}
