// A connector that agents list cannot be deleted: they would lose its tools silently. Detach it
// from them first (the REST mirror's `?force=true` does that, then deletes).

import type { Agent } from '../../api/agent.js';
import { CONNECTOR_KIND } from '../../api/connector.js';
import { conflict } from '../../api/errors.js';
import type { AdmissionPlugin, Attributes, Reader } from './admission.js';

/** The live agents of a namespace that list the connector. */
export async function connectorUsers(agents: Reader<Agent>, namespace: string, connector: string): Promise<string[]> {
  return (await agents.list(namespace)).filter((a) => !a.metadata.deletionTimestamp && a.spec.connectors.includes(connector)).map((a) => a.metadata.name);
}

export function connectorInUse(agents: Reader<Agent>): AdmissionPlugin {
  return {
    name: 'ConnectorInUse',
    kinds: [CONNECTOR_KIND],
    operations: ['DELETE'],
    async validate(a: Attributes) {
      const users = await connectorUsers(agents, a.namespace, a.name);
      if (!users.length) return;
      const list = users.map((u) => `"${u}"`).join(', ');
      throw conflict(
        `connector "${a.name}" is attached to agent${users.length > 1 ? 's' : ''} ${list}; detach it from them first (or delete with ?force=true)`,
        {
          kind: CONNECTOR_KIND,
          name: a.name,
        },
      );
    },
  };
}
