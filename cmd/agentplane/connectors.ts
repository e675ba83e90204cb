// Connectors and their secrets: the hook attaches an agent's connectors at dispatch (token read
// from the secret then); admission keeps the rules across objects, for every writer; the
// connector controller owns connector status (checks of connectors from every API).

import { ConnectorAccess } from '../../pkg/connector/access.js';
import { ConnectorChecker } from '../../pkg/connector/check.js';
import { urlEgressRefusal } from '../../pkg/connector/egress.js';
import { ConnectorController } from '../../pkg/controller/connector-controller.js';
import { readThrough, storageReader } from '../../pkg/registry/admission/admission.js';
import { connectorInUse } from '../../pkg/registry/admission/connector-in-use.js';
import { connectorSecretBinding } from '../../pkg/registry/admission/connector-secret-binding.js';
import { attachmentsExist } from '../../pkg/registry/admission/attachments-exist.js';
import { connectorsExist } from '../../pkg/registry/admission/connectors-exist.js';
import { squadMembership } from '../../pkg/registry/admission/squad-membership.js';
import { templateExists } from '../../pkg/registry/admission/template-exists.js';
import { ConnectorService } from '../../pkg/server/services/connector-service.js';
import { SecretService } from '../../pkg/server/services/secret-service.js';
import type { Home } from './homes.js';
import type { ModelSide } from './model.js';
import type { BuiltRuntime } from './runtimes.js';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';

export interface ConnectorParts {
  secrets: SecretService;
  connectors: ConnectorService;
  /** What the connector gateway uses: the secrets and the egress policy. */
  access: ConnectorAccess;
  /** Absent with `connectorChecks: false`; started by the leader (leader.ts). */
  controller?: ConnectorController;
}

export function wireConnectors({ o, child, hooks }: Wiring, home: Home, s: Storage, m: ModelSide, built: BuiltRuntime): ConnectorParts {
  const secretStore = home.secrets;
  const secrets = new SecretService(secretStore, child('secrets'));
  const access = new ConnectorAccess({ secrets: secretStore, allowPrivateUrls: o.allowPrivateConnectorUrls === true });
  const checker = new ConnectorChecker(s.connectors, access, child('connectors'));
  const connectorChecks = o.connectorChecks === false ? undefined : (o.connectorChecks ?? {});
  const controller = connectorChecks
    ? new ConnectorController({ informer: s.informers.connectors, checker, logger: child('connector-controller'), ...connectorChecks })
    : undefined;
  const connectors = new ConnectorService({
    connectors: s.connectors,
    agents: s.agents,
    checker,
    ...(controller ? { recheck: (ref) => controller.recheck(ref) } : {}),
    logger: child('connectors'),
    reads: s.reads.connectors,
  });
  secrets.onChange((ns, name) => controller?.secretChanged(ns, name));
  hooks.mcpServers.push((agent) => connectors.mcpServersFor(agent));
  hooks.agentDeleted.push((agent) => m.usageMeter.dropSeries(agent.metadata));
  const egress = { allowPrivate: o.allowPrivateConnectorUrls === true };
  s.admission.register(
    // First: a squad's embedded agents are checked before any member is claimed.
    templateExists(built.templateNames),
    connectorsExist(readThrough(s.informers.connectors, s.connectors)),
    attachmentsExist(readThrough(s.informers.skills, s.skills), readThrough(s.informers.memories, s.memories)),
    connectorInUse(storageReader(s.agents)),
    squadMembership(s.agents, readThrough(s.informers.connectors, s.connectors)),
    connectorSecretBinding({ secrets: secretStore, egressRefusal: (url) => urlEgressRefusal(url, egress), logger: child('admission') }),
  );
  return { secrets, connectors, access, ...(controller ? { controller } : {}) };
}
