// What only the leader runs: the runtime's watches and stored credentials, the reconcilers (agents,
// checkpoints, schedules, squads, connectors, webhooks) and the
// plugins' controllers and start steps. With leader election they are a manager of their own,
// started when this replica takes the Lease and stopped before it gives it back; without, they
// are the last runnables of the service.

import { hostname } from 'node:os';
import type { Controller } from '../../pkg/controller/framework/controller.js';
import { candidateIdentity, LeaderElector } from '../../pkg/controller/framework/leader-election.js';
import { Manager } from '../../pkg/manager/manager.js';
import type { ConnectorParts } from './connectors.js';
import type { Controllers } from './controllers.js';
import type { Home } from './homes.js';
import { DEFAULT_LEASE_NAME, type LeaderElectionSettings } from './options.js';
import type { PluginParts } from './plugins.js';
import type { BuiltRuntime } from './runtimes.js';
import type { Wiring } from './wiring.js';

export function addLeaderRunnables(
  w: Wiring,
  home: Home,
  built: BuiltRuntime,
  controllers: Controllers,
  connectors: ConnectorParts,
  plugins: PluginParts,
): void {
  const { o, manager, child } = w;
  const leader = o.leaderElection ? new Manager(child('leader')) : manager;
  // The runtime's watches and stored credentials, before any reconcile asks it for a worker.
  leader.add({ name: 'runtime (leader)', start: () => built.lead() });
  leader.add({ name: 'agent controller', start: () => controllers.agents.start(), stop: () => controllers.agents.stop() });
  leader.add({ name: 'checkpoint controller', start: () => controllers.checkpoints.start(), stop: () => controllers.checkpoints.stop() });
  leader.add({ name: 'message delivery', start: () => controllers.messages.controller.start(), stop: () => controllers.messages.controller.stop() });
  leader.add({ name: 'schedule controller', start: () => controllers.schedules.start(), stop: () => controllers.schedules.stop() });
  leader.add({ name: 'squad controller', start: () => controllers.squads.controller.start(), stop: () => controllers.squads.controller.stop() });
  leader.add({ name: 'webhook controller', start: () => controllers.webhooks.start(), stop: () => controllers.webhooks.stop() });
  const connectorController = connectors.controller;
  if (connectorController) leader.add({ name: 'connector controller', start: () => connectorController.start(), stop: () => connectorController.stop() });
  const pluginControllers: Controller[] = plugins.controllers;
  leader.add({
    name: 'plugin controllers',
    start: async () => void (await Promise.all(pluginControllers.map((c) => c.start()))),
    stop: () => pluginControllers.forEach((c) => c.stop()),
  });
  for (const fn of plugins.starts) leader.add({ name: 'plugin start', start: fn });
  if (!o.leaderElection) {
    w.metrics.isLeader.set(1);
    return;
  }
  if (!home.cluster) throw new Error('leader election needs the cluster home (--mode kubernetes)');
  manager.add(leaderElection(w, o.leaderElection, home.cluster, leader));
}

/** The elector as a runnable: it starts `leader` on taking the Lease and stops it on losing it. */
function leaderElection(w: Wiring, le: LeaderElectionSettings, cluster: NonNullable<Home['cluster']>, leader: Manager) {
  const { manager, metrics, logger, child, leadership } = w;
  let closing = false;
  const lost = (): void => {
    if (closing) return;
    closing = true;
    void leader.stop().then(() => (le.onLost ? le.onLost() : void manager.stop()));
  };
  const elector = new LeaderElector({
    kubeConfig: cluster.kubeConfig,
    namespace: le.namespace ?? cluster.installNamespace,
    name: le.name ?? DEFAULT_LEASE_NAME,
    identity: le.identity ?? candidateIdentity(hostname()),
    ...(le.leaseDurationMs !== undefined ? { leaseDurationMs: le.leaseDurationMs } : {}),
    ...(le.renewDeadlineMs !== undefined ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
    ...(le.retryPeriodMs !== undefined ? { retryPeriodMs: le.retryPeriodMs } : {}),
    logger: child('leader-election'),
    onNewLeader: () => metrics.leaderTransitions.inc(),
    onStartedLeading: () => {
      // Reconcilers start from the informer caches, which every replica keeps current.
      leader.start().then(
        () => {
          leadership.leading = true;
          metrics.isLeader.set(1);
        },
        (err: unknown) => {
          logger.error({ err: err instanceof Error ? err.message : String(err) }, 'could not start leading');
          lost();
        },
      );
    },
    onStoppedLeading: () => {
      leadership.leading = false;
      metrics.isLeader.set(0);
      lost();
    },
  });
  metrics.isLeader.set(0);
  return {
    name: 'leader election',
    start: () => elector.start(),
    // The reconcilers stop before the Lease is released, so two leaders never overlap.
    stop: async () => {
      closing = true;
      leadership.leading = false;
      await leader.stop();
      await elector.stop();
    },
  };
}
