// The worker control channel endpoint. Workers authenticate with their per-agent bearer token
// before the upgrade; anything else gets 401 and never reaches the runtime's channel.

import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { CONTROL_PATH } from '../../api/worker-protocol.js';
import type { WorkerChannel } from '../../runtime/channel/hub.js';

const bearer = (h: string | undefined): string | undefined => (h?.startsWith('Bearer ') ? h.slice(7) : undefined);

export function workerChannelRoutes(channel: WorkerChannel) {
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
