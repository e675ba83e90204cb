// Connector rules: defaults, field validation (JSON Schema plus the cross-field rules of
// connectorRuleCauses), and status handling. A connector has nothing to clean up on delete, so
// it is not finalized: delete removes it at once (the service refuses it while agents use it).

import { CONNECTOR_KIND, type Connector, connectorRuleCauses, connectorSpecSchema } from '../../api/connector.js';
import { API_VERSION } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';

export const connectorStrategy: Strategy<Connector> = {
  kind: CONNECTOR_KIND,
  finalized: false,

  prepareForCreate(c) {
    c.apiVersion = API_VERSION;
    c.kind = CONNECTOR_KIND;
    c.spec.service ??= '';
    c.spec.displayName ||= c.metadata.name;
    c.spec.authType ??= 'bearer';
    if (c.spec.authSecretName === '') delete c.spec.authSecretName;
    if (c.spec.authSecretKey === '') delete c.spec.authSecretKey;
    c.status = { phase: 'Unknown', message: 'not checked yet' };
  },

  prepareForUpdate(c, old) {
    c.status = structuredClone(old.status);
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
      ...validateSchema(connectorSpecSchema, c.spec, 'spec'),
      ...connectorRuleCauses(c.spec, 'spec'),
    ];
  },

  validateUpdate() {
    return [];
  },
};
