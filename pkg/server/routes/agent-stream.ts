// Live events over WebSocket: /api/v1/agents/:name/ws[?since=<seq>].
// Replay from history, then live, each event once (event-follow.ts). Without `since`, the replay
// starts at the current task's first event: a client that connects right after POST sees the
// whole task. When the agent is deleted (marked for deletion, gone, or replaced by a new agent of
// its name) the socket closes with 4410 "agent deleted" (AGENT_DELETED_CLOSE).

import type { FastifyInstance } from 'fastify';
import type WebSocket from 'ws';
import type { AgentService } from '../rest/agent-service.js';
import type { Metrics } from '../../observability/metrics.js';
import type { EventLog } from '../../registry/event-log.js';
import { AGENT_DELETED_CLOSE, followEvents } from '../event-follow.js';
import { intParam, namespaceOf, type Query } from '../params.js';

const PING_MS = 30_000;

export function agentStreamRoutes(service: AgentService, events: EventLog, metrics: Metrics) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Params: { name: string } }>(
      '/api/v1/agents/:name/ws',
      {
        websocket: true,
        // Runs before the upgrade, so a bad request gets a plain HTTP error, not a closed socket.
        preValidation: async (req) => {
          const q = req.query as Query;
          await service.get(namespaceOf(q), req.params.name);
          intParam(q, 'since', { min: 0 });
        },
      },
      async (socket, req) => {
        const q = req.query as Query;
        const agent = await service.get(namespaceOf(q), req.params.name).catch(() => undefined);
        if (!agent) return socket.close(4404, 'agent not found');
        metrics.wsClients.inc();

        const since = intParam(q, 'since', { min: 0 });
        const following = followEvents(
          events,
          agent,
          (ev) => {
            if (socket.readyState === 1) socket.send(JSON.stringify(ev));
          },
          since !== undefined ? { since } : {},
        );
        const ping = setInterval(() => socket.ping(), PING_MS).unref();
        const unwatch = service.onGone(agent, () => {
          following.stop();
          closeWith(socket, AGENT_DELETED_CLOSE.code, AGENT_DELETED_CLOSE.reason);
        });
        socket.on('close', () => {
          unwatch();
          following.stop();
          clearInterval(ping);
          metrics.wsClients.dec();
        });
        socket.on('message', () => undefined); // clients have nothing to say; ignore

        try {
          await following.replayed;
        } catch (err) {
          req.log.error({ err }, 'event replay failed');
          closeWith(socket, 1011, 'event replay failed');
        }
      },
    );
  };
}

const closeWith = (socket: WebSocket, code: number, reason: string): void => socket.close(code, reason);
