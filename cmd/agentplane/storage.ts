// Storage: one admission chain for every registry (the rules across objects, for every writer),
// and for each kind its registry over the home's store, the shared informer that controllers,
// admission and the APIs' reads use, and the APIs' read cache. The informers are the first
// runnable that starts.

import { queuePositions } from '../../pkg/api/agent-queue.js';
import type { Agent } from '../../pkg/api/agent.js';
import type { Budget } from '../../pkg/api/budget.js';
import { type RunningSpend, withBudgetStatus } from '../../pkg/api/budget-spend.js';
import type { AgentCheckpoint } from '../../pkg/api/checkpoint.js';
import type { Connector } from '../../pkg/api/connector.js';
import type { Schedule } from '../../pkg/api/schedule.js';
import type { Memory } from '../../pkg/api/memory.js';
import type { Skill } from '../../pkg/api/skill.js';
import type { Squad } from '../../pkg/api/squad.js';
import type { Trigger } from '../../pkg/api/trigger.js';
import type { Webhook } from '../../pkg/api/webhook.js';
import { AdmissionChain, readThrough, storageReader } from '../../pkg/registry/admission/admission.js';
import { checkpointSources } from '../../pkg/registry/admission/checkpoint-sources.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { budgetStrategy } from '../../pkg/registry/budget/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { checkpointStrategy } from '../../pkg/registry/checkpoint/strategy.js';
import { ReadCache } from '../../pkg/registry/cache/reads.js';
import { WatermarkedStore } from '../../pkg/registry/cache/watermark.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { scheduleStrategy } from '../../pkg/registry/schedule/strategy.js';
import { memoryStrategy } from '../../pkg/registry/memory/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import type { StoredObject } from '../../pkg/registry/store.js';
import type { Strategy } from '../../pkg/registry/strategy.js';
import { skillStrategy } from '../../pkg/registry/skill/strategy.js';
import { indexMembership } from '../../pkg/registry/squad/membership.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';
import { triggerStrategy } from '../../pkg/registry/trigger/strategy.js';
import { webhookStrategy } from '../../pkg/registry/webhook/strategy.js';
import type { Home } from './homes.js';
import type { KindInformers, KindReads } from '../../pkg/registry/kinds.js';
import type { Wiring } from './wiring.js';

export interface Storage {
  admission: AdmissionChain;
  agents: Registry<Agent>;
  squads: Registry<Squad>;
  connectors: Registry<Connector>;
  checkpoints: Registry<AgentCheckpoint>;
  budgets: Registry<Budget>;
  schedules: Registry<Schedule>;
  triggers: Registry<Trigger>;
  webhooks: Registry<Webhook>;
  skills: Registry<Skill>;
  memories: Registry<Memory>;
  informers: KindInformers;
  reads: KindReads;
  /** Set with the model side: the running tasks' spend, which Budgets' status counts too. */
  runningSpend: { of?: RunningSpend };
}

interface KindParts<T extends StoredObject> {
  registry: Registry<T>;
  informer: Informer<T>;
  reads: ReadCache<T>;
}

export function wireStorage({ o, child, metrics, manager }: Wiring, home: Home): Storage {
  const admission = new AdmissionChain();
  // kube-controller-manager's garbage collector serves the cluster home only (propagationPolicy).
  const regOpts = { garbageCollector: !!o.kubernetes };
  /**
   * One kind's parts: its registry over the home's store (which notes the newest write it
   * acknowledged: consistent reads from the cache wait for it), its shared informer, which the
   * registry's writes read first (pkg/registry/first-reads.ts), and what the APIs' get, list and
   * Table requests read (docs/aggregated-api.md "Reads"; with several replicas, leader election,
   * the others write too: consistent reads go to storage). `present` decorates what is read.
   */
  const kind = <T extends StoredObject>(name: string, strategy: Strategy<T>, present?: (items: T[]) => T[]): KindParts<T> => {
    const store = new WatermarkedStore(home.state.store<T>(name));
    const registry = new Registry<T>(store, strategy, admission, regOpts);
    const informer = new Informer(registry, child('informer'));
    registry.readFirstFrom(informer);
    const reads = new ReadCache(informer, registry, {
      written: () => store.written(),
      otherWriters: !!o.leaderElection,
      onRead: (source: string) => metrics.apiReads.inc({ kind: name, source }),
      ...(present ? { present } : {}),
    });
    return { registry, informer, reads };
  };
  const runningSpend: Storage['runningSpend'] = {};
  // Queue positions are numbered when read; each namespace's line is sorted once per change of the cache.
  const agentParts: KindParts<Agent> = kind(
    'Agent',
    agentStrategy,
    queuePositions(
      (ns) => agentParts.informer.list(ns),
      () => agentParts.informer.resourceVersion(),
    ),
  );
  const parts = {
    agents: agentParts,
    squads: kind('Squad', squadStrategy),
    connectors: kind('Connector', connectorStrategy),
    checkpoints: kind('AgentCheckpoint', checkpointStrategy),
    budgets: kind('Budget', budgetStrategy, (items: Budget[]) => withBudgetStatus(items, (ns) => agentParts.informer.list(ns), runningSpend.of)),
    schedules: kind('Schedule', scheduleStrategy),
    triggers: kind('Trigger', triggerStrategy),
    webhooks: kind('Webhook', webhookStrategy),
    skills: kind('Skill', skillStrategy),
    memories: kind('Memory', memoryStrategy),
  };
  type Kinds = typeof parts;
  const each = <K extends 'registry' | 'informer' | 'reads'>(part: K): { [P in keyof Kinds]: Kinds[P][K] } =>
    Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v[part]])) as unknown as { [P in keyof Kinds]: Kinds[P][K] };
  const registries = each('registry');
  const informers = each('informer');
  const { agents, squads, checkpoints } = registries;
  indexMembership(informers.agents, informers.squads);
  // Storage, not the cache, for checkpoints: one just taken is Ready there first.
  admission.register(checkpointSources(readThrough(informers.agents, agents), storageReader(checkpoints), readThrough(informers.squads, squads)));
  manager.add({
    name: 'informers',
    start: async () => void (await Promise.all(Object.values(informers).map((i) => i.start()))),
    stop: () => Object.values(informers).forEach((i) => i.stop()),
  });
  return { admission, ...registries, informers, reads: each('reads'), runningSpend };
}
