// Loads plugins at boot, in the configured order. Built-in plugins are named in a table the
// caller passes (plugins/builtin.ts); a third-party plugin loads by module path or package name.
// Any failure stops start-up with a clear error.

import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin, PluginContext, Teardown } from './types.js';

/** Built-in plugins by name, each a lazy import of its module. */
export type BuiltinPlugins = Record<string, () => Promise<Record<string, unknown>>>;

export const DEFAULT_PLUGINS = ['event-store-sqlite', 'sleep-wake'];
/** The cluster home's defaults: the model credential is mirrored into agents' namespaces too. */
export const DEFAULT_CLUSTER_PLUGINS = [...DEFAULT_PLUGINS, 'credential-mirror'];

export class PluginError extends Error {
  constructor(
    readonly plugin: string,
    message: string,
  ) {
    super(`plugin "${plugin}": ${message}`);
    this.name = 'PluginError';
  }
}

function specifierFor(name: string): string {
  if (name.startsWith('.') || isAbsolute(name)) return pathToFileURL(resolve(name)).href;
  return name; // a package name
}

async function importPlugin(name: string, builtins: BuiltinPlugins): Promise<Plugin> {
  let mod: Record<string, unknown>;
  try {
    const builtin = builtins[name];
    mod = builtin ? await builtin() : ((await import(specifierFor(name))) as Record<string, unknown>);
  } catch (err) {
    const known = Object.keys(builtins).join(', ');
    throw new PluginError(name, `cannot be loaded (${(err as Error).message}); built-in plugins are: ${known}`);
  }
  const plugin = (mod.default ?? mod.plugin) as Partial<Plugin> | undefined;
  if (!plugin || typeof plugin.name !== 'string' || typeof plugin.setup !== 'function') {
    throw new PluginError(name, 'the module must export { name: string, setup(ctx) } as its default export');
  }
  return plugin as Plugin;
}

export interface LoadedPlugins {
  names: string[];
  teardown(): Promise<void>;
}

export async function loadPlugins(names: string[], ctx: PluginContext, builtins: BuiltinPlugins = {}): Promise<LoadedPlugins> {
  const teardowns: Teardown[] = [];
  const loaded: string[] = [];
  // Runs each teardown once, in reverse order of setup; a failing one does not stop the rest.
  const teardown = async (): Promise<void> => {
    const errors: unknown[] = [];
    for (const fn of teardowns.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw new AggregateError(errors, 'plugin teardown failed');
  };
  try {
    for (const name of names) {
      const plugin = await importPlugin(name, builtins);
      try {
        const td = await plugin.setup(ctx);
        if (td) teardowns.push(td);
      } catch (err) {
        throw new PluginError(name, `setup failed: ${(err as Error).message}`);
      }
      loaded.push(plugin.name);
      ctx.logger.info({ plugin: plugin.name }, 'plugin loaded');
    }
  } catch (err) {
    // Roll back what was set up; the start-up error is the one to report.
    await teardown().catch((tdErr: unknown) => ctx.logger.error({ err: String(tdErr) }, 'plugin rollback failed'));
    throw err;
  }
  return { names: loaded, teardown };
}
