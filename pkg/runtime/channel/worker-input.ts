// A worker's message as the hub receives it, checked before anything acts on it: its frame (text,
// within the size limit), its shape (the protocol's schema) and its place in the conversation
// (hello first and once, nothing from an unassigned slot, events only of tasks this worker was
// given). Anything else is a breach the hub answers by closing the connection with `code`.

import type WebSocket from 'ws';
import { parseWorkerMessage } from '../../api/worker-protocol-schema.js';
import { type WorkerMessage, WorkerCloseCode } from '../../api/worker-protocol.js';
import type { ChannelLimits } from './limits.js';

/** What the check needs to know of the connection. */
export interface ConnState {
  greeted: boolean;
  grant: { slot?: boolean; lastTask?: number };
}

export type Checked = { message: WorkerMessage } | { error: string; code: number };

/** ws's own code for a message over the limit. */
const MESSAGE_TOO_BIG = 1009;

export function checkWorkerMessage(conn: ConnState, data: WebSocket.RawData, isBinary: boolean, limits: Pick<ChannelLimits, 'maxMessageBytes'>): Checked {
  if (isBinary) return { error: 'a binary frame (messages are JSON text)', code: WorkerCloseCode.invalid };
  const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
  if (bytes > limits.maxMessageBytes) return { error: `a message over ${limits.maxMessageBytes} bytes`, code: MESSAGE_TOO_BIG };
  const text = Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.isBuffer(data) ? data.toString() : Buffer.from(data).toString();
  const parsed = parseWorkerMessage(text);
  if ('error' in parsed) return { error: parsed.error, code: WorkerCloseCode.invalid };
  const msg = parsed.message;
  const order = (error: string): Checked => ({ error, code: WorkerCloseCode.outOfOrder });
  if (msg.type === 'hello') return conn.greeted ? order('a second hello on one connection') : { message: msg };
  if (!conn.greeted) return order(`${msg.type} before hello`);
  if (conn.grant.slot) return order(`${msg.type} from a warm-pool slot no agent was assigned`);
  if (msg.type === 'event' && msg.taskId > (conn.grant.lastTask ?? 0)) return order(`an event of task ${msg.taskId}, which this worker was never given`);
  return { message: msg };
}
