// The home, opened with the key of the stored secrets: closed last (added to the manager first),
// after everything that reads or writes state.

import { join, resolve } from 'node:path';
import { loadSecretsKey } from '../../pkg/registry/secrets/secrets-key.js';
import { embeddedHome, type Home, kubernetesHome } from './homes.js';
import type { Wiring } from './wiring.js';

export async function openHome({ o, dataDir, logger, manager }: Wiring): Promise<Home> {
  const embedded = {
    ...(o.tokenFile ? { tokenFile: o.tokenFile } : {}),
    ...(o.oidc ? { oidc: o.oidc } : {}),
    ...(o.metricsAuth !== undefined ? { metricsAuth: o.metricsAuth } : {}),
    ...(o.tokenFileReloadMs !== undefined ? { tokenFileReloadMs: o.tokenFileReloadMs } : {}),
  };
  // The key of the stored secrets: a missing (named), exposed or wrong-sized key file stops start-up.
  const secretsKey = o.secretsKeyFile ? loadSecretsKey(resolve(o.secretsKeyFile)) : loadSecretsKey(join(dataDir, 'secrets.key'), { createIfAbsent: true });
  const home = o.kubernetes ? await kubernetesHome(o.kubernetes, dataDir, secretsKey, logger) : await embeddedHome(dataDir, secretsKey, embedded, logger);
  manager.onStop('home', () => home.close());
  return home;
}
