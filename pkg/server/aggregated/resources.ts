// The resources of agentplane.io/v1alpha1 as the aggregated API serves them: names for discovery,
// schemas for OpenAPI and the registry behind them. Every rule is the registry's: the resource's
// strategy and the admission plugins (pkg/registry/admission), the same for the REST mirror.

import { AGENT_KIND, type Agent, agentSpecSchema, agentStatusSchema } from '../../api/agent.js';
import { type Budget, BUDGET_KIND, budgetSpecSchema, budgetStatusSchema } from '../../api/budget.js';
import { type AgentCheckpoint, CHECKPOINT_KIND, checkpointSpecSchema, checkpointStatusSchema } from '../../api/checkpoint.js';
import { type Memory, MEMORY_KIND, memorySpecSchema, memoryStatusSchema } from '../../api/memory.js';
import { type Skill, SKILL_KIND, skillSpecSchema, skillStatusSchema } from '../../api/skill.js';
import { CONNECTOR_KIND, type Connector, connectorSpecSchema, connectorStatusSchema } from '../../api/connector.js';
import { type Schedule, SCHEDULE_KIND, scheduleSpecSchema, scheduleStatusSchema } from '../../api/schedule.js';
import { type Squad, SQUAD_KIND, squadSpecSchema, squadStatusSchema } from '../../api/squad.js';
import { type Trigger, TRIGGER_KIND, triggerSpecSchema, triggerStatusSchema } from '../../api/trigger.js';
import { type Webhook, WEBHOOK_KIND, webhookSpecSchema, webhookStatusSchema } from '../../api/webhook.js';
import type { AgentApprovals } from '../services/agent-approvals.js';
import type { AgentCompaction } from '../services/agent-compaction.js';
import type { AgentMessages } from '../services/agent-messages.js';
import type { AgentCosts } from '../services/agent-costs.js';
import type { AgentService } from '../services/agent-service.js';
import type { EventLog } from '../../registry/event-log.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { KindReads } from '../../registry/kinds.js';
import type { Registry } from '../../registry/registry.js';
import type { StoredObject } from '../../registry/store.js';

export interface AggregatedApiDeps {
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
  agentService: AgentService;
  compaction: AgentCompaction;
  messages: AgentMessages;
  approvals: AgentApprovals;
  costs: AgentCosts;
  events: EventLog;
  /** Where get, list and Table requests read (the informer caches, with resourceVersion rules). */
  reads: KindReads;
  /** Watch tuning; defaults suit production. */
  watch?: { bookmarkIntervalMs?: number };
}

export interface SubresourceDef {
  name: string;
  kind: string;
  verbs: string[];
}

export interface ResourceDef<T extends StoredObject = StoredObject> {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
  description: string;
  specSchema: object;
  /** Spec fields a client must set; the others have defaults (the stored schema requires all). */
  specRequired: string[];
  statusSchema: object;
  registry: Registry<T>;
  reads: ReadCache<T>;
  subresources: SubresourceDef[];
}

export const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function buildResources(d: AggregatedApiDeps): ResourceDef[] {
  return [
    agentResource(d),
    squadResource(d),
    connectorResource(d),
    checkpointResource(d),
    budgetResource(d),
    scheduleResource(d),
    triggerResource(d),
    webhookResource(d),
    skillResource(d),
    memoryResource(d),
  ] as unknown as ResourceDef[];
}

