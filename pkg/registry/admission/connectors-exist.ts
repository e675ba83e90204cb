// An agent may only list connectors that exist in its namespace (create, and updates that change
// the list: an agent whose connector was force-deleted meanwhile keeps working until edited).

import type { Agent } from '../../api/agent.js';
import { AGENT_KIND } from '../../api/agent.js';
import type { Connector } from '../../api/connector.js';
import { type Cause, invalid } from '../../api/errors.js';
import type { AdmissionPlugin, Attributes, Reader } from './admission.js';

/** A cause for each listed connector missing from the namespace; `field` names list entry i. */
export async function missingConnectors(connectors: Reader<Connector>, namespace: string, list: string[], field: (i: number) => string): Promise<Cause[]> {
  const causes: Cause[] = [];
  for (const [i, name] of list.entries()) {
    if (!(await connectors.get(namespace, name))) causes.push({ field: field(i), message: `connector "${name}" not found in namespace "${namespace}"` });
  }
  return causes;
}

export function connectorsExist(connectors: Reader<Connector>): AdmissionPlugin {
  return {
    name: 'ConnectorsExist',
    kinds: [AGENT_KIND],
    operations: ['CREATE', 'UPDATE'],
    async validate(a: Attributes) {
      const agent = a.object as Agent;
      const old = a.oldObject as Agent | undefined;
      const list = agent.spec.connectors;
      if (old && JSON.stringify(old.spec.connectors) === JSON.stringify(list)) return;
      const causes = await missingConnectors(connectors, a.namespace, list, (i) => `spec.connectors[${i}]`);
      if (causes.length) throw invalid(AGENT_KIND, a.name, causes);
    },
  };
}
