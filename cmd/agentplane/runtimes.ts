// Where agents run, chosen per home: local worker processes (the embedded home's default) or
// pods through kube-apiserver (the cluster home's default). Both serve workers the same control
// channel and model proxy; they differ in where that listener binds and how workers reach it.

import type { KubeConfig } from '@kubernetes/client-node';
import { AGENT_KIND, DEFAULT_TEMPLATE } from '../../pkg/api/agent.js';
import { API_VERSION } from '../../pkg/api/meta.js';
import { type EgressPolicy, egressPolicy, type TemplateConfig } from '../../pkg/api/template-settings.js';
import { componentLogger, type Logger } from '../../pkg/observability/logger.js';
import type { WorkerChannel } from '../../pkg/runtime/channel/hub.js';
import { KubernetesRuntime } from '../../pkg/runtime/kubernetes/kubernetes-runtime.js';
import { egressTargets } from '../../pkg/runtime/kubernetes/network-policy.js';
import { BUILTIN_TEMPLATE, type WorkerTemplate } from '../../pkg/runtime/kubernetes/template.js';
import { TemplateCatalog } from '../../pkg/runtime/kubernetes/template-catalog.js';
import { LocalRuntime, type LocalRuntimeOptions } from '../../pkg/runtime/local/local-runtime.js';
import type { AgentRuntime, ModelCredentialIssuer } from '../../pkg/runtime/runtime.js';

import type { ModelProxyMode, RuntimeKind } from './runtime-kinds.js';

export { MODEL_PROXY_MODES, type ModelProxyMode, RUNTIME_KINDS, type RuntimeKind } from './runtime-kinds.js';

/** The Kubernetes runtime's settings (docs/kubernetes-runtime.md). */
export interface PodOptions {
  /** The default template's image; default DEFAULT_WORKER_IMAGE. */
  image?: string;
  imagePullPolicy?: WorkerTemplate['imagePullPolicy'];
  /** The worker listener's bind address and port; default 0.0.0.0:8081. */
  listenHost?: string;
  listenPort?: number;
  /** The URL pods dial; default the manifests' Service, http://agentplane-workers.<install namespace>.svc:<port>. */
  workerUrl?: string;
  /** The default template's workspace claim size and storage class. */
  workspaceSize?: string;
  storageClass?: string;
  /** Where engines reach the model; default sidecar with credential-mirror and without --demo (serve.ts). */
  modelProxy?: ModelProxyMode;
}

export const DEFAULT_WORKER_IMAGE = 'agentplane/worker:latest';
export const DEFAULT_WORKER_PORT = 8081;

export interface BuiltRuntime {
  runtime: AgentRuntime & { readonly channel: WorkerChannel };
  /** The local runtime's diagnostics (tests, benches); absent for pods. */
  local?: LocalRuntime;
  /** Template names agents may use now (TemplateExists admission). */
  templateNames: () => readonly string[];
  /** The template's model task deadline (`modelTaskDeadlineSeconds`) in ms; undefined: the server's. */
  modelTaskDeadlineMs: (template: string) => number | undefined;
  /**
   * An agent's effective egress from its `templateRef`: the mode (default Open) and, for Proxy,
   * the hosts its tools may reach (for the egress proxy). A template that does not exist: None.
   */
  egressPolicy: (template: string) => EgressPolicy;
  /** Where the worker listener binds; undefined: the home decides (loopback). */
  listen?: { host: string; port: number };
  /** The URL workers dial once the listener is bound at `bound`. */
  workerUrl(bound: string): string;
  /** What every replica needs (the template catalog admission reads). */
  start(): Promise<void>;
  /**
   * What only the replica that runs the reconcilers needs, before its first reconcile: the
   * runtime's watches and its workers' stored credentials (docs/high-availability.md).
   */
  lead(): Promise<void>;
  stop(): Promise<void>;
}

export interface RuntimeInputs {
  kind: RuntimeKind;
  logger: Logger;
  model: ModelCredentialIssuer & Required<Pick<ModelCredentialIssuer, 'restore'>>;
  /** Where workers dial; set once the listener is bound. */
  channelUrl: () => string;
  /** Templates configured by name, with their settings (embedded, --templates and the config file). */
  templates: readonly TemplateConfig[];
  local: Omit<LocalRuntimeOptions, 'logger' | 'model' | 'channelUrl' | 'warmPoolMetrics'>;
  /** Either runtime's warm pool: ready slots and takes (Prometheus). */
  warmPoolMetrics?: LocalRuntimeOptions['warmPoolMetrics'];
  /** The cluster home's connection and install namespace (templates live there). */
  cluster?: { kubeConfig: KubeConfig; installNamespace: string };
  pods?: PodOptions;
  /** With `pods.modelProxy` sidecar: the mirrored Secret, the model API and retries it uses. */
  modelSidecar?: { secretName: string; upstream?: string; retry?: string };
}

