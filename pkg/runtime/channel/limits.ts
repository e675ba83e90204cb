// The worker channel's limits, per agent (messages per second, across its worker's connections)
// and per task (events and their bytes), with the defaults of ../../api/worker-protocol.ts
// (docs/decisions.md "Limits").

import { capEventSize, payloadBytes } from '../../api/event-size.js';
import type { EventDraft } from '../../api/event.js';
import {
  MAX_EVENT_BYTES,
  MAX_EVENTS_PER_TASK,
  MAX_TASK_EVENT_BYTES,
  MAX_WORKER_MESSAGE_BYTES,
  WORKER_MESSAGE_BURST,
  WORKER_MESSAGES_PER_SECOND,
} from '../../api/worker-protocol.js';

export interface ChannelLimits {
  maxMessageBytes: number;
  maxEventBytes: number;
  maxEventsPerTask: number;
  maxTaskEventBytes: number;
  messagesPerSecond: number;
  messageBurst: number;
  /** Reads the clock (tests). */
  now: () => number;
}

export const DEFAULT_CHANNEL_LIMITS: ChannelLimits = {
  maxMessageBytes: MAX_WORKER_MESSAGE_BYTES,
  maxEventBytes: MAX_EVENT_BYTES,
  maxEventsPerTask: MAX_EVENTS_PER_TASK,
  maxTaskEventBytes: MAX_TASK_EVENT_BYTES,
  messagesPerSecond: WORKER_MESSAGES_PER_SECOND,
  messageBurst: WORKER_MESSAGE_BURST,
  now: Date.now,
};

/** A token bucket: `messageBurst` at once, refilled at `messagesPerSecond`. */
export class MessageRate {
  private tokens: number;
  private at: number;
  constructor(private readonly l: Pick<ChannelLimits, 'messagesPerSecond' | 'messageBurst' | 'now'>) {
    this.tokens = l.messageBurst;
    this.at = l.now();
  }

  /** False when the connection has no message left to spend. */
  take(): boolean {
    const now = this.l.now();
    this.tokens = Math.min(this.l.messageBurst, this.tokens + ((now - this.at) / 1000) * this.l.messagesPerSecond);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * One task's events as the hub passed them on. Each is cut to `maxEventBytes`; the one that
 * would pass `maxEventsPerTask` or `maxTaskEventBytes` is `exceeded` (the task must end), and
 * every later one is dropped.
 */
export class TaskBudget {
  events = 0;
  bytes = 0;
  /** The task passed its budget (and was ended). */
  over = false;
  constructor(
    readonly uid: string,
    readonly taskId: number,
    private readonly l: Pick<ChannelLimits, 'maxEventBytes' | 'maxEventsPerTask' | 'maxTaskEventBytes'>,
  ) {}

  add(event: EventDraft): EventDraft | 'exceeded' | 'drop' | 'too big' {
    if (this.over) return 'drop';
    // Measured once for the usual event that fits; only a cut one is measured again.
    let capped = event;
    let size = payloadBytes(event.payload);
    if (size > this.l.maxEventBytes) {
      capped = capEventSize(event, this.l.maxEventBytes);
      size = payloadBytes(capped.payload);
      if (size > this.l.maxEventBytes) return 'too big';
    }
    if (this.events + 1 > this.l.maxEventsPerTask || this.bytes + size > this.l.maxTaskEventBytes) {
      this.over = true;
      return 'exceeded';
    }
    this.events++;
    this.bytes += size;
    return capped;
  }

  exceededMessage(): string {
    return `the task's worker sent more events than a task may store (at most ${this.l.maxEventsPerTask} events, ${this.l.maxTaskEventBytes} bytes): the task was ended`;
  }
}
