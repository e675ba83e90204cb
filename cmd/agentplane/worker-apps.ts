// What workers call, and on which app: the control channel, the model proxy, the connector
// gateway and pods' sidecar reports. On the public app in the embedded home; on a loopback
// listener of its own when the public port is TLS or the runtime names one (pods); and, for
// sandboxed local workers, on a Unix socket with nothing else on it.

import type { AddressInfo } from 'node:net';
import { ConnectorGateway } from '../../pkg/connector/gateway.js';
import { attachEgressProxy, EgressProxy } from '../../pkg/egress/proxy.js';
import { ModelReports } from '../../pkg/modelproxy/index.js';
import { createApp } from '../../pkg/server/app.js';
import { installLeaderOnly } from '../../pkg/server/leader-only.js';
import { connectorGatewayRoutes } from '../../pkg/server/routes/connector-gateway.js';
import { memoryToolRoutes } from '../../pkg/server/routes/memory-tool.js';
import { modelProxyRoutes } from '../../pkg/server/routes/model-proxy.js';
import { modelReportRoutes } from '../../pkg/server/routes/model-reports.js';
import { workerChannelRoutes } from '../../pkg/server/routes/worker-channel.js';
import type { ConnectorParts } from './connectors.js';
import type { Home } from './homes.js';
import type { ModelSide } from './model.js';
import type { App } from './public-api.js';
import type { BuiltRuntime } from './runtimes.js';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';
import { wireAgentMemories } from './skills-memories.js';

export interface WorkerApps {
  /** The workers' app: `app` itself when they share the public listener. */
  workers: App;
  /** The sandboxed workers' socket app, when there is one. */
  socket?: App;
}

export async function workerApps(
  w: Wiring,
  home: Home,
  app: App,
  built: BuiltRuntime,
  workerSocket: string | undefined,
  m: ModelSide,
  c: ConnectorParts,
  s: Storage,
): Promise<WorkerApps> {
  const { o, logger, metrics, child, manager, leadership } = w;
  const { runtime } = built;
  const workers = home.separateWorkerListener || built.listen ? await createApp({ logger: logger.child({ listener: 'workers' }), metrics }) : app;
  // With leader election, the worker listener serves the leader's workers only.
  if (o.leaderElection) {
    if (workers === app) throw new Error('leader election needs the cluster home (--mode kubernetes)');
    installLeaderOnly(workers, () => leadership.leading);
  }
  runtime.channel.on('resumed', () => metrics.workerReconnects.inc());
  // Engines reach connectors only through the gateway, which holds the secrets (docs/connectors.md).
  const gateway = new ConnectorGateway({
    credentials: m.credentials,
    target: (grant, ns, name) => c.connectors.gatewayTarget(grant, ns, name),
    egress: c.access.egress,
    logger: child('connector-gateway'),
  });
  manager.onStop('connector gateway', () => gateway.close());
  // Pods' sidecars report what their requests told them, as the server's proxy would have seen it;
  // without sidecars the server's proxy meters every request and reports are refused.
  const sidecars = w.runtimeKind === 'kubernetes' && m.mode === 'sidecar';
  const modelReports = sidecars
    ? new ModelReports({
        credentials: m.credentials,
        meter: m.usageMeter,
        events: m.events,
        taskDeadlineMs: m.proxy.policy.taskDeadlineMs,
        onRetry: (status) => metrics.modelRetries.inc({ status: String(status) }),
        budgets: {
          admit: (g, signal) => m.budget.peek()?.admit(g, signal) ?? Promise.resolve({ allow: true }),
          applies: (ref) => m.budget.peek()?.applies(ref) ?? false,
        },
      })
    : undefined;
  const memories = wireAgentMemories(w, s);
  const workerRoutes = async (target: App): Promise<void> => {
    await target.register(workerChannelRoutes(runtime.channel));
    await target.register(modelProxyRoutes(m.proxy));
    await target.register(connectorGatewayRoutes(gateway));
    await target.register(modelReportRoutes(modelReports));
    await target.register(memoryToolRoutes(memories, m.credentials));
  };
  await workerRoutes(workers);
  // Sandboxed workers' socket: only the worker-facing routes, so a tool that reaches it reaches no API.
  const socket = workerSocket ? await createApp({ logger: logger.child({ listener: 'worker-socket' }), metrics }) : undefined;
  if (socket) await workerRoutes(socket);
  if (!o.kubernetes) {
    // The tools' egress proxy, on the listeners local workers reach (docs/security.md "Tool
    // egress"): an agent's rule is its template's; an agent that no longer exists gets None.
    const egressProxy = new EgressProxy({
      credentials: m.credentials,
      ruleFor: (grant) => {
        const a = s.informers.agents.get(grant.ref.namespace, grant.ref.name);
        if (!a || a.metadata.uid !== grant.uid) return { mode: 'None' };
        const t = w.templates.find((x) => x.name === a.spec.templateRef);
        return { mode: t?.egress ?? 'Open', ...(t?.egressAllow ? { allow: t.egressAllow } : {}) };
      },
      self: () => [app, workers].map((x) => x.server.address()).filter((a): a is AddressInfo => typeof a === 'object' && a !== null),
      logger: child('egress-proxy'),
    });
    attachEgressProxy(workers.server, egressProxy);
    if (socket) attachEgressProxy(socket.server, egressProxy);
  }
  return { workers, ...(socket ? { socket } : {}) };
}
