// POST /api/v1/triggers/:name/hook (docs/triggers-and-webhooks.md): the one route the auth
// filter lets through without a bearer token (isTriggerHook in auth/filter.ts), because the
// service authenticates it by the body's HMAC signature. The signature is over the bytes the
// sender sent, so this route's JSON bodies are kept raw (its own parser, in this plugin's scope
// only) and parsed by the service once the signature holds. Body size limits are the API's.

import type { FastifyInstance } from 'fastify';
import { namespaceOf, type Query } from '../params.js';
import type { TriggerHooks } from '../services/trigger-hooks.js';

/** A body kept as the sender's bytes. */
class RawBody {
  constructor(readonly bytes: Buffer) {}
}

export function triggerHookRoutes(hooks: TriggerHooks) {
  return async (app: FastifyInstance): Promise<void> => {
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, new RawBody(body as Buffer)));

    app.post<{ Params: { name: string } }>('/api/v1/triggers/:name/hook', async (req, reply) => {
      const raw = req.body instanceof RawBody ? req.body.bytes : Buffer.alloc(0);
      const a = await hooks.deliver(namespaceOf(req.query as Query), req.params.name, req.headers, raw);
      return reply.status(a.status).send(a.body);
    });
  };
}
