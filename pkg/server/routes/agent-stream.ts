// Live events over WebSocket: /api/v1/agents/:name/ws[?since=<seq>].
// Replay from history, then live, each event once (event-follow.ts). Without `since`, the replay
// starts at the current task's first event: a client that connects right after POST sees the
// whole task. When the agent is deleted (marked for deletion, gone, or replaced by a new agent of
// its name) the socket closes with 4410 "agent deleted" (AGENT_DELETED_CLOSE).
//
// At most `maxClientsPerAgent` sockets per agent (DEFAULT_WS_CLIENTS_PER_AGENT). One more is
// refused before the upgrade with HTTP 429 TooManyRequests in the REST error body, as every
// other refusal of this route is: WebSocket clients report a handshake's HTTP status and the
// client never takes it for a stream that opened and then ended. Two upgrades racing for the last
// place both pass that check; the later one is closed at once with 4429 "too many subscribers"
// (TOO_MANY_SUBSCRIBERS_CLOSE).
//
// When the token the socket was opened with is revoked (removed from the token file, or given
// another scope, on a reload; an OIDC token at its expiry) the socket closes with 4401 and the
// reason "token revoked" or "token expired" (REVOKED_CLOSE_CODE): no event after that reaches it.
//
// A subscriber that does not read fast enough (more than SUBSCRIBER_BUFFER_BYTES waiting for it)
// is closed with 4008 "fell behind, resume with since=<seq>", the last event sent to it; it never
// holds up the agent or the other subscribers (event-follow.ts "Back-pressure").

import type { FastifyInstance } from 'fastify';
import type WebSocket from 'ws';
import type { AgentService } from '../services/agent-service.js';
import type { Metrics } from '../../observability/metrics.js';
import type { EventLog } from '../../registry/event-log.js';
import { ApiError } from '../../api/errors.js';
import type { AgentEvent } from '../../api/event.js';
import { AGENT_DELETED_CLOSE, FELL_BEHIND_CLOSE_CODE, fellBehindReason, followEvents } from '../event-follow.js';
import { intParam, namespaceOf, type Query, refuseQuery } from '../params.js';

/**
 * komputer-ai's consumer groups (`group=`: each event to one socket of the group) are not
 * served: every socket gets every event, so a group's members would each handle each event.
 */
const PEER_STREAM_PARAMS = { group: 'every socket receives every event (no consumer groups); open one socket per consumer that should see them' };
import { REVOKED_CLOSE_CODE } from '../auth/revocation.js';

const PING_MS = 30_000;

/** Default cap on live event sockets per agent (`--ws-clients-per-agent`). */
export const DEFAULT_WS_CLIENTS_PER_AGENT = 100;
export const TOO_MANY_SUBSCRIBERS_CLOSE = { code: 4429, reason: 'too many subscribers' } as const;
/**
 * Bytes a subscriber may leave unread (the socket's bufferedAmount) before it has fallen behind
 * and is closed with 4008 "fell behind, resume with since=<seq>" (event-follow.ts).
 */
export const SUBSCRIBER_BUFFER_BYTES = 1 << 20;

/**
 * An event's JSON, made once however many subscribers it goes to: the event log hands one event
 * to all of them in one go, so remembering the last one is enough (a WeakMap entry per event
 * costs the garbage collector more than the serialization it saves).
 */
let lastEvent: AgentEvent | undefined;
let lastJson = '';
const eventJson = (ev: AgentEvent): string => {
  if (ev !== lastEvent) {
    lastJson = JSON.stringify(ev);
    lastEvent = ev;
  }
  return lastJson;
};

export interface AgentStreamOptions {
  /** Sockets one agent may have at once; default DEFAULT_WS_CLIENTS_PER_AGENT. */
  maxClientsPerAgent?: number;
}

const tooManySubscribers = (name: string, max: number): ApiError =>
  new ApiError('TooManyRequests', 429, `agent "${name}" already has ${max} event subscribers, the limit; close one and connect again`, { kind: 'Agent', name });

export function agentStreamRoutes(service: AgentService, events: EventLog, metrics: Metrics, opts: AgentStreamOptions = {}) {
  const max = opts.maxClientsPerAgent ?? DEFAULT_WS_CLIENTS_PER_AGENT;
  /** Open sockets per agent uid. */
  const open = new Map<string, number>();
  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Params: { name: string } }>(
      '/api/v1/agents/:name/ws',
      {
        websocket: true,
        // Runs before the upgrade, so a bad request gets a plain HTTP error, not a closed socket.
        preValidation: async (req) => {
          const q = req.query as Query;
          refuseQuery(q, PEER_STREAM_PARAMS);
          const agent = await service.get(namespaceOf(q), req.params.name);
          intParam(q, 'since', { min: 0 });
          if (req.headers.upgrade?.toLowerCase() !== 'websocket') {
            throw new ApiError(
              'UpgradeRequired',
              426,
              'this endpoint streams events over a WebSocket: send the request as a WebSocket upgrade (Upgrade: websocket)',
            );
          }
          if ((open.get(agent.metadata.uid) ?? 0) >= max) throw tooManySubscribers(req.params.name, max);
        },
      },
      async (socket, req) => {
        const q = req.query as Query;
        const agent = await service.get(namespaceOf(q), req.params.name).catch(() => undefined);
        if (!agent) return socket.close(4404, 'agent not found');
        const uid = agent.metadata.uid;
        const count = open.get(uid) ?? 0;
        if (count >= max) return socket.close(TOO_MANY_SUBSCRIBERS_CLOSE.code, TOO_MANY_SUBSCRIBERS_CLOSE.reason);
        open.set(uid, count + 1);
        metrics.wsClients.inc();

        const since = intParam(q, 'since', { min: 0 });
        const following = followEvents(
          events,
          agent,
          (ev) => {
            if (socket.readyState === 1) socket.send(eventJson(ev));
          },
          {
            ...(since !== undefined ? { since } : {}),
            flow: {
              buffered: () => socket.bufferedAmount,
              maxBuffered: SUBSCRIBER_BUFFER_BYTES,
              behind: (lastSeq) => {
                metrics.wsFellBehind.inc();
                closeWith(socket, FELL_BEHIND_CLOSE_CODE, fellBehindReason(lastSeq));
              },
            },
          },
        );
        const ping = setInterval(() => socket.ping(), PING_MS).unref();
        const unwatch = service.onGone(agent, () => {
          following.stop();
          closeWith(socket, AGENT_DELETED_CLOSE.code, AGENT_DELETED_CLOSE.reason);
        });
        const unrevoke =
          req.onCredentialRevoked?.((reason) => {
            following.stop();
            req.log.info({ namespace: agent.metadata.namespace, agent: agent.metadata.name, reason }, 'closing an event stream: its credential was revoked');
            closeWith(socket, REVOKED_CLOSE_CODE, reason);
          }) ?? (() => undefined);
        socket.on('close', () => {
          unwatch();
          unrevoke();
          following.stop();
          clearInterval(ping);
          metrics.wsClients.dec();
          const left = (open.get(uid) ?? 1) - 1;
          if (left > 0) open.set(uid, left);
          else open.delete(uid);
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
