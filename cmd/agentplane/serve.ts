// Wiring of the embedded home, in one place: plugins, state, runtime, controller, HTTP.

import { routesOf } from '../../pkg/server/route-table.js';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Agent } from '../../pkg/api/agent.js';
import type { Squad } from '../../pkg/api/squad.js';
import type { Connector } from '../../pkg/api/connector.js';
import type { AgentController } from '../../pkg/controller/agent-controller.js';
import { AgentController as Controller } from '../../pkg/controller/agent-controller.js';
import { AgentService } from '../../pkg/controller/agent-service.js';
import { SquadController } from '../../pkg/controller/squad-controller.js';
import { SquadService } from '../../pkg/controller/squad-service.js';
import { ConnectorService } from '../../pkg/controller/connector-service.js';
import { SecretService } from '../../pkg/controller/secret-service.js';
import { createLogger, type Logger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { Hooks } from '../../pkg/plugin/hooks.js';
import { loadPlugins } from '../../pkg/plugin/loader.js';
import type { EventStore } from '../../pkg/registry/events.js';
import { EventLog } from '../../pkg/registry/event-log.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { FileSecretStore } from '../../pkg/registry/secrets/file-secret-store.js';
import { Registry } from '../../pkg/registry/registry.js';
import { AdmissionChain, storageReader } from '../../pkg/registry/admission/admission.js';
import { connectorInUse } from '../../pkg/registry/admission/connector-in-use.js';
import { connectorSecretBinding } from '../../pkg/registry/admission/connector-secret-binding.js';
import { connectorsExist } from '../../pkg/registry/admission/connectors-exist.js';
import { squadMembership } from '../../pkg/registry/admission/squad-membership.js';
import { urlEgressRefusal } from '../../pkg/controller/egress.js';
import { SquadIndex } from '../../pkg/registry/squad/index.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';
import { LocalRuntime } from '../../pkg/runtime/local/local-runtime.js';
import { resolveSandbox, type SandboxMode } from '../../pkg/runtime/local/sandbox.js';
import { startScriptedModel, type ScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { createApp } from '../../pkg/server/app.js';
import { aggregatedApiRoutes } from '../../pkg/server/aggregated/index.js';
import { installAuthFilter } from '../../pkg/server/auth/filter.js';
import { agentStreamRoutes } from '../../pkg/server/routes/agent-stream.js';
import { agentRoutes } from '../../pkg/server/routes/agents.js';
import { connectorRoutes } from '../../pkg/server/routes/connectors.js';
import { secretRoutes } from '../../pkg/server/routes/secrets.js';
import { squadRoutes } from '../../pkg/server/routes/squads.js';
import { systemRoutes } from '../../pkg/server/routes/system.js';
import { workerChannelRoutes } from '../../pkg/server/routes/worker-channel.js';
import { embeddedHome, type KubernetesHomeOptions, kubernetesHome } from './homes.js';

/** The worker's entry script, which the local runtime runs for each agent. */
const WORKER_MAIN = fileURLToPath(new URL('../agentplane-worker/main.js', import.meta.url));

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  plugins: string[];
  pluginOptions?: Record<string, unknown>;
  /** Start the scripted model and point workers at it (no key needed). */
  demo?: boolean;
  /** Model endpoint and credential; default from the environment. */
  model?: { apiKey?: string; baseUrl?: string };
  logger?: Logger;
  /** Where worker processes' log lines go; default stdout. */
  workerLogSink?: (line: string) => void;
  /**
   * Allow connector URLs at loopback and private addresses (127/8, ::1, localhost, 10/8,
   * 172.16/12, 192.168/16, fc00::/7); link-local and metadata addresses stay refused. Default false.
   */
  allowPrivateConnectorUrls?: boolean;
  /** How workers and their tools are confined (docs/security.md "Tool sandbox"); default auto. */
  sandbox?: SandboxMode;
  /** Kubernetes mode: state in Kubernetes, TLS, delegated auth. Embedded mode when absent. */
  kubernetes?: KubernetesHomeOptions;
}

export interface RunningServer {
  /** Every (method, url) the public app serves, as registered. */
  routes: () => { method: string; url: string }[];
  url: string;
  port: number;
  dataDir: string;
  logger: Logger;
  agents: Registry<Agent>;
  controller: AgentController;
  events: EventLog;
  runtime: LocalRuntime;
  model?: ScriptedModel;
  close(): Promise<void>;
}

export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const logger = o.logger ?? createLogger();
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const closers: (() => Promise<void> | void)[] = [];
  const close = async (): Promise<void> => {
    for (const fn of closers.reverse()) await fn();
  };

  try {
    // First, so that --sandbox bwrap without a usable bubblewrap stops before anything starts.
    const sandbox = resolveSandbox(o.sandbox ?? 'auto', dataDir, logger.child({ component: 'runtime' }));
    const metrics = new Metrics({ defaultMetrics: true });
    const hooks = new Hooks();
    const home = o.kubernetes ? await kubernetesHome(o.kubernetes, logger) : embeddedHome(dataDir);
    closers.push(() => home.close());
    const { state } = home;
    // One admission chain for every registry: the rules across objects, for every writer.
    const admission = new AdmissionChain();
    const agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy, admission);
    const squads = new Registry<Squad>(state.store<Squad>('Squad'), squadStrategy, admission);
    const connectorRegistry = new Registry<Connector>(state.store<Connector>('Connector'), connectorStrategy, admission);

    // Plugins get the registries and hooks now, agent operations once the service exists.
    let eventStore: EventStore | undefined;
    let agentService: AgentService | undefined;
    const starters: (() => Promise<void> | void)[] = [];
    const running = (): AgentService => {
      if (!agentService) throw new Error('agent operations are available once the service has started');
      return agentService;
    };
    const plugins = await loadPlugins(o.plugins, {
      config: { dataDir, options: o.pluginOptions ?? {} },
      logger: logger.child({ component: 'plugin' }),
      metrics,
      registry: { agents, squads },
      hooks,
      operations: {
        cancel: async (ns, name, reason) => void (await running().cancel(ns, name, reason)),
        delete: async (ns, name) => void (await running().delete(ns, name)),
      },
      onStart: (fn) => void starters.push(fn),
      provideEventStore(store) {
        if (eventStore) throw new Error('an event store is already provided by another plugin');
        eventStore = store;
      },
    });
    closers.push(() => plugins.teardown());
    if (!eventStore) throw new Error(`no plugin provides an event store; add "event-store-sqlite" to --plugins`);

    const events = new EventLog(eventStore);

    // Connectors and their secrets: the hook attaches an agent's connectors (token read from the
    // secret at dispatch); the validation hook refuses agents that list unknown connectors.
    const secretStore = new FileSecretStore(join(dataDir, 'secrets'));
    const secrets = new SecretService(secretStore, logger.child({ component: 'secrets' }));
    const connectors = new ConnectorService({
      connectors: connectorRegistry,
      agents,
      secrets: secretStore,
      logger: logger.child({ component: 'connectors' }),
      allowPrivateUrls: o.allowPrivateConnectorUrls === true,
    });
    closers.push(() => connectors.stop());
    secrets.onChange((ns, name) => connectors.secretChanged(ns, name));
    hooks.mcpServers.push((agent) => connectors.mcpServersFor(agent));
    const egress = { allowPrivate: o.allowPrivateConnectorUrls === true };
    admission.register(
      connectorsExist(storageReader(connectorRegistry)),
      connectorInUse(storageReader(agents)),
      squadMembership(agents, storageReader(connectorRegistry)),
      connectorSecretBinding({ secrets: secretStore, egressRefusal: (url) => urlEgressRefusal(url, egress), logger: logger.child({ component: 'admission' }) }),
    );
    events.onAppend((ev) => metrics.eventsAppended.inc({ type: ev.type }));

    let model: ScriptedModel | undefined;
    let modelEnv = o.model ?? { apiKey: process.env.ANTHROPIC_API_KEY, baseUrl: process.env.ANTHROPIC_BASE_URL };
    if (o.demo) {
      model = await startScriptedModel({ apiKey: 'agentplane-demo' });
      closers.push(() => model!.close());
      modelEnv = { apiKey: 'agentplane-demo', baseUrl: model.url };
      logger.info({ modelUrl: model.url }, 'demo mode: agents use the scripted model');
    } else if (!modelEnv.apiKey) {
      logger.warn('ANTHROPIC_API_KEY is not set: tasks will fail to reach the model (use --demo to try without a key)');
    }

    let serverUrl = '';
    const runtime = new LocalRuntime({
      dataDir,
      logger: logger.child({ component: 'runtime' }),
      modelEnv,
      sandbox,
      workerMain: WORKER_MAIN,
      channelUrl: () => serverUrl,
      ...(o.workerLogSink ? { logSink: o.workerLogSink } : {}),
    });
    closers.push(() => runtime.close());

    // One watch of the squads feeds both controllers' membership lookups.
    const squadIndex = new SquadIndex(squads);
    closers.push(() => squadIndex.stop());
    const controller = new Controller({
      agents,
      squads: squadIndex,
      events,
      runtime,
      hooks,
      metrics,
      logger: logger.child({ component: 'agent-controller' }),
    });
    closers.push(() => controller.stop());
    const service = new AgentService(agents, events, controller, runtime);
    agentService = service;
    const squadService = new SquadService(squads, agents, service);
    const squadController = new SquadController({
      squads,
      index: squadIndex,
      agents,
      membership: squadService.membership,
      logger: logger.child({ component: 'squad-controller' }),
    });
    closers.push(() => squadController.stop());
    metrics.collectAgentsBy(async () => {
      const counts: Record<string, number> = { Pending: 0, Running: 0, Sleeping: 0, Failed: 0 };
      for (const a of await service.list()) counts[a.status.status] = (counts[a.status.status] ?? 0) + 1;
      return counts;
    });

    const app = await createApp({ logger, metrics, ...(home.tls ? { tls: home.tls } : {}) });
    if (home.auth) {
      // Before any route: hooks added later would not reach route plugins registered earlier.
      installAuthFilter(app, { ...home.auth, agentExists: async (ns, name) => !!(await agents.get(ns, name)) });
    }
    await app.register(systemRoutes(metrics));
    await app.register(agentRoutes(service));
    await app.register(agentStreamRoutes(service, events, metrics));
    await app.register(squadRoutes(squadService));
    await app.register(connectorRoutes(connectors));
    await app.register(secretRoutes(secrets));
    await app.register(
      aggregatedApiRoutes({
        agents,
        squads,
        connectors: connectorRegistry,
        agentService: service,
        events,
      }),
    );

    // The worker control channel: on the public server in the embedded home; on its own
    // loopback listener when the public port is TLS.
    const workers = home.separateWorkerListener ? await createApp({ logger: logger.child({ listener: 'workers' }), metrics }) : app;
    await workers.register(workerChannelRoutes(runtime.channel));
    if (workers !== app) {
      await workers.listen({ host: '127.0.0.1', port: 0 });
      closers.push(() => workers.close());
    }
    await app.listen({ host: o.host, port: o.port });
    closers.push(() => app.close());
    const port = portOf(app, o.port);
    serverUrl = home.separateWorkerListener ? `http://127.0.0.1:${portOf(workers, 0)}` : `http://${loopbackFor(o.host)}:${port}`;
    await squadIndex.start();
    await controller.start();
    await squadController.start();
    for (const fn of starters) await fn();
    const url = `${home.tls ? 'https' : 'http'}://${displayHost(o.host)}:${port}`;
    logger.info({ url, home: home.name, dataDir, plugins: plugins.names }, 'agentplane is serving');

    return { routes: () => routesOf(app), url, port, dataDir, logger, agents, controller, events, runtime, model, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function portOf(app: { server: { address(): unknown } }, fallback: number): number {
  const addr = app.server.address() as { port?: number } | string | null;
  return typeof addr === 'object' && addr?.port ? addr.port : fallback;
}

/** Where local workers dial: loopback for wildcard and loopback binds, else the bound address. */
function loopbackFor(host: string): string {
  if (host === '0.0.0.0' || host === 'localhost' || host.startsWith('127.')) return '127.0.0.1';
  if (host === '::' || host === '::1') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return loopbackFor(host);
  return host.includes(':') ? `[${host}]` : host;
}
