// Live events over WebSocket: /api/v1/agents/:name/ws[?since=<seq>].
// Subscribe first, then replay history, then go live, dropping anything already sent, so a
// client never misses an event nor sees one twice. Without `since`, the replay starts at the
// current task's first event: a client that connects right after POST sees the whole task.

import type { FastifyInstance } from 'fastify';
import type WebSocket from 'ws';
import type { AgentEvent } from '../../api/event.js';
import type { AgentService } from '../../controller/agent-service.js';
import { streamOf } from '../../controller/agent-controller.js';
import type { Metrics } from '../../observability/metrics.js';
import type { EventLog } from '../../registry/event-log.js';
import { intParam, namespaceOf, type Query } from '../params.js';

const REPLAY_PAGE = 500;
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
        const stream = streamOf(agent);
        metrics.wsClients.inc();

        let lastSent = 0;
        let live = false;
        const pending: AgentEvent[] = [];
        const send = (ev: AgentEvent): void => {
          if (ev.seq <= lastSent || socket.readyState !== 1) return;
          socket.send(JSON.stringify(ev));
          lastSent = ev.seq;
        };
        const unsubscribe = events.subscribe(stream, (ev) => (live ? send(ev) : pending.push(ev)));
        const ping = setInterval(() => socket.ping(), PING_MS).unref();
        const cleanup = (): void => {
          unsubscribe();
          clearInterval(ping);
          metrics.wsClients.dec();
        };
        socket.on('close', cleanup);
        socket.on('message', () => undefined); // clients have nothing to say; ignore

        try {
          const since = intParam(q, 'since', { min: 0 });
          let from = since;
          if (from === undefined) {
            const start = await events.taskStart(stream, agent.spec.task);
            from = start !== undefined ? start - 1 : await events.lastSeq(stream);
          }
          lastSent = from;
          for (;;) {
            const page = await events.since(stream, lastSent, REPLAY_PAGE);
            page.forEach(send);
            if (page.length < REPLAY_PAGE) break;
          }
          pending.splice(0).forEach(send);
          live = true;
        } catch (err) {
          req.log.error({ err }, 'event replay failed');
          closeWith(socket, 1011, 'event replay failed');
        }
      },
    );
  };
}

const closeWith = (socket: WebSocket, code: number, reason: string): void => socket.close(code, reason);
