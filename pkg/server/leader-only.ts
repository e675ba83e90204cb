// The worker listener of a replica that does not lead: workers are served by the leader only,
// since the leader's runtime holds their credentials and dispatches their tasks
// (docs/high-availability.md "Workers"). Anything else is told to try again: a worker's channel
// client retries at once, and through the Service it reaches the leader.

import type { FastifyInstance } from 'fastify';
import { ApiError } from '../api/errors.js';

export function installLeaderOnly(app: FastifyInstance, leading: () => boolean): void {
  app.addHook('onRequest', async (_req, reply) => {
    if (leading()) return;
    void reply.header('retry-after', '1');
    throw new ApiError(
      'ServiceUnavailable',
      503,
      'this replica does not lead: workers are served by the leader replica; retry (through the agentplane-workers Service)',
    );
  });
}
