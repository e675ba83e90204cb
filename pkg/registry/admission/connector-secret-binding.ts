// Where a connector may point (docs/security.md "Stored secrets and egress"): not inside the
// server's network unless the operator allows it, and only at a URL its secret is bound to. An
// unbound secret is bound here to the first connector URL that uses it; a bound one that does not
// cover the URL refuses the write (422). Senders check both again at the moment of sending.

import { CONNECTOR_KIND, type Connector } from '../../api/connector.js';
import { invalid, secretBindingMismatch } from '../../api/errors.js';
import { bindingPrefixOf, urlAllowedBy } from '../../api/url-prefix.js';
import type { Logger } from '../../observability/logger.js';
import type { SecretStore } from '../secrets.js';
import type { AdmissionPlugin, Attributes } from './admission.js';

export interface SecretBindingOptions {
  secrets: SecretStore;
  /** Why the server will not connect to `url` (egress policy), or undefined. */
  egressRefusal: (url: string) => string | undefined;
  logger: Logger;
}

export function connectorSecretBinding(o: SecretBindingOptions): AdmissionPlugin {
  return {
    name: 'ConnectorSecretBinding',
    kinds: [CONNECTOR_KIND],
    operations: ['CREATE', 'UPDATE'],
    async validate(a: Attributes) {
      const c = a.object as Connector;
      const old = a.oldObject as Connector | undefined;
      const { url, authSecretName: secretName } = c.spec;
      const urlChanged = !old || old.spec.url !== url;
      if (urlChanged) {
        const why = o.egressRefusal(url);
        if (why) throw invalid(CONNECTOR_KIND, a.name, [{ field: 'spec.url', message: `the server does not connect there: ${why}` }]);
      }
      if (!secretName || (!urlChanged && old?.spec.authSecretName === secretName)) return;
      const secret = await o.secrets.get(a.namespace, secretName);
      // A missing secret binds nothing: the connector stays SecretMissing, and a secret created
      // later must be bound by its writer or by a connector written after it.
      if (!secret) return;
      let allowed = secret.allowedUrls;
      if (!allowed.length) {
        const prefix = bindingPrefixOf(url);
        if (!prefix || a.dryRun) return;
        const bound = await o.secrets.bindIfUnbound(a.namespace, secretName, prefix);
        if (!bound) return;
        allowed = bound.allowedUrls;
        if (allowed.length === 1 && allowed[0] === prefix) {
          o.logger.info({ namespace: a.namespace, secret: secretName, connector: a.name, allowedUrls: allowed }, 'secret bound on first use');
        }
      }
      if (!urlAllowedBy(url, allowed)) {
        const message = `secret "${secretName}" may not be sent to ${url}: it is bound to ${allowed.join(', ')}; only a write of the secret (allowedUrls) can allow another URL`;
        throw secretBindingMismatch(`Connector "${a.name}" is refused: ${message}`, {
          kind: CONNECTOR_KIND,
          name: a.name,
          secret: secretName,
          url,
          allowedUrls: allowed,
          causes: [{ field: 'spec.url', message }],
        });
      }
    },
  };
}
