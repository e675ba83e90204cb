// The credential-mirror plugin (cluster home): the model credential, one Secret in the install
// namespace, mirrored into every namespace that has agents. Options
// (`options['credential-mirror']` in the config file): `secretName` (default agentplane-model).

import type { Plugin, PluginContext } from '../../pkg/plugin/types.js';
import { CredentialMirror, DEFAULT_SECRET_NAME } from './credential-mirror.js';

export const PLUGIN_NAME = 'credential-mirror';
/** A Secret's name: a DNS-1123 subdomain. */
const SECRET_NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KNOWN_OPTIONS = ['secretName'];

export interface CredentialMirrorPluginOptions {
  secretName: string;
}

/** The plugin's options from the config, checked; throws a message saying what to fix. */
export function credentialMirrorOptions(ctx: PluginContext): CredentialMirrorPluginOptions {
  const raw = ctx.config.options[PLUGIN_NAME];
  if (raw === undefined || raw === null) return { secretName: DEFAULT_SECRET_NAME };
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`options["${PLUGIN_NAME}"] must be an object like {"secretName": "${DEFAULT_SECRET_NAME}"}`);
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !KNOWN_OPTIONS.includes(k));
  if (unknown.length) throw new Error(`unknown option(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}; known: ${KNOWN_OPTIONS.join(', ')}`);
  const name = o.secretName ?? DEFAULT_SECRET_NAME;
  if (typeof name !== 'string' || name.length > 253 || !SECRET_NAME_RE.test(name)) {
    throw new Error(`option secretName must be a Secret name (lowercase letters, digits, '-' and '.', at most 253 characters), got ${JSON.stringify(name)}`);
  }
  return { secretName: name };
}

const plugin: Plugin = {
  name: PLUGIN_NAME,
  setup(ctx) {
    if (!ctx.cluster) {
      throw new Error(
        'needs the cluster home (agentplane serve --mode kubernetes): it mirrors a Kubernetes Secret from the install namespace; ' +
          `remove "${PLUGIN_NAME}" from --plugins in the embedded home, where the server's environment holds the model credential`,
      );
    }
    const opts = credentialMirrorOptions(ctx);
    const log = ctx.logger.child({ plugin: PLUGIN_NAME });
    const mirror = new CredentialMirror(ctx, ctx.cluster, opts, log);
    ctx.onStart(() => mirror.start());
    return () => mirror.stop();
  },
};

export default plugin;
