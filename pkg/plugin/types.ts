// The plugin contract. A plugin is `{ name, setup(ctx) }`; setup registers what it provides
// through ctx and may return a teardown. Core code never imports a plugin: it reaches plugin
// functionality only through the slots and hooks on ctx.

import type { Logger } from '../observability/logger.js';
import type { EventStore } from '../registry/events.js';

export interface PluginConfig {
  /** The service's data directory (embedded home). */
  dataDir: string;
  /** Plugin-specific options from the config file, keyed by plugin name. */
  options: Record<string, unknown>;
}

export interface PluginContext {
  config: PluginConfig;
  logger: Logger;
  /** Registers the event store; exactly one plugin must provide it. */
  provideEventStore(store: EventStore): void;
}

export type Teardown = () => Promise<void> | void;

export interface Plugin {
  name: string;
  setup(ctx: PluginContext): Promise<Teardown | void> | Teardown | void;
}
