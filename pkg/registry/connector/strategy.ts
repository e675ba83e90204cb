// Connector rules: defaults, field validation (JSON Schema plus the cross-field rules of
// connectorRuleCauses), and status handling. A connector has nothing to clean up on delete, so
// it carries no finalizer of its own: delete removes it at once unless a client's finalizer holds
// it (the service refuses it while agents use it).

import { authTypeOf, CONNECTOR_KIND, type Connector, connectorRuleCauses, connectorSpecSchema, refineAuthTypeCauses } from '../../api/connector.js';
import { API_VERSION } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields, orNone } from '../table.js';

export const connectorStrategy: Strategy<Connector> = {
  kind: CONNECTOR_KIND,
  specSchema: connectorSpecSchema,

  prepareForCreate(c) {
    c.apiVersion = API_VERSION;
    c.kind = CONNECTOR_KIND;
    defaultSpec(c);
    c.status = { phase: 'Unknown', message: 'not checked yet' };
  },

  prepareForUpdate(c, old) {
    c.status = structuredClone(old.status);
    defaultSpec(c);
    // What was checked no longer applies to a changed address or credential.
    const o = old.spec;
    const n = c.spec;
    if (
      n.url !== o.url ||
      n.authType !== o.authType ||
      n.headerName !== o.headerName ||
      n.authSecretName !== o.authSecretName ||
      n.authSecretKey !== o.authSecretKey
    ) {
      c.status = { phase: 'Unknown', message: 'changed; not checked yet' };
    }
  },

  validate(c) {
    return [
      ...validateObjectName(c.metadata.name, c.metadata.namespace),
      ...refineAuthTypeCauses(validateSchema(connectorSpecSchema, c.spec, 'spec'), c.spec.authType, 'spec'),
      ...connectorRuleCauses(c.spec, 'spec'),
    ];
  },

  validateUpdate() {
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('Service', 'Service kind label.'),
      column('URL', 'Address of the MCP server.'),
      column('Status', 'What the last check found: Unknown, Ready, Unreachable, Unauthorized, SecretMissing or Error.'),
      ageColumn,
      column('Tools', 'Tools the server listed at the last successful check.', 1, 'integer'),
      column('Message', 'What the last check found, in words.', 1),
    ],
    row: (c, now) => [
      c.metadata.name,
      orNone(c.spec.service),
      c.spec.url,
      c.status.phase,
      age(c.metadata, now),
      c.status.toolCount ?? null,
      orNone(c.status.message),
    ],
  },

  selectableFields: (c) => ({
    ...objectMetaFields(c.metadata),
    'spec.service': c.spec.service,
    'status.phase': c.status.phase,
  }),
};

/** Defaults of fields left out, on create and on every update. */
function defaultSpec(c: Connector): void {
  c.spec.service ??= '';
  c.spec.displayName ||= c.metadata.name;
  c.spec.authType = authTypeOf(c.spec.authType) ?? 'bearer';
  if (c.spec.authSecretName === '') delete c.spec.authSecretName;
  if (c.spec.authSecretKey === '') delete c.spec.authSecretKey;
}
