// What every client command starts from: the resolved target, a client for it, and how to write.

import type { Command } from 'commander';
import { Client } from './client.js';
import { configPath, loadConfig, resolveTarget, type Target } from './config.js';
import { CliError, EXIT } from './exit-codes.js';
import { styleFor, type Style } from './style.js';

export interface Session {
  target: Target;
  client: Client;
  /** Style of stdout (colours, spinners). */
  style: Style;
  out: (text: string) => void;
  err: (text: string) => void;
  /** The command's own options merged with the global ones. */
  opts: CliOptions;
}

/** The flags commands read from `s.opts` (commander's camelCase); others are read with a local type. */
export interface CliOptions {
  server?: string;
  namespace?: string;
  token?: string;
  context?: string;
  output?: string;
  allNamespaces?: boolean;
  events?: string;
  force?: boolean;
  fromFile?: string[];
  allowedUrl?: string[];
  orphanTtl?: string;
  [flag: string]: unknown;
}

/** How a command's action is wrapped: a Session from its flags, then its positional arguments. */
export type Runner = (fn: (s: Session, ...args: never[]) => Promise<void>) => (...args: unknown[]) => Promise<void>;

export function sessionOf(cmd: Command): Session {
  const opts = cmd.optsWithGlobals<CliOptions>();
  const path = configPath();
  const target = resolveTarget(
    { server: opts.server, namespace: opts.namespace, token: opts.token, context: opts.context },
    process.env,
    loadConfig(path),
    path,
  );
  return {
    target,
    client: new Client(target),
    style: styleFor(process.stdout),
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    opts,
  };
}

/** Names given on the command line are DNS labels; say so before the server does, without a round trip. */
export function checkName(kind: string, name: string): string {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) {
    throw new CliError(
      `${kind} name "${name}" is not valid`,
      'names are lowercase letters, digits and hyphens, at most 63 characters, starting and ending with a letter or digit',
      EXIT.USAGE,
    );
  }
  return name;
}

/** `-A` lists every namespace (no namespace parameter); otherwise the target's. */
export const listNamespace = (s: Session): string | undefined => (s.opts.allNamespaces ? undefined : s.target.namespace);