export function buildRuntime(i: RuntimeInputs): BuiltRuntime {
  if (i.kind === 'local') {
    const local = new LocalRuntime({
      ...i.local,
      logger: i.logger,
      model: i.model,
      channelUrl: i.channelUrl,
      ...(i.warmPoolMetrics ? { warmPoolMetrics: i.warmPoolMetrics } : {}),
    });
    const names = [...new Set([DEFAULT_TEMPLATE, ...i.templates.map((t) => t.name)])];
    const deadlines = new Map(i.templates.map((t) => [t.name, t.modelTaskDeadlineSeconds]));
    const configured = new Map(i.templates.map((t) => [t.name, t]));
    return {
      runtime: local,
      local,
      templateNames: () => names,
      modelTaskDeadlineMs: (template) => seconds(deadlines.get(template)),
      egressPolicy: (template) => (names.includes(template) ? egressPolicy(configured.get(template)) : CLOSED),
      workerUrl: (bound) => bound,
      // Once workers can dial the server.
      start: async () => local.startPool(),
      lead: async () => {},
      stop: () => local.close(),
    };
  }
  if (!i.cluster) throw new Error('the kubernetes runtime needs the cluster home (--mode kubernetes)');
  const { kubeConfig, installNamespace: namespace } = i.cluster;
  const p = i.pods ?? {};
  const defaults: WorkerTemplate = {
    ...BUILTIN_TEMPLATE,
    image: p.image ?? DEFAULT_WORKER_IMAGE,
    ...(p.imagePullPolicy ? { imagePullPolicy: p.imagePullPolicy } : {}),
    storage: { size: p.workspaceSize ?? BUILTIN_TEMPLATE.storage.size, ...(p.storageClass ? { storageClassName: p.storageClass } : {}) },
  };
  const catalog = new TemplateCatalog({ kubeConfig, namespace, defaults, logger: componentLogger(i.logger, 'templates') });
  const listen = { host: p.listenHost ?? '0.0.0.0', port: p.listenPort ?? DEFAULT_WORKER_PORT };
  const workerUrl = p.workerUrl ?? `http://agentplane-workers.${namespace}.svc:${listen.port}`;
  const sidecar = p.modelProxy === 'sidecar' && i.modelSidecar ? i.modelSidecar : undefined;
  const apiServerUrl = kubeConfig.getCurrentCluster()?.server;
  const runtime = new KubernetesRuntime({
    kubeConfig,
    logger: i.logger,
    model: i.model,
    channelUrl: i.channelUrl,
    templates: catalog,
    ...(sidecar ? { modelSidecar: sidecar } : {}),
    // Each pod's NetworkPolicy: DNS, this server's worker listener, public addresses for Open.
    egress: egressTargets({
      workerUrl,
      listenPort: listen.port,
      installNamespace: namespace,
      ...(apiServerUrl ? { apiServerUrl } : {}),
      ...(sidecar?.upstream ? { modelUpstream: sidecar.upstream } : {}),
    }),
    ...(i.warmPoolMetrics ? { warmPoolMetrics: i.warmPoolMetrics } : {}),
    // The agent owns its objects: when it is gone, kube-controller-manager's garbage collector
    // removes whatever the runtime's own clean-up did not reach. (Not its storage record: the
    // agent's uid is not the record's, see pkg/registry/kubernetes/records.ts.)
    owner: (ref, uid) => ({ apiVersion: API_VERSION, kind: AGENT_KIND, name: ref.name, uid, controller: true }),
  });
  return {
    runtime,
    templateNames: () => catalog.names(),
    modelTaskDeadlineMs: (template) => seconds(catalog.resolve(template)?.modelTaskDeadlineSeconds),
    egressPolicy: (template) => {
      const t = catalog.resolve(template);
      return t ? egressPolicy(t) : CLOSED;
    },
    listen,
    workerUrl: () => workerUrl,
    start: () => catalog.start(),
    lead: () => runtime.started(),
    stop: async () => {
      await runtime.close();
      await catalog.stop();
    },
  };
}

/** A template that does not (or no longer) exist lets nothing out. */
const CLOSED: EgressPolicy = { mode: 'None', allow: [] };

const seconds = (s: number | undefined): number | undefined => (s === undefined ? undefined : s * 1000);
