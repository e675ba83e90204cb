// The worker control channel endpoint. Workers authenticate with their per-agent bearer token
// before the upgrade; anything else gets 401 and never reaches the runtime's channel.

import type { FastifyInstance } from 'fastify';
import type WebSocket from 'ws';
import { ApiError } from '../../api/errors.js';
import { CONTROL_PATH } from '../../api/worker-protocol.js';

/**
 * What the route needs of the runtime's channel (pkg/runtime/channel/hub.ts fits it), named here
 * so pkg/server imports nothing of pkg/runtime (`make lint`).
 */
export interface WorkerChannel<G> {
  /** The grant a bearer token belongs to; undefined for an unknown, revoked or missing token. */
  authenticate(token: string | undefined): G | undefined;
  /** Takes over the authenticated worker's WebSocket. */
  attach(ws: WebSocket, grant: G): void;
}

const bearer = (h: string | undefined): string | undefined => (h?.startsWith('Bearer ') ? h.slice(7) : undefined);

export function workerChannelRoutes<G>(channel: WorkerChannel<G>) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get(
      CONTROL_PATH,
      {
        websocket: true,
        preValidation: async (req) => {
          if (!channel.authenticate(bearer(req.headers.authorization))) {
            throw new ApiError('Unauthorized', 401, 'a valid worker token is required');
          }
        },
      },
      (socket, req) => {
        const grant = channel.authenticate(bearer(req.headers.authorization));
        if (!grant) return socket.close(4401, 'unauthorized');
        channel.attach(socket, grant);
      },
    );
  };
}
