// The kinds agentplane stores and serves, by their plural, for the places that hold one of
// something per kind (informers, read caches): adding a kind is adding it here.

import type { Agent } from '../api/agent.js';
import type { Budget } from '../api/budget.js';
import type { AgentCheckpoint } from '../api/checkpoint.js';
import type { Connector } from '../api/connector.js';
import type { Schedule } from '../api/schedule.js';
import type { Memory } from '../api/memory.js';
import type { Skill } from '../api/skill.js';
import type { Squad } from '../api/squad.js';
import type { Trigger } from '../api/trigger.js';
import type { Webhook } from '../api/webhook.js';
import type { Informer } from './cache/informer.js';
import type { ReadCache } from './cache/reads.js';

export interface ServedKinds {
  agents: Agent;
  squads: Squad;
  connectors: Connector;
  checkpoints: AgentCheckpoint;
  budgets: Budget;
  schedules: Schedule;
  triggers: Trigger;
  webhooks: Webhook;
  skills: Skill;
  memories: Memory;
}

/** Each kind's read cache (the APIs' gets, lists and Tables). */
export type KindReads = { [K in keyof ServedKinds]: ReadCache<ServedKinds[K]> };
/** Each kind's shared informer. */
export type KindInformers = { [K in keyof ServedKinds]: Informer<ServedKinds[K]> };
