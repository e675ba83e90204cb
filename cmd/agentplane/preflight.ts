// Checks made before anything starts or opens: an open API reachable from elsewhere, OIDC without
// grants, a bad audit policy and an unwritable data directory each stop start-up with the fix.

import { accessSync, chmodSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { storageFault } from '../../pkg/api/storage-errors.js';
import type { Logger } from '../../pkg/observability/logger.js';
import { type AuditPolicy, levelPolicy, loadAuditPolicy } from '../../pkg/server/audit/index.js';
import { isLoopbackHost } from '../../pkg/server/auth/token-file.js';
import type { ServeOptions } from './options.js';

export interface Preflight {
  dataDir: string;
  auditPolicy: AuditPolicy;
}

export function preflight(o: ServeOptions, logger: Logger): Preflight {
  // An open API must not be reachable from elsewhere.
  if (!o.kubernetes && !o.tokenFile && !isLoopbackHost(o.host)) throw new Error(openBindRefusal(o.host));
  if (o.oidc && !o.tokenFile) throw new Error('OIDC needs a token file: its "grants" say what OIDC users and groups may do (docs/auth.md "OIDC")');
  const auditDefault = o.audit?.level ?? 'Metadata';
  const auditPolicy = o.audit?.policyFile ? loadAuditPolicy(o.audit.policyFile, auditDefault) : levelPolicy(o.audit ? auditDefault : 'None');
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  checkWritable(dataDir);
  // Only the server's user may read its state, also in a directory an older version made 0755.
  try {
    chmodSync(dataDir, 0o700);
  } catch (err) {
    logger.warn({ dataDir, err: (err as Error).message }, 'cannot make the data directory private (mode 0700); other users of this host may read it');
  }
  return { dataDir, auditPolicy };
}

/** Why an embedded server without a token file will not bind `host`, and what to do. */
export function openBindRefusal(host: string): string {
  return (
    `refusing to listen on ${host} without authentication: only a loopback address (127.0.0.1, ::1, localhost) may be served without it. ` +
    'Give a token file with --token-file <file> (environment AGENTPLANE_TOKEN_FILE, config key "tokenFile"; format in docs/auth.md), ' +
    'or bind to 127.0.0.1'
  );
}

/** A data dir the server cannot write would fail its first write: say so at start instead. */
function checkWritable(dataDir: string): void {
  try {
    accessSync(dataDir, fsConstants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const fix =
      storageFault(err) === 'StorageReadOnly' ? 'its file system is mounted read-only; remount it read-write' : 'give the server’s user write access to it';
    throw new Error(`the data directory ${dataDir} is not writable (${code}): ${fix}`, { cause: err });
  }
}
