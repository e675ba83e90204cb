// When a schedule's next run is due, as CronJob's controller reckons it: a pure function of the
// schedule and the clock's reading, so the controller's clock can be a fake one in tests. After
// downtime only the most recent missed time counts: it starts once if still within
// startingDeadlineSeconds (or there is none), else it is recorded as missed, never started late.

import type { Schedule } from '../api/schedule.js';
import { latestDue, nextDue } from '../api/schedule-cron.js';

export type Due =
  /** Nothing due now; `next` is the next due time (none while suspended, or never again). */
  | { kind: 'none'; next?: Date }
  /** `time` is due: start it. */
  | { kind: 'run'; time: Date; next?: Date }
  /** `time` came and went while no replica led, past startingDeadlineSeconds: record, never start. */
  | { kind: 'missed'; time: Date; next?: Date; lateBySeconds: number };

export function dueRun(s: Schedule, now: Date): Due {
  if (s.spec.suspend) return { kind: 'none' };
  const next = nextDue(s.spec, now);
  // The times handled so far end at lastScheduleTime; a new schedule counts from its creation.
  const handled = Date.parse(s.status.lastScheduleTime ?? s.metadata.creationTimestamp);
  const latest = latestDue(s.spec, now);
  if (!latest || !(latest.getTime() > handled)) return { kind: 'none', ...(next ? { next } : {}) };
  const lateMs = now.getTime() - latest.getTime();
  const deadline = s.spec.startingDeadlineSeconds;
  if (deadline !== undefined && lateMs > deadline * 1000) {
    return { kind: 'missed', time: latest, lateBySeconds: Math.floor(lateMs / 1000), ...(next ? { next } : {}) };
  }
  return { kind: 'run', time: latest, ...(next ? { next } : {}) };
}