function agentResource(d: AggregatedApiDeps): ResourceDef<Agent> {
  return {
    plural: 'agents',
    singular: 'agent',
    kind: AGENT_KIND,
    listKind: 'AgentList',
    shortNames: ['ag'],
    categories: ['agentplane', 'all'],
    description:
      'An Agent is a long-lived worker that runs natural-language tasks with a coding-agent engine in its own persistent workspace. ' +
      'Creating one starts its first task (spec.instructions); changing spec.instructions assigns a new task.',
    specSchema: agentSpecSchema,
    specRequired: ['instructions'],
    statusSchema: agentStatusSchema,
    registry: d.agents,
    reads: d.reads.agents,
    subresources: [
      { name: 'approvals', kind: 'AgentApproval', verbs: ['create', 'get'] },
      { name: 'cancel', kind: 'Agent', verbs: ['create'] },
      { name: 'compact', kind: 'AgentCompaction', verbs: ['create'] },
      { name: 'cost', kind: 'AgentCost', verbs: ['get'] },
      { name: 'events', kind: 'AgentEventList', verbs: ['get'] },
      { name: 'log', kind: 'AgentEvent', verbs: ['get'] },
      { name: 'messages', kind: 'AgentMessage', verbs: ['create'] },
    ],
  };
}

function squadResource(d: AggregatedApiDeps): ResourceDef<Squad> {
  return {
    plural: 'squads',
    singular: 'squad',
    kind: SQUAD_KIND,
    listKind: 'SquadList',
    shortNames: ['sq'],
    categories: ['agentplane', 'all'],
    description:
      'A Squad groups two or more agents into one unit (one pod) that sleeps and wakes together. ' +
      'A member is a ref to an existing sleeping agent or a name with an embedded agent spec.',
    specSchema: squadSpecSchema,
    specRequired: ['members'],
    statusSchema: squadStatusSchema,
    registry: d.squads,
    reads: d.reads.squads,
    subresources: [],
  };
}

function connectorResource(d: AggregatedApiDeps): ResourceDef<Connector> {
  return {
    plural: 'connectors',
    singular: 'connector',
    kind: CONNECTOR_KIND,
    listKind: 'ConnectorList',
    shortNames: ['conn'],
    categories: ['agentplane'],
    description:
      'A Connector is a named reference to an external MCP tool server (Streamable HTTP), attached to agents by name; ' +
      'its credential is read from a Secret at task time.',
    specSchema: connectorSpecSchema,
    specRequired: ['url'],
    statusSchema: connectorStatusSchema,
    registry: d.connectors,
    reads: d.reads.connectors,
    subresources: [],
  };
}

function checkpointResource(d: AggregatedApiDeps): ResourceDef<AgentCheckpoint> {
  return {
    plural: 'agentcheckpoints',
    singular: 'agentcheckpoint',
    kind: CHECKPOINT_KIND,
    listKind: 'AgentCheckpointList',
    shortNames: ['agcp'],
    categories: ['agentplane'],
    description:
      'An AgentCheckpoint is a copy of an agent\'s workspace and engine session taken between two of its tasks, named "<agent>.<checkpoint>"; ' +
      'a new agent created with spec.fromCheckpoint "<agent>/<checkpoint>" starts with its files and conversation.',
    specSchema: checkpointSpecSchema,
    specRequired: ['agent'],
    statusSchema: checkpointStatusSchema,
    registry: d.checkpoints,
    reads: d.reads.checkpoints,
    subresources: [],
  };
}

function budgetResource(d: AggregatedApiDeps): ResourceDef<Budget> {
  return {
    plural: 'budgets',
    singular: 'budget',
    kind: BUDGET_KIND,
    listKind: 'BudgetList',
    shortNames: ['bud'],
    categories: ['agentplane'],
    description:
      'A Budget caps the model spend of every agent in its namespace together, per UTC day or month: the model proxy checks it before each model request, ' +
      'warns at 80% (a budget_warning event) and at 100% stops or pauses the task that asks (docs/budgets.md). Its status is computed on every read.',
    specSchema: budgetSpecSchema,
    specRequired: ['period', 'onExceed'],
    statusSchema: budgetStatusSchema,
    registry: d.budgets,
    reads: d.reads.budgets,
    subresources: [],
  };
}

