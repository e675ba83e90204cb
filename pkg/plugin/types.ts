// The plugin contract. A plugin is `{ name, setup(ctx) }`; setup registers what it provides
// through ctx and may return a teardown. Core code never imports a plugin: it reaches plugin
// functionality only through the slots and hooks on ctx.

import type { Agent } from '../api/agent.js';
import type { Squad } from '../api/squad.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { EventStore } from '../registry/events.js';
import type { Registry } from '../registry/registry.js';
import type { Hooks } from './hooks.js';

export interface PluginConfig {
  /** The service's data directory (embedded home). */
  dataDir: string;
  /** Plugin-specific options from the config file, keyed by plugin name. */
  options: Record<string, unknown>;
}

/** Agent operations a plugin may perform; usable once the service runs (not during setup). */
export interface AgentOperations {
  cancel(namespace: string, name: string, reason: string): Promise<void>;
  delete(namespace: string, name: string): Promise<void>;
}

export interface PluginContext {
  config: PluginConfig;
  logger: Logger;
  metrics: Metrics;
  registry: { agents: Registry<Agent>; squads: Registry<Squad> };
  hooks: Hooks;
  operations: AgentOperations;
  /** Called once the service is serving; a plugin starts its controllers here. */
  onStart(fn: () => Promise<void> | void): void;
  /** Registers the event store; exactly one plugin must provide it. */
  provideEventStore(store: EventStore): void;
}

export type Teardown = () => Promise<void> | void;

export interface Plugin {
  name: string;
  setup(ctx: PluginContext): Promise<Teardown | void> | Teardown | void;
}
