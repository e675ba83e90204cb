// What checkpoints stand on, checked for every writer: a checkpoint names an agent that exists
// (and is not being deleted) when it is created, a member of the squad it names if any; an agent
// created `fromCheckpoint` names a checkpoint of its namespace that is Ready. After that each
// stands alone: a checkpoint outlives its agent, and a fork its checkpoint (docs/checkpoints.md).

import { AGENT_KIND, type Agent } from '../../api/agent.js';
import { type AgentCheckpoint, CHECKPOINT_KIND, fromCheckpointObjectName } from '../../api/checkpoint.js';
import { invalid } from '../../api/errors.js';
import { memberName, type Squad, SQUAD_KIND } from '../../api/squad.js';
import { memberNames } from '../squad/membership.js';
import type { AdmissionPlugin, Attributes, Reader } from './admission.js';

export function checkpointSources(agents: Reader<Agent>, checkpoints: Reader<AgentCheckpoint>, squads: Reader<Squad>): AdmissionPlugin {
  const validateCheckpoint = async (a: Attributes): Promise<void> => {
    const c = a.object as AgentCheckpoint;
    const agent = await agents.get(a.namespace, c.spec.agent);
    if (!agent || agent.metadata.deletionTimestamp) {
      throw invalid(CHECKPOINT_KIND, a.name, [{ field: 'spec.agent', message: `agent "${c.spec.agent}" not found in namespace "${a.namespace}"` }]);
    }
    if (c.spec.squad === undefined) return;
    const squad = await squads.get(a.namespace, c.spec.squad);
    if (!squad || !memberNames(squad).includes(c.spec.agent)) {
      const message = squad
        ? `agent "${c.spec.agent}" is not a member of squad "${c.spec.squad}"`
        : `squad "${c.spec.squad}" not found in namespace "${a.namespace}"`;
      throw invalid(CHECKPOINT_KIND, a.name, [{ field: 'spec.squad', message }]);
    }
  };

  /** Refuses a `fromCheckpoint` that names no Ready checkpoint of the namespace. */
  const checkSource = async (namespace: string, agent: string, from: string | undefined, field: string): Promise<void> => {
    const objectName = from && fromCheckpointObjectName(from);
    if (!objectName) return; // none, or malformed: the schema's rule says what is wrong with it
    const c = await checkpoints.get(namespace, objectName);
    if (!c || c.metadata.deletionTimestamp)
      throw invalid(AGENT_KIND, agent, [{ field, message: `checkpoint "${from}" not found in namespace "${namespace}"` }]);
    if (c.status.phase !== 'Ready') {
      const why = c.status.phase === 'Pending' ? 'is not taken yet; wait until it is Ready' : `failed: ${c.status.message ?? ''}`;
      throw invalid(AGENT_KIND, agent, [{ field, message: `checkpoint "${from}" ${why}` }]);
    }
  };

  const validateAgent = (a: Attributes): Promise<void> => checkSource(a.namespace, a.name, (a.object as Agent).spec.fromCheckpoint, 'spec.fromCheckpoint');

  /** A squad's new members are created later by the squad controller: their sources are checked now. */
  const validateSquad = async (a: Attributes): Promise<void> => {
    const before = new Set((a.oldObject as Squad | undefined)?.spec.members.map(memberName) ?? []);
    for (const m of (a.object as Squad).spec.members) {
      if ('spec' in m && !before.has(m.name)) await checkSource(a.namespace, m.name, m.spec.fromCheckpoint, 'fromCheckpoint');
    }
  };

  return {
    name: 'CheckpointSources',
    kinds: [AGENT_KIND, CHECKPOINT_KIND, SQUAD_KIND],
    operations: ['CREATE', 'UPDATE'],
    async validate(a: Attributes) {
      if (a.kind === SQUAD_KIND) return validateSquad(a);
      if (a.operation !== 'CREATE') return;
      if (a.kind === AGENT_KIND) await validateAgent(a);
      else await validateCheckpoint(a);
    },
  };
}
