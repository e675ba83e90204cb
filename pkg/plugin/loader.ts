// Loads plugins at boot, in the configured order. Built-in plugins are named in a table the
// caller passes (plugins/builtin.ts); a third-party plugin loads by module path or package name.
// Any failure stops start-up with a clear error, and so does a configuration that leaves out a
// plugin the core needs (CORE_NEEDS).

import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin, PluginContext, Teardown } from './types.js';

/** Built-in plugins by name, each a lazy import of its module. */
export type BuiltinPlugins = Record<string, () => Promise<Record<string, unknown>>>;

export const DEFAULT_PLUGINS = ['event-store-sqlite', 'sleep-wake'];
/** The cluster home's defaults: the model credential is mirrored into agents' namespaces too. */
export const DEFAULT_CLUSTER_PLUGINS = [...DEFAULT_PLUGINS, 'credential-mirror'];

/** Something the core reads but a plugin provides, and why the core needs it. */
export interface Need {
  /** Matched against `Plugin.provides`. */
  capability: string;
  why: string;
  /** The built-in plugin that provides it, for the error message. */
  builtin: string;
}

/**
 * What the service reads that only a plugin writes: an agent's Sleeping phase (pkg/api/agent.ts,
 * agentPhase) and squad admission (a member added by ref must be asleep:
 * pkg/registry/admission/squad-membership.ts) read the Asleep condition, which sleep-wake owns.
 * Without its writer no agent could sleep and no squad could take a member, so the loader refuses
 * the configuration rather than serve that (docs/decisions.md "Core needs from plugins").
 */
export const CORE_NEEDS: readonly Need[] = [
  {
    capability: 'condition/Asleep',
    why: 'the Sleeping phase and squad membership read the Asleep condition',
    builtin: 'sleep-wake',
  },
];

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

/** The first need no plugin of `plugins` provides, as an error; undefined when all are met. */
function unmet(plugins: Plugin[], needs: readonly Need[]): Error | undefined {
  const provided = new Set(plugins.flatMap((p) => p.provides ?? []));
  const missing = needs.filter((n) => !provided.has(n.capability));
  if (!missing.length) return undefined;
  const list = missing.map((n) => `"${n.capability}" (${n.why}; built in: "${n.builtin}")`).join(', ');
  return new Error(`no plugin provides ${list}; add ${missing.map((n) => `"${n.builtin}"`).join(', ')} to --plugins`);
}

/**
 * Imports and sets up each plugin in order; refuses (rolling back what was set up) when one fails
 * or when together they do not provide what `needs` lists.
 */
export async function loadPlugins(names: string[], ctx: PluginContext, builtins: BuiltinPlugins = {}, needs: readonly Need[] = []): Promise<LoadedPlugins> {
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
  const plugins: Plugin[] = [];
  try {
    for (const name of names) {
      const plugin = await importPlugin(name, builtins);
      plugins.push(plugin);
      try {
        const td = await plugin.setup(ctx);
        if (td) teardowns.push(td);
      } catch (err) {
        throw new PluginError(name, `setup failed: ${(err as Error).message}`);
      }
      loaded.push(plugin.name);
      ctx.logger.info({ plugin: plugin.name }, 'plugin loaded');
    }
    const refused = unmet(plugins, needs);
    if (refused) throw refused;
  } catch (err) {
    // Roll back what was set up; the start-up error is the one to report.
    await teardown().catch((tdErr: unknown) => ctx.logger.error({ err: String(tdErr) }, 'plugin rollback failed'));
    throw err;
  }
  return { names: loaded, teardown };
}
