// Triggers and Webhooks behind the REST mirror (/api/v1/triggers, /api/v1/webhooks;
// docs/triggers-and-webhooks.md): the generic kind service. Rules live in the strategies and
// the admission chain (a webhook's URL); a webhook's `agents` patched to null is removed (all
// agents of the namespace again).

import {
  TRIGGER_KIND,
  type Trigger,
  triggerPatchRequestSchema,
  triggerRequestSchema,
  type TriggerSpec,
  validateTriggerInstructions,
} from '../../api/trigger.js';
import { WEBHOOK_KIND, type Webhook, webhookPatchRequestSchema, webhookRequestSchema, type WebhookSpec } from '../../api/webhook.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { KindService } from './kind-service.js';

export const triggerService = (triggers: Registry<Trigger>, reads: ReadCache<Trigger>): KindService<TriggerSpec, Trigger> =>
  new KindService(
    {
      kind: TRIGGER_KIND,
      createSchema: triggerRequestSchema,
      patchSchema: triggerPatchRequestSchema,
      validateCreate: (spec) => validateTriggerInstructions(spec, 'instructions'),
    },
    triggers,
    reads,
  );

export const webhookService = (webhooks: Registry<Webhook>, reads: ReadCache<Webhook>): KindService<WebhookSpec, Webhook> =>
  new KindService({ kind: WEBHOOK_KIND, createSchema: webhookRequestSchema, patchSchema: webhookPatchRequestSchema, removable: ['agents'] }, webhooks, reads);
