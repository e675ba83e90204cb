// Squad membership (docs/squads.md): a member added by ref names an existing agent that is
// asleep and in no other squad; one added with an embedded spec names an agent that does not
// exist yet (the squad controller creates it); a squad breaking up takes no new members.
//
// An added ref member is claimed in the same step: a conditional write of the agent that sets
// its squad label only while it is asleep and unclaimed. Storage's optimistic concurrency makes
// check and claim one atomic step, so two writers racing for one agent (two clients, two
// replicas) cannot both win. If the squad write fails after all, the claims are released.

import { type Agent, AGENT_KIND, agentTaskRequestSchema } from '../../api/agent.js';
import type { Connector } from '../../api/connector.js';
import { ApiError, conflict, invalid, notFound } from '../../api/errors.js';
import { claimOf, memberName, type Squad, SQUAD_KIND, SQUAD_LABEL, type SquadMember } from '../../api/squad.js';
import { validateSchema } from '../../api/validation.js';
import type { AdmissionPlugin, Attributes, Reader, Undo } from './admission.js';
import { missingConnectors } from './connectors-exist.js';

/** The agent writes a claim needs (the agents' Registry). */
export interface AgentWriter {
  get(namespace: string, name: string): Promise<Agent | undefined>;
  update(namespace: string, name: string, mutate: (a: Agent) => void): Promise<Agent>;
}

export function squadMembership(agents: AgentWriter, connectors: Reader<Connector>): AdmissionPlugin {
  /** Why `agent` may not join `squad`, or undefined. */
  const refusal = (agent: Agent | undefined, name: string, namespace: string, squad: string): ApiError | undefined => {
    if (!agent || agent.metadata.deletionTimestamp) return notFound(AGENT_KIND, name, namespace);
    const claim = claimOf(agent);
    if (claim && claim !== squad) return conflict(`agent "${name}" is already a member of squad "${claim}"`, { kind: AGENT_KIND, name });
    if (agent.status.status !== 'Sleeping') return conflict(`agent "${name}" must be asleep in order to team up`, { kind: AGENT_KIND, name });
    return undefined;
  };

  const checkEmbedded = async (namespace: string, m: Extract<SquadMember, { spec: unknown }>): Promise<void> => {
    if (await agents.get(namespace, m.name)) throw conflict(`agent "${m.name}" already exists; add it by ref instead`, { kind: AGENT_KIND, name: m.name });
    const causes = validateSchema(agentTaskRequestSchema, { name: m.name, ...m.spec });
    if (!causes.length) causes.push(...(await missingConnectors(connectors, namespace, m.spec.connectors ?? [], (i) => `connectors[${i}]`)));
    if (causes.length) throw invalid(AGENT_KIND, m.name, causes);
  };

  const claim = async (namespace: string, name: string, squad: string): Promise<Undo> => {
    await agents.update(namespace, name, (a) => {
      const why = refusal(a, name, namespace, squad);
      if (why) throw why;
      a.metadata.labels = { ...a.metadata.labels, [SQUAD_LABEL]: squad };
    });
    return () => release(agents, namespace, name, squad);
  };

  return {
    name: 'SquadMembership',
    kinds: [SQUAD_KIND],
    operations: ['CREATE', 'UPDATE'],
    async validate(a: Attributes) {
      const squad = a.object as Squad;
      const old = a.oldObject as Squad | undefined;
      const before = new Set(old ? old.spec.members.map(memberName) : []);
      const added = squad.spec.members.filter((m) => !before.has(memberName(m)));
      if (!added.length) return;
      if (old?.spec.breakUp) throw conflict(`squad "${a.name}" is breaking up and takes no new members`, { kind: SQUAD_KIND, name: a.name });
      const undos: Undo[] = [];
      const undo: Undo = async () => {
        for (const u of undos.splice(0)) await u();
      };
      try {
        for (const m of added) {
          if ('spec' in m) await checkEmbedded(a.namespace, m);
          else if (a.dryRun) {
            const why = refusal(await agents.get(a.namespace, m.ref.name), m.ref.name, a.namespace, a.name);
            if (why) throw why;
          } else undos.push(await claim(a.namespace, m.ref.name, a.name));
        }
      } catch (err) {
        await undo();
        throw err;
      }
      return undo;
    },
  };
}

/** Removes `squad`'s claim on the agent (no-op when it has none, or another squad's). */
export async function release(agents: AgentWriter, namespace: string, name: string, squad: string): Promise<void> {
  try {
    await agents.update(namespace, name, (a) => {
      if (claimOf(a) !== squad) return;
      const { [SQUAD_LABEL]: _, ...rest } = a.metadata.labels ?? {};
      a.metadata.labels = rest;
    });
  } catch (err) {
    if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
  }
}
