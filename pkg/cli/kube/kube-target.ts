// Whether a command goes through kube-apiserver, and where: the kubeconfig (--kubeconfig, else
// KUBECONFIG, else ~/.kube/config, as kubectl reads it), its current context or --context, that
// context's namespace unless -n says otherwise, and --server/--token over the context's, as kubectl
// takes them. @kubernetes/client-node is loaded only here, so the embedded CLI starts as fast as before.

import { basename } from 'node:path';
import { CliError, EXIT } from '../exit-codes.js';
import { DEFAULT_NAMESPACE } from '../config.js';
import { KubeTransport } from './kube-transport.js';

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  server?: string;
  token?: string;
}

/** The launcher bin/kubectl-agentplane sets this; a `kubectl-agentplane` on PATH that is Node itself shows in argv[1]. */
export const PLUGIN_ENV = 'AGENTPLANE_KUBECTL_PLUGIN';

/** Run as the kubectl plugin (kubectl found `kubectl-agentplane` on PATH), or asked to use a kubeconfig. */
export function throughKube(flags: KubeFlags, env: NodeJS.ProcessEnv = process.env, argv1 = process.argv[1] ?? ''): boolean {
  return isPlugin(env, argv1) || flags.kubeconfig !== undefined;
}

export const isPlugin = (env: NodeJS.ProcessEnv = process.env, argv1 = process.argv[1] ?? ''): boolean =>
  env[PLUGIN_ENV] === '1' || basename(argv1) === 'kubectl-agentplane';

async function loadKubeconfig(flags: KubeFlags) {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  try {
    if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new CliError(`cannot read the kubeconfig: ${(err as Error).message}`, 'check --kubeconfig or KUBECONFIG', EXIT.USAGE);
  }
  return kc;
}

/** Whether the kubeconfig names this context (for `agentplane --context` naming a kube context). */
export async function kubeHasContext(flags: KubeFlags, name: string): Promise<boolean> {
  try {
    return (await loadKubeconfig(flags)).getContextObject(name) !== null;
  } catch {
    return false;
  }
}

/** The transport for a command run through kube-apiserver. */
export async function kubeTransport(flags: KubeFlags, command: string): Promise<KubeTransport> {
  const kc = await loadKubeconfig(flags);
  if (flags.context !== undefined) {
    if (!kc.getContextObject(flags.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new CliError(
        `context "${flags.context}" not found in the kubeconfig`,
        known.length ? `known contexts: ${known.join(', ')}` : undefined,
        EXIT.USAGE,
      );
    }
    kc.setCurrentContext(flags.context);
  }
  const context = kc.getContextObject(kc.getCurrentContext());
  const cluster = kc.getCurrentCluster();
  if (!context || !cluster) {
    throw new CliError(
      'the kubeconfig has no current context with a cluster',
      'pick one with `kubectl config use-context <name>` or --context, or point at a kubeconfig with --kubeconfig or KUBECONFIG',
      EXIT.USAGE,
    );
  }
  // --server and --token replace the context's, as kubectl's flags do.
  if (flags.server) kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: flags.server! } : c));
  if (flags.token) kc.users = kc.users.map((u) => (u.name === context.user ? { name: u.name, token: flags.token } : u));
  const server = (flags.server ?? cluster.server).replace(/\/+$/, '');
  const namespace = flags.namespace ?? context.namespace ?? DEFAULT_NAMESPACE;
  return new KubeTransport({ server, namespace, context: context.name }, kc, command);
}
