// One outbound webhook delivery (docs/triggers-and-webhooks.md), signed as Standard Webhooks
// (standardwebhooks.com) signs: webhook-id (the same on every retry of the event, so a receiver
// can drop what it already has), webhook-timestamp (Unix seconds) and webhook-signature
// "v1,<base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`>". A key written "whsec_<base64>" is
// those bytes, as Standard Webhooks' keys are; any other secret is its UTF-8 bytes.

import { createHmac } from 'node:crypto';
import type { AgentEvent } from '../api/event.js';

/** Sends a POST and answers the receiver's HTTP status; throws when no answer came. */
export type WebhookSend = (url: string, init: { headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<number>;

export interface SignedDelivery {
  headers: Record<string, string>;
  body: string;
}

const KEY_PREFIX = 'whsec_';

export const signingKey = (secret: string): Buffer =>
  secret.startsWith(KEY_PREFIX) ? Buffer.from(secret.slice(KEY_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');

/** The Standard Webhooks signature of a message: "v1,<base64>". */
export function webhookSignature(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The delivery of one agent event: `uid` is the agent's, so a re-created agent's events get other ids. */
export function signedDelivery(ev: AgentEvent, uid: string, key: Buffer, now = Date.now()): SignedDelivery {
  const id = `evt_${uid}_${ev.seq}`;
  const timestamp = Math.floor(now / 1000);
  const body = JSON.stringify({
    type: ev.type,
    timestamp: ev.timestamp,
    data: { namespace: ev.namespace, agent: ev.agentName, seq: ev.seq, task: ev.task, payload: ev.payload },
  });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'agentplane-webhook',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': webhookSignature(key, id, timestamp, body),
    },
  };
}

/** Exponential backoff: base, 2x base, 4x base... at most `max`. */
export const backoffMs = (attempts: number, baseMs: number, maxMs: number): number => Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
