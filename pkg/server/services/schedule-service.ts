// Schedules behind the REST mirror (/api/v1/schedules; docs/schedules.md): the generic kind
// service; the cron, time zone and every other rule are the schedule strategy's. timeZone and
// startingDeadlineSeconds patched to null are removed.

import { SCHEDULE_KIND, type Schedule, schedulePatchRequestSchema, scheduleRequestSchema, type ScheduleSpec } from '../../api/schedule.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { KindService } from './kind-service.js';

export type ScheduleService = KindService<ScheduleSpec, Schedule>;

export const scheduleService = (schedules: Registry<Schedule>, reads: ReadCache<Schedule>): ScheduleService =>
  new KindService(
    { kind: SCHEDULE_KIND, createSchema: scheduleRequestSchema, patchSchema: schedulePatchRequestSchema, removable: ['timeZone', 'startingDeadlineSeconds'] },
    schedules,
    reads,
  );
