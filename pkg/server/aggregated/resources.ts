// The resources of agentplane.io/v1alpha1 as the aggregated API serves them: names for discovery,
// schemas for OpenAPI, the registry (and so the strategy) behind them, and the few rules that
// span objects, which the REST mirror's services also apply (connectors exist, squad membership,
// connector in use). Everything else is the strategy's, through the generic Registry.

import { AGENT_KIND, type Agent, agentSpecSchema, agentStatusSchema } from '../../api/agent.js';
import { CONNECTOR_KIND, type Connector, connectorSpecSchema, connectorStatusSchema } from '../../api/connector.js';
import { conflict, invalid } from '../../api/errors.js';
import { memberName, memberShapeCauses, type Squad, SQUAD_KIND, type SquadMember, squadSpecSchema, squadStatusSchema } from '../../api/squad.js';
import type { AgentService } from '../../controller/agent-service.js';
import type { SquadService } from '../../controller/squad-service.js';
import type { Hooks } from '../../plugin/hooks.js';
import type { EventLog } from '../../registry/event-log.js';
import type { Registry } from '../../registry/registry.js';
import type { StoredObject } from '../../registry/store.js';

export interface AggregatedApiDeps {
  agents: Registry<Agent>;
  squads: Registry<Squad>;
  connectors: Registry<Connector>;
  agentService: AgentService;
  events: EventLog;
  /**
   * Optional, as the REST mirror uses them: `validateAgentSpec` (the connectors an agent lists
   * exist) before agent writes, `notifyLifecycleRequested` after a write that changed
   * `spec.lifecycle`. Without them those checks and actions are skipped.
   */
  hooks?: Pick<Hooks, 'validateAgentSpec' | 'notifyLifecycleRequested'>;
  /**
   * Optional: squad membership rules (a ref'd agent exists, is asleep and in no other squad) for
   * members a write adds, checked and written under the service's per-namespace lock.
   */
  squadService?: Pick<SquadService, 'membership' | 'checkJoin'>;
  /**
   * Optional: the connector rules across objects (ConnectorService.admit, the one the REST
   * mirror applies): the URL is one the server may reach and the secret is bound to it.
   */
  admitConnector?: (c: Connector, old: Connector | undefined, opts: { dryRun?: boolean; root?: string }) => Promise<void>;
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
  subresources: SubresourceDef[];
  /** Defaults this API applies to a new object before the strategy's (an agent's first task). */
  createDefaults?(obj: T): void;
  /** Rules across objects, before a create (`old` undefined) or an update; throws to refuse. */
  admit?(obj: T, old: T | undefined, opts: { dryRun: boolean }): Promise<void>;
  /** Rules across objects before a delete; throws to refuse. */
  admitDelete?(obj: T): Promise<void>;
  /** Runs a write under the resource's lock, if it has one. */
  serialize?<R>(namespace: string, fn: () => Promise<R>): Promise<R>;
  /** After an update was stored. */
  afterUpdate?(obj: T, old: T): Promise<void>;
}

export const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function buildResources(d: AggregatedApiDeps): ResourceDef[] {
  return [agentResource(d), squadResource(d), connectorResource(d)] as unknown as ResourceDef[];
}

function agentResource(d: AggregatedApiDeps): ResourceDef<Agent> {
  const checkConnectors = async (a: Agent, old: Agent | undefined): Promise<void> => {
    const list = a.spec?.connectors;
    if (!d.hooks || !Array.isArray(list) || !list.every((c) => typeof c === 'string')) return;
    if (old && JSON.stringify(old.spec.connectors) === JSON.stringify(list)) return;
    const causes = await d.hooks.validateAgentSpec(a.metadata.namespace, { connectors: list });
    if (causes.length) throw invalid(AGENT_KIND, a.metadata.name, causes.map((c) => ({ ...c, field: `spec.${c.field}` })));
  };
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
    subresources: [
      { name: 'cancel', kind: 'Agent', verbs: ['create'] },
      { name: 'events', kind: 'AgentEventList', verbs: ['get'] },
      { name: 'log', kind: 'AgentEvent', verbs: ['get'] },
    ],
    // Through this API an agent starts working when created, as POST /api/v1/agents does.
    createDefaults: (a) => {
      a.spec.task ??= 1;
    },
    admit: checkConnectors,
    afterUpdate: async (a, old) => {
      if (d.hooks && a.spec.lifecycle !== old.spec.lifecycle) await d.hooks.notifyLifecycleRequested(a, old);
    },
  };
}

function squadResource(d: AggregatedApiDeps): ResourceDef<Squad> {
  const svc = d.squadService;
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
    subresources: [],
    ...(svc
      ? {
          serialize: <R>(namespace: string, fn: () => Promise<R>) => svc.membership.run(namespace, fn),
          admit: async (s: Squad, old: Squad | undefined) => {
            const members = s.spec?.members;
            if (!Array.isArray(members)) return; // the strategy refuses it
            const before = new Set(old && Array.isArray(old.spec.members) ? old.spec.members.map(memberName) : []);
            const added = members.filter((m, i) => wellFormed(m, i, s.metadata.namespace) && !before.has(memberName(m)));
            if (added.length && old?.spec.breakUp) {
              throw conflict(`squad "${s.metadata.name}" is breaking up and takes no new members`, { kind: SQUAD_KIND, name: s.metadata.name });
            }
            for (const m of added) await svc.checkJoin(s.metadata.namespace, m);
          },
        }
      : {}),
  };
}

/** A member the schema accepts (the strategy reports the others). */
const wellFormed = (m: unknown, i: number, namespace: string): m is SquadMember =>
  !!m &&
  typeof m === 'object' &&
  memberShapeCauses(m, `spec.members[${i}]`, namespace).length === 0 &&
  typeof memberName(m as SquadMember) === 'string' &&
  (!('spec' in m) || (!!(m as { spec: unknown }).spec && typeof (m as { spec: unknown }).spec === 'object'));

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
    subresources: [],
    ...(d.admitConnector ? { admit: (c: Connector, old: Connector | undefined, o: { dryRun: boolean }) => d.admitConnector!(c, old, { dryRun: o.dryRun, root: 'spec' }) } : {}),
    // As DELETE /api/v1/connectors/:name without force: refused while agents use it.
    admitDelete: async (c) => {
      const { items } = await d.agents.list({ namespace: c.metadata.namespace });
      const users = items.filter((a) => !a.metadata.deletionTimestamp && a.spec.connectors.includes(c.metadata.name)).map((a) => a.metadata.name);
      if (users.length) {
        const list = users.map((u) => `"${u}"`).join(', ');
        throw conflict(`connector "${c.metadata.name}" is attached to agent${users.length > 1 ? 's' : ''} ${list}; detach it from them first`, {
          kind: CONNECTOR_KIND,
          name: c.metadata.name,
        });
      }
    },
  };
}
