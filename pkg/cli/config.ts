// The client's configuration: named contexts (server, namespace, token) in a YAML file, and how
// a command's target is resolved: flag, then environment variable, then the current context,
// then the default. The file holds tokens, so it is written with mode 0600.

import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { CliError, EXIT } from './exit-codes.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
export const DEFAULT_NAMESPACE = 'default';

export interface Context {
  name: string;
  server?: string;
  namespace?: string;
  token?: string;
}

export interface ClientConfig {
  currentContext?: string;
  contexts: Context[];
}

/** Where the config lives: AGENTPLANE_CLIENT_CONFIG, else $XDG_CONFIG_HOME (or ~/.config)/agentplane/config.yaml. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTPLANE_CLIENT_CONFIG) return env.AGENTPLANE_CLIENT_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'agentplane', 'config.yaml');
}

const bad = (path: string, what: string): CliError =>
  new CliError(`config ${path}: ${what}`, 'fix the file, or recreate it with `agentplane config set-context <name> --server <url>`', EXIT.USAGE);

/** The config file; an empty config when there is none. */
export function loadConfig(path: string): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: [] };
    throw new CliError(`cannot read config ${path}: ${(err as Error).message}`, undefined, EXIT.USAGE);
  }
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (err) {
    throw bad(path, `not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || Array.isArray(doc) || doc === null) throw bad(path, 'must be a mapping with "currentContext" and "contexts"');
  const raw = doc as Record<string, unknown>;
  if (raw.currentContext !== undefined && typeof raw.currentContext !== 'string') throw bad(path, '"currentContext" must be a string');
  const contexts = raw.contexts ?? [];
  if (!Array.isArray(contexts)) throw bad(path, '"contexts" must be a list');
  for (const [i, c] of contexts.entries()) {
    if (typeof c !== 'object' || c === null || typeof (c as Context).name !== 'string' || !(c as Context).name)
      throw bad(path, `contexts[${i}] needs a "name"`);
    for (const k of ['server', 'namespace', 'token'] as const) {
      const v = (c as Context)[k];
      if (v !== undefined && typeof v !== 'string') throw bad(path, `contexts[${i}].${k} must be a string`);
    }
  }
  return { ...(raw.currentContext ? { currentContext: raw.currentContext } : {}), contexts: contexts as Context[] };
}

/** Writes the config (atomically, owner-only: it holds tokens). */
export function saveConfig(path: string, cfg: ClientConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, stringify(cfg), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export interface TargetFlags {
  server?: string;
  namespace?: string;
  token?: string;
  context?: string;
}

/** Where a command goes and as whom. */
export interface Target {
  server: string;
  namespace: string;
  token?: string;
  /** The context used, if any. */
  context?: string;
}

/** Resolves server, namespace and token: flag, environment, current context, default. */
export function resolveTarget(flags: TargetFlags, env: NodeJS.ProcessEnv, cfg: ClientConfig, path: string): Target {
  const named = flags.context ?? (env.AGENTPLANE_CONTEXT || undefined) ?? cfg.currentContext;
  let ctx: Context | undefined;
  if (named !== undefined) {
    ctx = cfg.contexts.find((c) => c.name === named);
    if (!ctx) {
      const known = cfg.contexts.map((c) => c.name);
      throw new CliError(
        `context "${named}" not found in ${path}`,
        known.length
          ? `known contexts: ${known.join(', ')} (agentplane config get-contexts)`
          : 'create it with `agentplane config set-context <name> --server <url>`',
        EXIT.USAGE,
      );
    }
  }
  const server = normalizeServer(flags.server ?? (env.AGENTPLANE_SERVER || undefined) ?? ctx?.server ?? DEFAULT_SERVER);
  const namespace = flags.namespace ?? (env.AGENTPLANE_NAMESPACE || undefined) ?? ctx?.namespace ?? DEFAULT_NAMESPACE;
  const token = flags.token ?? (env.AGENTPLANE_TOKEN || undefined) ?? ctx?.token;
  return { server, namespace, ...(token ? { token } : {}), ...(ctx ? { context: ctx.name } : {}) };
}

/** `host:port` gets http://; a trailing slash goes. */
export function normalizeServer(raw: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new CliError(`server "${raw}" is not a URL`, 'give it as http://host:port or https://host:port', EXIT.USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`server "${raw}" must be http:// or https://`, undefined, EXIT.USAGE);
  return withScheme.replace(/\/+$/, '');
}
