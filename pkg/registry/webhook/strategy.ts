// Webhook rules (docs/triggers-and-webhooks.md): the spec's fields; where the URL may point is
// an admission rule (the server's egress policy: cmd/agentplane/webhooks.ts). The status is the
// webhook controller's (a status write), so spec writes keep it.

import { API_VERSION } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { WEBHOOK_KIND, type Webhook, webhookSpecSchema, webhookStatusSchema } from '../../api/webhook.js';
import { TRIGGER_DEFAULTS } from '../../api/trigger.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields } from '../table.js';

export const webhookStrategy: Strategy<Webhook> = {
  kind: WEBHOOK_KIND,
  specSchema: webhookSpecSchema,

  prepareForCreate(w) {
    w.apiVersion = API_VERSION;
    w.kind = WEBHOOK_KIND;
    if (w.spec?.secretRef && typeof w.spec.secretRef === 'object') w.spec.secretRef.key ??= TRIGGER_DEFAULTS.secretKey;
    w.status = {};
  },

  prepareForUpdate(w, old) {
    if (w.spec?.secretRef && typeof w.spec.secretRef === 'object') w.spec.secretRef.key ??= TRIGGER_DEFAULTS.secretKey;
    w.status = old.status;
  },

  validateStatusUpdate(w) {
    return validateSchema(webhookStatusSchema, w.status, 'status');
  },

  validate(w) {
    return [...validateObjectName(w.metadata.name, w.metadata.namespace), ...validateSchema(webhookSpecSchema, w.spec, 'spec')];
  },

  validateUpdate() {
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('URL', 'Where the deliveries go.'),
      column('Events', 'The event types delivered.'),
      column('Delivered', 'Events the receiver acknowledged.', 0, 'integer'),
      column('Failed', 'Attempts that failed (and were retried).', 0, 'integer'),
      ageColumn,
      column('Agents', 'The agents whose events are sent (all of the namespace when empty).', 1),
      column('LastFailure', 'The latest failed attempt.', 1),
    ],
    row: (w, now) => {
      const f = w.status.lastFailures?.at(-1);
      return [
        w.metadata.name,
        w.spec.url,
        w.spec.eventTypes.join(','),
        w.status.delivered ?? 0,
        w.status.failed ?? 0,
        age(w.metadata, now),
        w.spec.agents?.join(',') || null,
        f ? `${f.time} ${f.agent}#${f.seq}: ${f.status || f.message || ''}` : null,
      ];
    },
  },

  selectableFields: (w) => ({ ...objectMetaFields(w.metadata) }),
};
