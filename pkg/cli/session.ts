// What every client command starts from: the resolved target, a transport to it, and how to
// write. The transport is an agentplane server's own API (client.ts), or, run as `kubectl
// agentplane` or with --kubeconfig, kube-apiserver through the kubeconfig (kube/).

import type { Command } from 'commander';
import { Client } from './client.js';
import { configPath, loadConfig, resolveTarget, type Target } from './config.js';
import { CliError, EXIT } from './exit-codes.js';
import { kubeHasContext, kubeTransport, throughKube } from './kube/kube-target.js';
import { styleFor, type Style } from './style.js';
import type { Transport } from './transport.js';

export interface Session {
  target: Target;
  client: Transport;
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
  kubeconfig?: string;
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

export async function sessionOf(cmd: Command): Promise<Session> {
  const opts = cmd.optsWithGlobals<CliOptions>();
  const client = await transportFor(opts, commandName(cmd));
  return {
    target: client.target,
    client,
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

/** "squad ls" for the squad group's ls: what "not available through kubectl yet" names. */
function commandName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** kube-apiserver when run as the plugin or with --kubeconfig (or a --context only the kubeconfig knows), else the agentplane server. */
async function transportFor(opts: CliOptions, command: string): Promise<Transport> {
  const flags = { server: opts.server, namespace: opts.namespace, token: opts.token, context: opts.context };
  if (throughKube({ ...flags, kubeconfig: opts.kubeconfig })) return kubeTransport({ ...flags, kubeconfig: opts.kubeconfig }, command);
  const path = configPath();
  let target: Target;
  try {
    target = resolveTarget(flags, process.env, loadConfig(path), path);
  } catch (err) {
    if (opts.context !== undefined && (await kubeHasContext({}, opts.context))) return kubeTransport(flags, command);
    throw err;
  }
  return new Client(target);
}
