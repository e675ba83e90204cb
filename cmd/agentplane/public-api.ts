// The public listener's app: its filters in the order they must run (audit, then auth, then the
// rate limit, all before any route) and the routes: the REST mirror, the aggregated API, the UI.

import { toBudgetResponse } from '../../pkg/api/budget.js';
import { createApp } from '../../pkg/server/app.js';
import { aggregatedApiRoutes } from '../../pkg/server/aggregated/index.js';
import { type AuditPolicy, installAuditLog, openAuditSink, writesAnything } from '../../pkg/server/audit/index.js';
import { ALWAYS_ALLOW_PATHS, BYPASS_PATHS, installAuthFilter } from '../../pkg/server/auth/filter.js';
import { DEFAULT_RATE_LIMIT, installRateLimit } from '../../pkg/server/rate-limit.js';
import { DEFAULT_WRITES_PER_TURN, installWriteTurns } from '../../pkg/server/write-turns.js';
import { AgentApprovals } from '../../pkg/server/services/agent-approvals.js';
import { AgentCompaction } from '../../pkg/server/services/agent-compaction.js';
import { AgentCosts } from '../../pkg/server/services/agent-costs.js';
import { AgentService } from '../../pkg/server/services/agent-service.js';
import { AgentMessages } from '../../pkg/server/services/agent-messages.js';
import { AgentToolCalls } from '../../pkg/server/services/agent-tool-calls.js';
import { agentMessageRoutes } from '../../pkg/server/routes/agent-messages.js';
import { CheckpointService } from '../../pkg/server/services/checkpoint-service.js';
import { SquadService } from '../../pkg/server/services/squad-service.js';
import { agentFileRoutes } from '../../pkg/server/routes/agent-files.js';
import { agentOpRoutes } from '../../pkg/server/routes/agent-ops.js';
import { agentStreamRoutes } from '../../pkg/server/routes/agent-stream.js';
import { agentRoutes } from '../../pkg/server/routes/agents.js';
import { checkpointRoutes } from '../../pkg/server/routes/checkpoints.js';
import { connectorRoutes } from '../../pkg/server/routes/connectors.js';
import { kindRoutes } from '../../pkg/server/routes/kind-routes.js';
import { budgetService } from '../../pkg/server/services/budget-service.js';
import { scheduleRoutes } from '../../pkg/server/routes/schedules.js';
import { scheduleService } from '../../pkg/server/services/schedule-service.js';
import { secretRoutes } from '../../pkg/server/routes/secrets.js';
import { triggerHookRoutes } from '../../pkg/server/routes/trigger-hooks.js';
import { TriggerHooks } from '../../pkg/server/services/trigger-hooks.js';
import { triggerService, webhookService } from '../../pkg/server/services/trigger-service.js';
import { toTriggerResponse } from '../../pkg/api/trigger.js';
import { toWebhookResponse } from '../../pkg/api/webhook.js';
import { mcpRoutes } from '../../pkg/server/routes/mcp.js';
import { squadRoutes } from '../../pkg/server/routes/squads.js';
import { type ReadinessCheck, systemRoutes } from '../../pkg/server/routes/system.js';
import { uiRoutes } from '../../pkg/server/routes/ui.js';
import { openWorkspaceFile, readWorkspacePath } from '../../pkg/runtime/local/workspace-files.js';
import type { EventLog } from '../../pkg/registry/event-log.js';
import type { ConnectorParts } from './connectors.js';
import type { Home } from './homes.js';
import type { BuiltRuntime } from './runtimes.js';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';
import { registerSkillMemoryRoutes } from './skills-memories.js';

export type App = Awaited<ReturnType<typeof createApp>>;

