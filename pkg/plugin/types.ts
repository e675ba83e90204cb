// The plugin contract. A plugin is `{ name, setup(ctx) }`; setup registers what it provides
// through ctx and may return a teardown. Plugins import nothing of the project but this folder
// and pkg/api (checked by `make lint`): everything else they use comes through `ctx`, and the
// types of what it hands them are re-exported here.

import type { KubeConfig } from '@kubernetes/client-node';
import type { Agent } from '../api/agent.js';
import type { ObjectRef } from '../api/meta.js';
import type { Squad } from '../api/squad.js';
import type { Controller, Result } from '../controller/framework/controller.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { AdmissionPlugin } from '../registry/admission/admission.js';
import type { Informer } from '../registry/cache/informer.js';
import type { EventStore } from '../registry/events.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime } from '../runtime/runtime.js';
import type { Hooks } from './hooks.js';

export type { AdmissionPlugin, Attributes, Operation, Undo } from '../registry/admission/admission.js';
export type { Controller, Result } from '../controller/framework/controller.js';
export type { Informer, Lister } from '../registry/cache/informer.js';
export type { EventStore, ListOptions, StreamRef } from '../registry/events.js';
export { DEFAULT_EVENTS_PER_AGENT } from '../registry/events.js';
export type { Logger } from '../observability/logger.js';
export type { Metrics } from '../observability/metrics.js';
export type { Registry } from '../registry/registry.js';
export type { AgentRuntime } from '../runtime/runtime.js';
export type { Hooks, TaskOutcome } from './hooks.js';
export type { KubeConfig } from '@kubernetes/client-node';

export interface PluginConfig {
  /** The service's data directory (embedded home). */
  dataDir: string;
  /** Plugin-specific options from the config file, keyed by plugin name. */
  options: Record<string, unknown>;
  /** Events an event store keeps per agent, the oldest trimmed on append (--events-per-agent). */
  eventsPerAgent?: number;
}

/** Agent operations a plugin may perform; usable once the service runs (not during setup). */
export interface AgentOperations {
  /** Asks for the agent's running task to be cancelled; returns once the request is stored. */
  cancel(namespace: string, name: string, reason: string): Promise<void>;
  delete(namespace: string, name: string): Promise<void>;
}

export interface ControllerSpec {
  name: string;
  reconcile: (ref: ObjectRef) => Promise<Result | void>;
  maxConcurrent?: number;
}

export interface PluginContext {
  config: PluginConfig;
  logger: Logger;
  metrics: Metrics;
  /** Writes (every one goes through the strategies and the admission chain). */
  registry: { agents: Registry<Agent>; squads: Registry<Squad> };
  /** Shared caches of the objects, for reads: a reconcile reads these, not storage. */
  informers: { agents: Informer<Agent>; squads: Informer<Squad> };
  /** A controller, started with the service and stopped with it. */
  controller(spec: ControllerSpec): Controller;
  /** Adds rules to every write of the objects (mutating or validating). */
  admission: { register(plugin: AdmissionPlugin): void };
  /** Where agents run: the only way to a worker. */
  runtime: AgentRuntime;
  hooks: Hooks;
  operations: AgentOperations;
  /** Called once the service is serving. */
  onStart(fn: () => Promise<void> | void): void;
  /** Registers the event store; exactly one plugin must provide it. */
  provideEventStore(store: EventStore): void;
  /**
   * The cluster home only (`serve --mode kubernetes`); absent in the embedded home. A plugin that
   * needs the cluster refuses to set up without it.
   */
  cluster?: ClusterAccess;
}

/** The cluster a plugin may talk to (cluster home only). */
export interface ClusterAccess {
  /** The server's own credentials for kube-apiserver (its service account in a pod). */
  kubeConfig: KubeConfig;
  /** The namespace agentplane is installed in (where, e.g., the model credential's Secret lives). */
  installNamespace: string;
}

export type Teardown = () => Promise<void> | void;

export interface Plugin {
  name: string;
  setup(ctx: PluginContext): Promise<Teardown | void> | Teardown | void;
}