function scheduleResource(d: AggregatedApiDeps): ResourceDef<Schedule> {
  return {
    plural: 'schedules',
    singular: 'schedule',
    kind: SCHEDULE_KIND,
    listKind: 'ScheduleList',
    shortNames: ['sched'],
    categories: ['agentplane', 'all'],
    description:
      'A Schedule gives an agent a task (spec.instructions) on a cron schedule, in the words of CronJob: concurrencyPolicy says what a run does when the agent is busy ' +
      '(Allow queues it behind the task, Forbid skips it, Replace cancels the task), startingDeadlineSeconds what a run missed during downtime does (docs/schedules.md). ' +
      'Create on schedules/trigger runs it now.',
    specSchema: scheduleSpecSchema,
    specRequired: ['agent', 'cron', 'instructions'],
    statusSchema: scheduleStatusSchema,
    registry: d.schedules,
    reads: d.reads.schedules,
    subresources: [{ name: 'trigger', kind: 'Schedule', verbs: ['create'] }],
  };
}

function triggerResource(d: AggregatedApiDeps): ResourceDef<Trigger> {
  return {
    plural: 'triggers',
    singular: 'trigger',
    kind: TRIGGER_KIND,
    listKind: 'TriggerList',
    shortNames: ['trg'],
    categories: ['agentplane'],
    description:
      'A Trigger is an inbound endpoint, POST /api/v1/triggers/<name>/hook?namespace=<ns>, that starts a task on spec.agent for each delivery signed with ' +
      "the secret spec.secretRef names (HMAC-SHA256 of the body; GitHub's headers by default); spec.instructions is a template filled from the payload, " +
      'and a replayed delivery id starts nothing (docs/triggers-and-webhooks.md).',
    specSchema: triggerSpecSchema,
    specRequired: ['agent', 'secretRef', 'instructions'],
    statusSchema: triggerStatusSchema,
    registry: d.triggers,
    reads: d.reads.triggers,
    subresources: [],
  };
}

function webhookResource(d: AggregatedApiDeps): ResourceDef<Webhook> {
  return {
    plural: 'webhooks',
    singular: 'webhook',
    kind: WEBHOOK_KIND,
    listKind: 'WebhookList',
    shortNames: ['wh'],
    categories: ['agentplane'],
    description:
      "A Webhook delivers the chosen event types (spec.eventTypes) of its namespace's agents (or of spec.agents) to spec.url, signed as Standard Webhooks " +
      'sign (webhook-id, webhook-timestamp, webhook-signature), retried with backoff, at least once and in order per agent (docs/triggers-and-webhooks.md).',
    specSchema: webhookSpecSchema,
    specRequired: ['url', 'eventTypes', 'secretRef'],
    statusSchema: webhookStatusSchema,
    registry: d.webhooks,
    reads: d.reads.webhooks,
    subresources: [],
  };
}

function skillResource(d: AggregatedApiDeps): ResourceDef<Skill> {
  return {
    plural: 'skills',
    singular: 'skill',
    kind: SKILL_KIND,
    listKind: 'SkillList',
    shortNames: ['sk'],
    categories: ['agentplane'],
    description:
      'A Skill is a named, reusable instruction pack: a SKILL.md (its frontmatter names and describes it) and optional files. Agents attach skills by name (spec.skills); ' +
      "at each task start they are written read-only into the agent's workspace and the engine loads them as its own skills (docs/skills-and-memories.md).",
    specSchema: skillSpecSchema,
    specRequired: ['files'],
    statusSchema: skillStatusSchema,
    registry: d.skills,
    reads: d.reads.skills,
    subresources: [],
  };
}

function memoryResource(d: AggregatedApiDeps): ResourceDef<Memory> {
  return {
    plural: 'memories',
    singular: 'memory',
    kind: MEMORY_KIND,
    listKind: 'MemoryList',
    shortNames: ['mem'],
    categories: ['agentplane'],
    description:
      'A Memory is named text that agents keep across tasks and share: attached by name (spec.memories), written by people or by an attached agent through its memory_write tool, ' +
      "and at each task start written read-only to the agent's .agentplane/memories/<name>.md (docs/skills-and-memories.md).",
    specSchema: memorySpecSchema,
    specRequired: ['text'],
    statusSchema: memoryStatusSchema,
    registry: d.memories,
    reads: d.reads.memories,
    subresources: [],
  };
}
