// Storage: one admission chain for every registry (the rules across objects, for every writer),
// the registries over the home's stores, and the shared informers that controllers, admission and
// the APIs' reads use. The informers are the first runnable that starts.

import { withQueuePositions } from '../../pkg/api/agent-queue.js';
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

export function wireStorage({ o, child, metrics, manager }: Wiring, home: Home): Storage {
  const admission = new AdmissionChain();
  // Each store notes the newest write it acknowledged: consistent reads from the caches wait for it.
  const stores = {
    agents: new WatermarkedStore(home.state.store<Agent>('Agent')),
    squads: new WatermarkedStore(home.state.store<Squad>('Squad')),
    connectors: new WatermarkedStore(home.state.store<Connector>('Connector')),
    checkpoints: new WatermarkedStore(home.state.store<AgentCheckpoint>('AgentCheckpoint')),
    budgets: new WatermarkedStore(home.state.store<Budget>('Budget')),
    schedules: new WatermarkedStore(home.state.store<Schedule>('Schedule')),
    triggers: new WatermarkedStore(home.state.store<Trigger>('Trigger')),
    webhooks: new WatermarkedStore(home.state.store<Webhook>('Webhook')),
    skills: new WatermarkedStore(home.state.store<Skill>('Skill')),
    memories: new WatermarkedStore(home.state.store<Memory>('Memory')),
  };
  // kube-controller-manager's garbage collector serves the cluster home only (propagationPolicy).
  const regOpts = { garbageCollector: !!o.kubernetes };
  const agents = new Registry<Agent>(stores.agents, agentStrategy, admission, regOpts);
  const squads = new Registry<Squad>(stores.squads, squadStrategy, admission, regOpts);
  const connectors = new Registry<Connector>(stores.connectors, connectorStrategy, admission, regOpts);
  const checkpoints = new Registry<AgentCheckpoint>(stores.checkpoints, checkpointStrategy, admission, regOpts);
  const budgets = new Registry<Budget>(stores.budgets, budgetStrategy, admission, regOpts);
  const schedules = new Registry<Schedule>(stores.schedules, scheduleStrategy, admission, regOpts);
  const triggers = new Registry<Trigger>(stores.triggers, triggerStrategy, admission, regOpts);
  const webhooks = new Registry<Webhook>(stores.webhooks, webhookStrategy, admission, regOpts);
  const skills = new Registry<Skill>(stores.skills, skillStrategy, admission, regOpts);
  const memories = new Registry<Memory>(stores.memories, memoryStrategy, admission, regOpts);
  const informers = {
    agents: new Informer(agents, child('informer')),
    squads: new Informer(squads, child('informer')),
    connectors: new Informer(connectors, child('informer')),
    checkpoints: new Informer(checkpoints, child('informer')),
    budgets: new Informer(budgets, child('informer')),
    schedules: new Informer(schedules, child('informer')),
    triggers: new Informer(triggers, child('informer')),
    webhooks: new Informer(webhooks, child('informer')),
    skills: new Informer(skills, child('informer')),
    memories: new Informer(memories, child('informer')),
  };
  // Writes read the caches first (pkg/registry/first-reads.ts).
  agents.readFirstFrom(informers.agents);
  squads.readFirstFrom(informers.squads);
  connectors.readFirstFrom(informers.connectors);
  checkpoints.readFirstFrom(informers.checkpoints);
  budgets.readFirstFrom(informers.budgets);
  schedules.readFirstFrom(informers.schedules);
  triggers.readFirstFrom(informers.triggers);
  webhooks.readFirstFrom(informers.webhooks);
  skills.readFirstFrom(informers.skills);
  memories.readFirstFrom(informers.memories);
  const runningSpend: Storage['runningSpend'] = {};
  // What the APIs' get, list and Table requests read (docs/aggregated-api.md "Reads"). With
  // several replicas (leader election) the others write too: consistent reads go to storage.
  const readOpts = (kind: string, written: () => number) => ({
    written,
    otherWriters: !!o.leaderElection,
    onRead: (source: string) => metrics.apiReads.inc({ kind, source }),
  });
  const plain = <T extends StoredObject>(kind: string, i: Informer<T>, r: Registry<T>, st: WatermarkedStore<T>): ReadCache<T> =>
    new ReadCache(
      i,
      r,
      readOpts(kind, () => st.written()),
    );
  const reads = {
    agents: new ReadCache(informers.agents, agents, {
      ...readOpts('Agent', () => stores.agents.written()),
      present: (items: Agent[]) => withQueuePositions(items, (ns) => informers.agents.list(ns)),
    }),
    squads: plain('Squad', informers.squads, squads, stores.squads),
    connectors: plain('Connector', informers.connectors, connectors, stores.connectors),
    checkpoints: plain('AgentCheckpoint', informers.checkpoints, checkpoints, stores.checkpoints),
    budgets: new ReadCache(informers.budgets, budgets, {
      ...readOpts('Budget', () => stores.budgets.written()),
      present: (items: Budget[]) => withBudgetStatus(items, (ns) => informers.agents.list(ns), runningSpend.of),
    }),
    schedules: plain('Schedule', informers.schedules, schedules, stores.schedules),
    triggers: plain('Trigger', informers.triggers, triggers, stores.triggers),
    webhooks: plain('Webhook', informers.webhooks, webhooks, stores.webhooks),
    skills: plain('Skill', informers.skills, skills, stores.skills),
    memories: plain('Memory', informers.memories, memories, stores.memories),
  };
  indexMembership(informers.agents, informers.squads);
  // Storage, not the cache, for checkpoints: one just taken is Ready there first.
  admission.register(checkpointSources(readThrough(informers.agents, agents), storageReader(checkpoints), readThrough(informers.squads, squads)));
  manager.add({
    name: 'informers',
    start: async () => void (await Promise.all(Object.values(informers).map((i) => i.start()))),
    stop: () => Object.values(informers).forEach((i) => i.stop()),
  });
  return { admission, agents, squads, connectors, checkpoints, budgets, schedules, triggers, webhooks, skills, memories, informers, reads, runningSpend };
}
