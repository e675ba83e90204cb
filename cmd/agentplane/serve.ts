// The composition root: a manager of runnables, as controller-runtime's. A home (homes.ts)
// provides state, secrets, TLS and auth; every other part is the same in both homes and is made
// by its own constructor in its own file, each adding its runnables to the manager, which starts
// them in the order added and stops them in reverse (docs/architecture.md "Composition root"):
//
//   home → informers → scripted model, model proxy → runtime (stop) → plugins →
//   audit log → connector gateway → worker socket, worker listener, http → runtime (start) →
//   leader's: runtime watches, agent, squad and connector controllers, plugin controllers and start steps
//   (directly, or under leader election)

import { templateConfigs } from '../../pkg/api/template-settings.js';
import { Manager } from '../../pkg/manager/manager.js';
import { MODEL_PROXY_PATH } from '../../pkg/modelproxy/index.js';
import { componentLogger, createLogger, type Logger } from '../../pkg/observability/logger.js';
import { EventLoopMonitor } from '../../pkg/observability/event-loop.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { Hooks } from '../../pkg/plugin/hooks.js';
import { NO_SANDBOX, resolveSandbox } from '../../pkg/runtime/local/sandbox.js';
import { routesOf } from '../../pkg/server/route-table.js';
import { wireRuntime } from './agent-runtime.js';
import { wireConnectors } from './connectors.js';
import { wireControllers } from './controllers.js';
import { ChannelEndpoint, displayHost, portOf } from './endpoints.js';
import { addLeaderRunnables } from './leader.js';
import { addListeners } from './listeners.js';
import { wireModel } from './model.js';
import { openHome } from './open-home.js';
import type { RunningServer, ServeOptions } from './options.js';
import { wirePlugins } from './plugins.js';
import { preflight } from './preflight.js';
import { publicApi } from './public-api.js';
import type { BuiltRuntime } from './runtimes.js';
import { wireStorage } from './storage.js';
import { Late, type Wiring } from './wiring.js';
import { workerApps } from './worker-apps.js';

export { DEFAULT_LEASE_NAME, type LeaderElectionSettings, type RunningServer, type ServeOptions } from './options.js';
export { openBindRefusal } from './preflight.js';

export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const templates = templateConfigs(o.templates ?? []);
  const logger = o.logger ?? createLogger();
  // Before anything starts or opens.
  const { dataDir, auditPolicy } = preflight(o, logger);
  const child = (component: string): Logger => componentLogger(logger, component);
  const manager = new Manager(child('manager'));
  const metrics = new Metrics({ defaultMetrics: true });
  // From boot, so a start-up that holds the loop shows; stopped last (or here, if start-up fails).
  const loop = new EventLoopMonitor(metrics.eventLoopDelay);
  loop.start();
  manager.onStop('event-loop monitor', () => loop.stop());
  try {
    // First, so that --sandbox bwrap without a usable bubblewrap stops before anything starts.
    // Agents in pods have the pod for a sandbox: only local workers need bubblewrap.
    const runtimeKind = o.runtime ?? (o.kubernetes ? 'kubernetes' : 'local');
    const sandbox = runtimeKind === 'local' ? resolveSandbox(o.sandbox ?? 'auto', dataDir, child('runtime')) : NO_SANDBOX;
    const w: Wiring = {
      o,
      logger,
      child,
      manager,
      metrics,
      hooks: new Hooks(),
      dataDir,
      templates,
      runtimeKind,
      leadership: { leading: !o.leaderElection },
    };
    const home = await openHome(w);
    const storage = wireStorage(w, home);
    const channel = new ChannelEndpoint();
    const runtimeRef = new Late<BuiltRuntime>('the runtime');
    const model = await wireModel(w, (template) => runtimeRef.get().modelTaskDeadlineMs(template));
    const { built, workerSocket } = wireRuntime(w, home, sandbox, channel, model);
    runtimeRef.set(built);
    const plugins = await wirePlugins(w, home, storage);
    const connectors = wireConnectors(w, home, storage, model, built);
    const controllers = wireControllers(w, home, storage, plugins.events, built.runtime, model);
    const app = await publicApi(w, home, auditPolicy, storage, plugins.events, built, connectors);
    const wa = await workerApps(w, home, app, built, workerSocket, model, connectors, storage);
    addListeners(w, app, wa, workerSocket, built, channel);
    // What every replica needs of the runtime (the template catalog admission reads), once workers can dial.
    manager.add({ name: 'runtime', start: () => built.start() });
    addLeaderRunnables(w, home, built, controllers, connectors, plugins);
    await manager.start();

    const port = portOf(app, o.port);
    const url = `${home.tls ? 'https' : 'http'}://${displayHost(o.host)}:${port}`;
    logger.info({ url, home: home.name, dataDir, plugins: plugins.names }, 'agentplane is serving');
    return {
      routes: () => routesOf(app),
      url,
      port,
      dataDir,
      logger,
      agents: storage.agents,
      controller: controllers.agents,
      events: plugins.events,
      runtime: built.runtime,
      ...(built.local ? { local: built.local } : {}),
      modelProxy: { url: `${channel.url}${MODEL_PROXY_PATH}`, credentials: model.credentials },
      ...(model.model ? { model: model.model } : {}),
      isLeader: () => w.leadership.leading,
      close: () => manager.stop(),
    };
  } catch (err) {
    await manager.stop();
    loop.stop();
    throw err;
  }
}
