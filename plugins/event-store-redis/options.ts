// The plugin's settings: options["event-store-redis"] in the config file, each overridden by an
// AGENTPLANE_REDIS_* environment variable (as flags and variables override the config file
// elsewhere). Secrets come from files or the environment, so a Kubernetes Secret can supply them
// as a mounted file or an env var: the config file holds only file names. docs/event-stores.md.

import fs from 'node:fs';

import type { RedisConnection } from './redis-event-store.js';

export interface RedisSettings {
  connection: RedisConnection;
  keyPrefix: string;
}

/** Config keys and the variables that override them. */
const SETTINGS = {
  url: 'AGENTPLANE_REDIS_URL',
  username: 'AGENTPLANE_REDIS_USERNAME',
  passwordFile: 'AGENTPLANE_REDIS_PASSWORD_FILE',
  caFile: 'AGENTPLANE_REDIS_CA_FILE',
  certFile: 'AGENTPLANE_REDIS_CERT_FILE',
  keyFile: 'AGENTPLANE_REDIS_KEY_FILE',
  keyPrefix: 'AGENTPLANE_REDIS_KEY_PREFIX',
} as const;

/** The password itself, for an env var filled from a Secret (secretKeyRef). */
const PASSWORD_ENV = 'AGENTPLANE_REDIS_PASSWORD';

export function resolveRedisSettings(options: unknown, env: NodeJS.ProcessEnv = process.env): RedisSettings {
  const cfg = options && typeof options === 'object' ? (options as Record<string, unknown>) : {};
  const known = new Set<string>(Object.keys(SETTINGS));
  const unknown = Object.keys(cfg).filter((k) => !known.has(k));
  if (unknown.length) {
    const hint = unknown.includes('password') ? ' (a password goes in a file, "passwordFile", or the AGENTPLANE_REDIS_PASSWORD variable)' : '';
    throw new Error(`unknown option(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}; known: ${[...known].join(', ')}${hint}`);
  }
  const get = (key: keyof typeof SETTINGS): string | undefined => {
    const fromEnv = env[SETTINGS[key]];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    const v = cfg[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw new Error(`option "${key}" must be a non-empty string`);
    return v;
  };

  const url = get('url');
  if (!url) throw new Error(`needs the Redis URL: option "url" or ${SETTINGS.url} (redis://host:6379, rediss://... for TLS)`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`url ${JSON.stringify(redactUrl(url))} is not a URL (redis://host:6379, rediss://... for TLS)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new Error(`url must start with redis:// or rediss:// (TLS), got ${parsed.protocol}//`);

  const connection: RedisConnection = { url };
  const username = get('username');
  if (username !== undefined) connection.username = username;
  const passwordFile = get('passwordFile');
  if (passwordFile !== undefined) {
    readFile(passwordFile, 'passwordFile'); // readable now, or start-up stops; read again at each connection
    connection.passwordFile = passwordFile;
  } else if (env[PASSWORD_ENV]) {
    connection.password = env[PASSWORD_ENV];
  }
  const caFile = get('caFile');
  if (caFile !== undefined) connection.ca = readFile(caFile, 'caFile');
  const certFile = get('certFile');
  const keyFile = get('keyFile');
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new Error('certFile and keyFile (a TLS client certificate) go together: give both or neither');
  if (certFile !== undefined && keyFile !== undefined) {
    connection.cert = readFile(certFile, 'certFile');
    connection.key = readFile(keyFile, 'keyFile');
  }
  return { connection, keyPrefix: get('keyPrefix') ?? 'agentplane' };
}

/** The URL without its password, for logs and errors. */
export function redactUrl(url: string): string {
  return url.replace(/^(rediss?:\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}

function readFile(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
}
