// Triggers and webhooks (docs/triggers-and-webhooks.md): the webhook controller (started by the
// leader, leader.ts), its sender under the connectors' egress policy, and the admission rule for
// webhook URLs. The trigger hook route is mounted with the public API (public-api.ts).

import { guardedFetch, urlEgressRefusal } from '../../pkg/connector/egress.js';
import { WebhookController } from '../../pkg/controller/webhook-controller.js';
import type { WebhookSend } from '../../pkg/controller/webhook-delivery.js';
import { webhookUrl } from '../../pkg/registry/admission/webhook-url.js';
import type { EventLog } from '../../pkg/registry/event-log.js';
import type { Home } from './homes.js';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';

export function wireWebhooks({ o, child }: Wiring, home: Home, s: Storage, events: EventLog): WebhookController {
  const egress = { allowPrivate: o.allowPrivateConnectorUrls === true };
  s.admission.register(webhookUrl((url) => urlEgressRefusal(url, egress)));
  const fetch = guardedFetch(egress);
  const send: WebhookSend = async (url, init) => {
    const res = await fetch(url, { method: 'POST', headers: init.headers, body: init.body, signal: init.signal });
    await res.body?.cancel();
    return res.status;
  };
  return new WebhookController({
    webhooks: s.webhooks,
    informers: s.informers,
    events,
    secrets: home.secrets,
    send,
    logger: child('webhook-controller'),
  });
}