export async function publicApi(
  w: Wiring,
  home: Home,
  auditPolicy: AuditPolicy,
  s: Storage,
  events: EventLog,
  built: BuiltRuntime,
  c: ConnectorParts,
): Promise<App> {
  const { o, logger, metrics, child, manager } = w;
  const { agents, informers, reads } = s;
  const browserGuard = { checkHost: !o.kubernetes || !!o.allowedHosts?.length, allowedHosts: o.allowedHosts ?? [], bindHost: o.host };
  const app = await createApp({
    logger,
    metrics,
    browserGuard,
    ...(home.tls ? { tls: home.tls } : {}),
    ...(o.httpTimeouts ? { timeouts: o.httpTimeouts } : {}),
  });
  if (o.audit && writesAnything(auditPolicy)) {
    // Before the auth filter, so that refusals are audited too; stopped after the HTTP server
    // (added to the manager before it), so the last responses' lines are flushed.
    const sink = openAuditSink(o.audit.path, child('audit'));
    manager.onStop('audit log', () => sink.close());
    installAuditLog(app, { policy: auditPolicy, sink });
  }
  if (home.auth) {
    // Before any route: hooks added later would not reach route plugins registered earlier.
    installAuthFilter(app, { ...home.auth, agentExists: async (ns, name) => !!(await agents.get(ns, name)) });
  }
  // After the auth filter (the bucket is the user's), before any route.
  installRateLimit(app, {
    requestsPerSecond: o.rateLimit ?? (home.auth ? DEFAULT_RATE_LIMIT : 0),
    ...(o.rateLimitBurst !== undefined ? { burst: o.rateLimitBurst } : {}),
    exemptPaths: [...ALWAYS_ALLOW_PATHS, ...BYPASS_PATHS],
  });
  // After the rate limit (a refused request takes no seat), before any route.
  installWriteTurns(app, {
    perTurn: o.writesPerTurn ?? DEFAULT_WRITES_PER_TURN,
    exemptPaths: [...ALWAYS_ALLOW_PATHS, ...BYPASS_PATHS],
    wait: metrics.writeWait,
  });
  const readiness = readinessChecks(s, events);
  const service = new AgentService(agents, events, undefined, reads.agents);
  await app.register(systemRoutes(metrics, readiness));
  await app.register(agentRoutes(service));
  const compaction = new AgentCompaction(agents);
  const costs = new AgentCosts(agents, events);
  const approvals = new AgentApprovals(agents);
  await app.register(agentOpRoutes(compaction, costs, approvals));
  const messages = await wireMessages(app, s, events, service, built);
  await app.register(agentStreamRoutes(service, events, metrics, o.wsClientsPerAgent !== undefined ? { maxClientsPerAgent: o.wsClientsPerAgent } : {}));
  const local = built.local;
  await app.register(
    agentFileRoutes(
      service,
      local
        ? { read: (ref, path) => readWorkspacePath(local.workspace(ref), path), download: (ref, path) => openWorkspaceFile(local.workspace(ref), path) }
        : undefined,
    ),
  );
  await app.register(uiRoutes());
  await app.register(checkpointRoutes(new CheckpointService(s.checkpoints, agents, s.squads, reads.checkpoints, informers.checkpoints)));
  const squads = new SquadService(s.squads, agents, reads.squads);
  await app.register(squadRoutes(squads));
  await app.register(connectorRoutes(c.connectors));
  await registerKindMirrors(app, s);
  await registerSkillMemoryRoutes(app, s);
  await app.register(secretRoutes(c.secrets));
  await app.register(triggerHookRoutes(new TriggerHooks(s.triggers, agents, home.secrets, child('triggers'))));
  // agentplane's verbs as MCP tools, each call authorized as its REST request (docs/mcp.md).
  await app.register(mcpRoutes({ services: { agents: service, approvals, squads }, ...(home.auth ? { authorizer: home.auth.authorizer } : {}) }));
  await app.register(
    aggregatedApiRoutes({
      agents,
      squads: s.squads,
      connectors: s.connectors,
      checkpoints: s.checkpoints,
      budgets: s.budgets,
      schedules: s.schedules,
      triggers: s.triggers,
      webhooks: s.webhooks,
      skills: s.skills,
      memories: s.memories,
      agentService: service,
      compaction,
      costs,
      approvals,
      messages,
      events,
      reads,
    }),
  );
  return app;
}

/** Messages to agents (docs/messages.md), and a manager agent's agentplane tools, relayed by its worker over the control channel. */
async function wireMessages(app: App, s: Storage, events: EventLog, service: AgentService, built: BuiltRuntime): Promise<AgentMessages> {
  const messages = new AgentMessages(s.agents, events, service);
  await app.register(agentMessageRoutes(messages));
  const toolCalls = new AgentToolCalls(s.agents, messages);
  built.runtime.channel.serveCalls((caller, call) => toolCalls.answer(caller, call));
  return messages;
}

/** Not ready until the caches have listed, nor while the event store cannot be reached. */
function readinessChecks({ informers }: Storage, events: EventLog): ReadinessCheck[] {
  return [
    {
      name: 'informers',
      check: async () => {
        const waiting = Object.entries(informers)
          .filter(([, i]) => !i.hasSynced())
          .map(([n]) => n);
        if (waiting.length) throw new Error(`caches not synced yet: ${waiting.join(', ')}`);
      },
    },
    { name: 'event store', check: () => events.ping() },
  ];
}

/** The REST mirrors of the kinds served by the generic kind routes (and a schedule's trigger). */
async function registerKindMirrors(app: App, s: Storage): Promise<void> {
  const { reads } = s;
  await app.register(kindRoutes('budgets', budgetService(s.budgets, reads.budgets), toBudgetResponse));
  await app.register(scheduleRoutes(scheduleService(s.schedules, reads.schedules), s.schedules));
  await app.register(kindRoutes('triggers', triggerService(s.triggers, reads.triggers), toTriggerResponse));
  await app.register(kindRoutes('webhooks', webhookService(s.webhooks, reads.webhooks), toWebhookResponse));
}
