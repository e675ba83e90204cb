// The built-in plugins, by name: each loads on demand. `cmd` hands this table to the plugin
// loader, so pkg/ never names a plugin and a third-party plugin loads the same way by path.

import type { Plugin } from '../pkg/plugin/types.js';

export const BUILTIN_PLUGINS: Record<string, () => Promise<{ default: Plugin }>> = {
  'event-store-sqlite': () => import('./event-store-sqlite/index.js'),
  'event-store-redis': () => import('./event-store-redis/index.js'),
  'sleep-wake': () => import('./sleep-wake/index.js'),
  'credential-mirror': () => import('./credential-mirror/index.js'),
};
