// The firehose task (test/support/firehose-worker.ts) as the event benchmark and tests write it.

import { performance } from 'node:perf_hooks';
import type { ChannelLimits } from '../../pkg/runtime/channel/limits.js';

export interface FirehoseSpec {
  count: number;
  /** Events per second; 0: as fast as the socket takes them. */
  rate: number;
  /** Characters of each text event's content. */
  size: number;
}

/**
 * A server's worker channel limits for the firehose worker: it sends events as fast as the path
 * takes them, a million in one task, which no engine does and the defaults refuse.
 */
export const FIREHOSE_CHANNEL_LIMITS: Partial<ChannelLimits> = {
  messagesPerSecond: Number.POSITIVE_INFINITY,
  messageBurst: Number.POSITIVE_INFINITY,
  maxEventsPerTask: Number.POSITIVE_INFINITY,
  maxTaskEventBytes: Number.POSITIVE_INFINITY,
};

export const FIREHOSE = 'firehose';
export const firehoseTask = (spec: FirehoseSpec): string => `${FIREHOSE} ${JSON.stringify(spec)}`;

/** Wall-clock ms with sub-ms precision, comparable across processes on one machine. */
export const wallMs = (): number => performance.timeOrigin + performance.now();
