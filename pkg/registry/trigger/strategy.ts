// Trigger rules (docs/triggers-and-webhooks.md): GitHub's defaults for the signature and delivery
// headers, the template's placeholders checked on every write. The status is written by the hook
// endpoint only (a status write), so spec writes keep it.

import { API_VERSION } from '../../api/meta.js';
import { defaultTriggerSpec, TRIGGER_KIND, type Trigger, triggerSpecSchema, triggerStatusSchema, validateTriggerInstructions } from '../../api/trigger.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields } from '../table.js';

export const triggerStrategy: Strategy<Trigger> = {
  kind: TRIGGER_KIND,
  specSchema: triggerSpecSchema,

  prepareForCreate(t) {
    t.apiVersion = API_VERSION;
    t.kind = TRIGGER_KIND;
    if (t.spec && typeof t.spec === 'object') defaultTriggerSpec(t.spec);
    t.status = {};
  },

  prepareForUpdate(t, old) {
    if (t.spec && typeof t.spec === 'object') defaultTriggerSpec(t.spec);
    t.status = old.status;
  },

  validateStatusUpdate(t) {
    return validateSchema(triggerStatusSchema, t.status, 'status');
  },

  validate(t) {
    const causes = [...validateObjectName(t.metadata.name, t.metadata.namespace), ...validateSchema(triggerSpecSchema, t.spec, 'spec')];
    return causes.length ? causes : validateTriggerInstructions(t.spec, 'spec.instructions');
  },

  validateUpdate() {
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('Agent', 'The agent each accepted delivery gives a task.'),
      column('Last', 'The result of the latest delivery.'),
      column('Started', 'Deliveries that started a task.', 0, 'integer'),
      ageColumn,
      column('Secret', 'The secret (and key) that signs deliveries.', 1),
      column('Header', 'The signature header.', 1),
    ],
    row: (t, now) => [
      t.metadata.name,
      t.spec.agent,
      t.status.lastDelivery?.result ?? null,
      t.status.counts?.Started ?? 0,
      age(t.metadata, now),
      `${t.spec.secretRef.name}/${t.spec.secretRef.key}`,
      t.spec.signature.header,
    ],
  },

  selectableFields: (t) => ({ ...objectMetaFields(t.metadata), 'spec.agent': t.spec.agent }),
};
