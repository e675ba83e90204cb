// What checkpoints stand on, checked for every writer: a checkpoint names an agent that exists
// (and is not being deleted) when it is created, and an agent created `fromCheckpoint` names a
// checkpoint of its namespace that is Ready. After that each stands alone: a checkpoint outlives
// its agent, and a fork its checkpoint (docs/checkpoints.md).

import { AGENT_KIND, type Agent } from '../../api/agent.js';
import { type AgentCheckpoint, CHECKPOINT_KIND, fromCheckpointObjectName } from '../../api/checkpoint.js';
import { invalid } from '../../api/errors.js';
import type { AdmissionPlugin, Attributes, Reader } from './admission.js';

export function checkpointSources(agents: Reader<Agent>, checkpoints: Reader<AgentCheckpoint>): AdmissionPlugin {
  const validateCheckpoint = async (a: Attributes): Promise<void> => {
    const c = a.object as AgentCheckpoint;
    const agent = await agents.get(a.namespace, c.spec.agent);
    if (!agent || agent.metadata.deletionTimestamp) {
      throw invalid(CHECKPOINT_KIND, a.name, [{ field: 'spec.agent', message: `agent "${c.spec.agent}" not found in namespace "${a.namespace}"` }]);
    }
  };

  const validateAgent = async (a: Attributes): Promise<void> => {
    const from = (a.object as Agent).spec.fromCheckpoint;
    if (!from) return;
    const objectName = fromCheckpointObjectName(from);
    if (!objectName) return; // the schema's rule says what is wrong with it
    const c = await checkpoints.get(a.namespace, objectName);
    const field = 'spec.fromCheckpoint';
    if (!c || c.metadata.deletionTimestamp)
      throw invalid(AGENT_KIND, a.name, [{ field, message: `checkpoint "${from}" not found in namespace "${a.namespace}"` }]);
    if (c.status.phase !== 'Ready') {
      const why = c.status.phase === 'Pending' ? 'is not taken yet; wait until it is Ready' : `failed: ${c.status.message ?? ''}`;
      throw invalid(AGENT_KIND, a.name, [{ field, message: `checkpoint "${from}" ${why}` }]);
    }
  };

  return {
    name: 'CheckpointSources',
    kinds: [AGENT_KIND, CHECKPOINT_KIND],
    operations: ['CREATE'],
    async validate(a: Attributes) {
      if (a.kind === AGENT_KIND) await validateAgent(a);
      else await validateCheckpoint(a);
    },
  };
}
