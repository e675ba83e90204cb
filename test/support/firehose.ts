// The firehose task (test/support/firehose-worker.ts) as the event benchmark and tests write it.

import { performance } from 'node:perf_hooks';

export interface FirehoseSpec {
  count: number;
  /** Events per second; 0: as fast as the socket takes them. */
  rate: number;
  /** Characters of each text event's content. */
  size: number;
}

export const FIREHOSE = 'firehose';
export const firehoseTask = (spec: FirehoseSpec): string => `${FIREHOSE} ${JSON.stringify(spec)}`;

/** Wall-clock ms with sub-ms precision, comparable across processes on one machine. */
export const wallMs = (): number => performance.timeOrigin + performance.now();
