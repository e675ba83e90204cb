// The plugin contract. A plugin is `{ name, setup(ctx) }`; setup registers what it provides
// through ctx and may return a teardown. Plugins import nothing of the project but this folder
// and pkg/api (checked by `make lint`): everything else they use comes through `ctx`, whose
// types are defined here, narrowed to what plugins use.

import type { KubeConfig } from '@kubernetes/client-node';
import type { Agent, AgentStatus } from '../api/agent.js';
import type { ObjectRef } from '../api/meta.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { EventStore } from '../registry/events.js';

// The event store is the one interface of pkg/registry a plugin implements rather than calls:
// its file (pkg/registry/events.ts) imports only pkg/api, and `make lint` allows exactly it.
export type { EventStore, ListOptions, StreamRef } from '../registry/events.js';
export { DEFAULT_EVENTS_PER_AGENT } from '../registry/events.js';
export type { Logger } from '../observability/logger.js';
export type { Metrics } from '../observability/metrics.js';
export type { KubeConfig } from '@kubernetes/client-node';

// What follows is what plugins/ use of the core, and no more: the service's Registry, Informer,
// Controller and admission chain fit these shapes as they are (cmd/agentplane/serve.ts hands
// them over), and pkg/plugin imports none of pkg/controller, pkg/registry (but the event store
// above) or pkg/runtime (`make lint`, rule plugin-contract-stands-alone).

/** The shared cache of agents: what a reconcile reads (never storage). */
export interface AgentCache {
  get(namespace: string, name: string): Agent | undefined;
  list(namespace?: string): Agent[];
}

/** Writes of an agent a plugin makes; each goes through the strategy and the admission chain. */
export interface AgentWrites {
  updateStatus(namespace: string, name: string, mutate: (status: AgentStatus, obj: Agent) => void): Promise<Agent>;
}

/** What a reconcile may ask for: run again after that many milliseconds. */
export interface Result {
  requeueAfter?: number;
}

/** A plugin's controller: reconciles refs queued by the agents it watches, or by hand. */
export interface Controller {
  /** Queues `map(agent)` (the agent itself by default) on each change of `ctx.informers.agents`. */
  watch(agents: AgentCache, map?: (agent: Agent) => ObjectRef[], opts?: { ignoreUpdate?: (old: Agent, obj: Agent) => boolean }): void;
  enqueue(ref: ObjectRef): void;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** One write as admission sees it (pkg/registry/admission/admission.ts has the full story). */
export interface Attributes {
  operation: Operation;
  kind: string;
  namespace: string;
  name: string;
  /** The object as it would be stored (CREATE, UPDATE); a mutating plugin may change it. */
  object?: unknown;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: unknown;
  dryRun: boolean;
}

/** Undoes what a validating plugin changed elsewhere when the write does not happen after all. */
export type Undo = () => Promise<void>;

/** A rule on every write of the kinds it names, whoever writes. */
export interface AdmissionPlugin {
  readonly name: string;
  readonly kinds: readonly string[];
  readonly operations: readonly Operation[];
  /** Mutating phase: may change `a.object`. */
  admit?(a: Attributes): Promise<void> | void;
  /** Validating phase: throws an ApiError to refuse. */
  validate?(a: Attributes): Promise<Undo | void> | Undo | void;
}

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
  registry: { agents: AgentWrites };
  /** Shared caches of the objects, for reads: a reconcile reads these, not storage. */
  informers: { agents: AgentCache };
  /** A controller, started with the service and stopped with it. */
  controller(spec: ControllerSpec): Controller;
  /** Adds rules to every write of the objects (mutating or validating). */
  admission: { register(plugin: AdmissionPlugin): void };
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
  /**
   * What the core may count on once this plugin is set up, e.g. `condition/Asleep`: it owns that
   * condition. The loader refuses a configuration without a plugin providing what the core needs
   * (loader.ts, CORE_NEEDS).
   */
  provides?: readonly string[];
  setup(ctx: PluginContext): Promise<Teardown | void> | Teardown | void;
}
