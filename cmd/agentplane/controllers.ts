// The reconcilers: agents, checkpoints, squads and schedules. Made here, started by the leader (leader.ts) once the
// service is serving, so that they reconcile from synced caches.

import { AGENT_PHASES } from '../../pkg/api/agent.js';
import { AgentController } from '../../pkg/controller/agent-controller.js';
import { BudgetGuard } from '../../pkg/controller/budget-guard.js';
import { spendOf } from '../../pkg/api/budget.js';
import { CheckpointController, CopyHolds } from '../../pkg/controller/checkpoint-controller.js';
import { CheckpointRestore } from '../../pkg/controller/checkpoint-restore.js';
import { MessageDelivery } from '../../pkg/controller/message-delivery.js';
import { ScheduleController } from '../../pkg/controller/schedule-controller.js';
import { SquadController } from '../../pkg/controller/squad-controller.js';
import { agentLine } from '../../pkg/registry/admission/agent-line.js';
import { cancelRunningTask } from '../../pkg/registry/agent/requests.js';
import type { EventLog } from '../../pkg/registry/event-log.js';
import { defaultMaxWorkers } from '../../pkg/runtime/local/capacity.js';
import type { AgentRuntime } from '../../pkg/runtime/runtime.js';
import { NamespaceLimitsConfigMap } from '../../pkg/registry/kubernetes/namespace-limits.js';
import type { Home } from './homes.js';
import type { ModelSide } from './model.js';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';
import { wireWebhooks } from './webhooks.js';
import type { WebhookController } from '../../pkg/controller/webhook-controller.js';

export interface Controllers {
  agents: AgentController;
  squads: SquadController;
  checkpoints: CheckpointController;
  /** Messages queued on sleeping agents, delivered once they wake (docs/messages.md). */
  messages: MessageDelivery;
  schedules: ScheduleController;
  webhooks: WebhookController;
}

export function wireControllers(w: Wiring, home: Home, s: Storage, events: EventLog, runtime: AgentRuntime, m: ModelSide): Controllers {
  const { o, child, hooks, metrics, runtimeKind, manager } = w;
  // The cluster home's per-namespace caps come from a ConfigMap too, over the config file's (docs/admission.md).
  const limits = home.cluster ? new NamespaceLimitsConfigMap(home.cluster.kubeConfig, home.cluster.installNamespace, child('admission')) : undefined;
  if (limits) manager.add({ name: 'namespace limits', start: () => limits.start(), stop: () => limits.stop() });
  // Checkpoints are copied between two tasks of their agent, and restored before a fork's first.
  const holds = new CopyHolds();
  const checkpoints = new CheckpointController({
    ...s,
    informers: s.informers,
    runtime,
    holds,
    ...(m.turns ? { turns: m.turns } : {}),
    logger: child('checkpoint-controller'),
  });
  const restore = new CheckpointRestore({ agents: s.agents, checkpoints: s.checkpoints, runtime, holds });
  const agents = new AgentController({
    checkpoints: { restore, holds },
    agents: s.agents,
    informers: s.informers,
    events,
    runtime,
    hooks,
    metrics,
    logger: child('agent-controller'),
    taskUsage: m.usageMeter,
    ...(o.idleTimeoutMs !== undefined ? { idleTimeoutMs: o.idleTimeoutMs } : {}),
    admission: {
      // Pods are placed by the Kubernetes scheduler: --max-workers counts local workers only.
      ...(runtimeKind === 'local' ? { maxWorkers: o.maxWorkers ?? defaultMaxWorkers() } : {}),
      namespaceDefaults: { workers: o.namespaceMaxWorkers ?? 0, tasks: o.namespaceMaxTasks ?? 0 },
      limitsFor: (ns) => ({ ...o.namespaceLimits?.[ns], ...limits?.limitsFor(ns) }),
      startRate: o.startRate ?? 0,
    },
  });
  // An agent given a task in a full namespace is stored Queued by that write (docs/admission.md).
  s.admission.register(agentLine((a) => agents.waitForWorker(a)));
  // The model proxy reports retries and failures into the agent's task.
  m.controller.set(agents);
  s.runningSpend.of = (a) => spendOf(m.usageMeter.taskModels(a.metadata, a.metadata.uid));
  const budgets = new BudgetGuard({
    agents: s.agents,
    cache: s.informers.agents,
    budgetsOf: (ns) => s.informers.budgets.list(ns).map((b) => ({ name: b.metadata.name, spec: b.spec })),
    usage: m.usageMeter,
    tasks: agents,
    metrics,
    logger: child('budgets'),
  });
  m.budget.set(budgets);
  hooks.agentDeleted.push(async (agent) => budgets.forget(agent.metadata));
  const squads = new SquadController({
    squads: s.squads,
    agents: s.agents,
    informers: s.informers,
    cancel: (ns, name, reason) => cancelRunningTask(s.agents, ns, name, reason),
    logger: child('squad-controller'),
  });
  // Schedules fire on the leader only (leader.ts): several replicas never run one twice.
  const schedules = new ScheduleController({ schedules: s.schedules, agents: s.agents, informers: s.informers, logger: child('schedule-controller') });
  metrics.collectAgentsBy(async () => {
    const counts: Record<string, number> = Object.fromEntries(AGENT_PHASES.map((p) => [p, 0]));
    for (const a of s.informers.agents.list()) counts[a.status.status] = (counts[a.status.status] ?? 0) + 1;
    return counts;
  });
  const messages = new MessageDelivery({ agents: s.agents, cache: s.informers.agents, logger: child('message-delivery') });
  return { agents, squads, checkpoints, schedules, messages, webhooks: wireWebhooks(w, home, s, events) };
}
