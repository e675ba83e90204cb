// Where a Webhook may send (docs/triggers-and-webhooks.md): the connectors' rule, since a webhook
// URL, like a connector's, makes the server connect somewhere. Link-local, metadata and reserved
// addresses never; loopback and private ones only with --allow-private-connector-urls. Checked
// when written, and again by the sender's lookup at each connection.

import { invalid } from '../../api/errors.js';
import { WEBHOOK_KIND, type Webhook } from '../../api/webhook.js';
import type { AdmissionPlugin, Attributes } from './admission.js';

export function webhookUrl(egressRefusal: (url: string) => string | undefined): AdmissionPlugin {
  return {
    name: 'WebhookUrl',
    kinds: [WEBHOOK_KIND],
    operations: ['CREATE', 'UPDATE'],
    validate(a: Attributes) {
      const w = a.object as Webhook;
      const old = a.oldObject as Webhook | undefined;
      if (typeof w.spec?.url !== 'string' || old?.spec.url === w.spec.url) return;
      const why = egressRefusal(w.spec.url);
      if (why) throw invalid(WEBHOOK_KIND, a.name, [{ field: 'spec.url', message: `the server does not connect there: ${why}` }]);
    },
  };
}
