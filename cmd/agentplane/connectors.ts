// Connectors and their secrets: the hook attaches an agent's connectors at dispatch (token read
// from the secret then); admission keeps the rules across objects, for every writer.

import { urlEgressRefusal } from '../../pkg/connector/egress.js';
import { readThrough, storageReader } from '../../pkg/registry/admission/admission.js';
import { connectorInUse } from '../../pkg/registry/admission/connector-in-use.js';
import { connectorSecretBinding } from '../../pkg/registry/admission/connector-secret-binding.js';
import { connectorsExist } from '../../pkg/registry/admission/connectors-exist.js';
import { squadMembership } from '../../pkg/registry/admission/squad-membership.js';
import { templateExists } from '../../pkg/registry/admission/template-exists.js';
import { ConnectorService } from '../../pkg/server/rest/connector-service.js';
import { SecretService } from '../../pkg/server/rest/secret-service.js';
import type { Home } from './homes.js';
import type { ModelSide } from './model.js';
import type { BuiltRuntime } from './runtimes.js';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';

export interface ConnectorParts {
  secrets: SecretService;
  connectors: ConnectorService;
}

export function wireConnectors({ o, child, hooks, manager }: Wiring, home: Home, s: Storage, m: ModelSide, built: BuiltRuntime): ConnectorParts {
  const secretStore = home.secrets;
  const secrets = new SecretService(secretStore, child('secrets'));
  const connectors = new ConnectorService({
    connectors: s.connectors,
    agents: s.agents,
    secrets: secretStore,
    logger: child('connectors'),
    allowPrivateUrls: o.allowPrivateConnectorUrls === true,
    reads: s.reads.connectors,
  });
  manager.onStop('connector checks', () => connectors.stop());
  secrets.onChange((ns, name) => connectors.secretChanged(ns, name));
  hooks.mcpServers.push((agent) => connectors.mcpServersFor(agent));
  hooks.agentDeleted.push((agent) => m.usageMeter.dropSeries(agent.metadata));
  const egress = { allowPrivate: o.allowPrivateConnectorUrls === true };
  s.admission.register(
    // First: a squad's embedded agents are checked before any member is claimed.
    templateExists(built.templateNames),
    connectorsExist(readThrough(s.informers.connectors, s.connectors)),
    connectorInUse(storageReader(s.agents)),
    squadMembership(s.agents, readThrough(s.informers.connectors, s.connectors)),
    connectorSecretBinding({ secrets: secretStore, egressRefusal: (url) => urlEgressRefusal(url, egress), logger: child('admission') }),
  );
  return { secrets, connectors };
}
