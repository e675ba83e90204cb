// An agent may only list connectors that exist in its namespace (create, and updates that change
// the list: an agent whose connector was force-deleted meanwhile keeps working until edited).

import type { Agent } from '../../api/agent.js';
import { AGENT_KIND } from '../../api/agent.js';
import type { Connector } from '../../api/connector.js';
import { type Cause, invalid } from '../../api/errors.js';
import type { AdmissionPlugin, Attributes, Reader } from './admission.js';

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
      const causes: Cause[] = [];
      for (const [i, name] of list.entries()) {
        if (!(await connectors.get(a.namespace, name))) {
          causes.push({ field: `spec.connectors[${i}]`, message: `connector "${name}" not found in namespace "${a.namespace}"` });
        }
      }
      if (causes.length) throw invalid(AGENT_KIND, a.name, causes);
    },
  };
}
