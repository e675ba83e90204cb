// The serve config file (--config): JSON whose keys are the flags' config keys (serve-flags.ts),
// plus "pluginOptions" and the "oidc" object. Checked whole at start-up: a bad key stops it.

import { readFileSync } from 'node:fs';
import { configValue, FlagError } from './flag.js';
import { SERVE_FLAG_LIST } from './serve-flags.js';

/** Keys that are no flag's: the plugins' options, and the OIDC settings' object as a whole. */
const OTHER_KEYS: [string, (v: unknown) => string | undefined][] = [
  [
    'oidc',
    (v) =>
      typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'string')
        ? undefined
        : '"oidc" must be an object of strings (issuerUrl, clientId, usernameClaim, usernamePrefix, groupsClaim, groupsPrefix, caFile)',
  ],
];

/** Every config key, for --help: the flags' and the others. */
export function configKeys(): string[] {
  const keys = SERVE_FLAG_LIST.flatMap((f) => (f.config && !f.config.includes('.') ? [f.config] : []));
  return [...keys, 'pluginOptions', 'oidc'];
}

/** The config file at `path`, checked; {} without one. Throws FlagError naming the file and key. */
export function readConfig(path: string | undefined): Record<string, unknown> {
  if (!path) return {};
  let cfg: Record<string, unknown>;
  try {
    cfg = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new FlagError(`cannot read config ${path}: ${(err as Error).message}`);
  }
  for (const f of SERVE_FLAG_LIST) {
    const v = configValue(f, cfg);
    const problem = v !== undefined && f.checkConfig ? f.checkConfig(v) : undefined;
    if (problem) throw new FlagError(`config ${path}: ${problem}`);
  }
  for (const [key, check] of OTHER_KEYS) {
    const problem = cfg[key] !== undefined ? check(cfg[key]) : undefined;
    if (problem) throw new FlagError(`config ${path}: ${problem}`);
  }
  return cfg;
}
