// Schedule rules (docs/schedules.md): the spec's fields, a cron and a time zone that read, the
// default concurrencyPolicy (Allow, as CronJob's); the status is the schedule controller's and a
// spec write keeps it.

import { API_VERSION } from '../../api/meta.js';
import { type Schedule, SCHEDULE_KIND, scheduleSpecSchema, scheduleStatusSchema } from '../../api/schedule.js';
import { cronCauses } from '../../api/schedule-cron.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, humanDuration, nameColumn, objectMetaFields } from '../table.js';

const since = (time: string | undefined, now: number): string | null => (time ? `${humanDuration(now - Date.parse(time))} ago` : null);
const until = (time: string | undefined, now: number): string | null => (time ? `in ${humanDuration(Date.parse(time) - now)}` : null);

export const scheduleStrategy: Strategy<Schedule> = {
  kind: SCHEDULE_KIND,
  specSchema: scheduleSpecSchema,

  prepareForCreate(s) {
    s.apiVersion = API_VERSION;
    s.kind = SCHEDULE_KIND;
    s.spec.concurrencyPolicy ??= 'Allow';
    s.status = {};
  },

  prepareForUpdate(s, old) {
    s.spec.concurrencyPolicy ??= 'Allow';
    s.status = structuredClone(old.status);
  },

  validate(s) {
    const causes = [...validateObjectName(s.metadata.name, s.metadata.namespace), ...validateSchema(scheduleSpecSchema, s.spec, 'spec')];
    // The cron's own message only when the schema found nothing wrong with the field.
    const said = new Set(causes.map((c) => c.field));
    return [...causes, ...cronCauses(s.spec ?? {}, 'spec').filter((c) => !said.has(c.field))];
  },

  validateUpdate() {
    return [];
  },

  validateStatusUpdate(s) {
    return validateSchema(scheduleStatusSchema, s.status, 'status');
  },

  table: {
    columns: [
      nameColumn,
      column('Agent', 'The agent each run gives a task.'),
      column('Schedule', 'The cron expression.'),
      column('Suspend', 'No run fires while true.', 0, 'boolean'),
      column('Last Schedule', 'The last due time handled.'),
      column('Next', 'The next due time.'),
      ageColumn,
      column('Time Zone', 'The IANA time zone the cron is read in.', 1),
      column('Policy', 'concurrencyPolicy: Allow, Forbid or Replace.', 1),
      column('Last Run', "The last run's outcome.", 1),
      column('Task', "The agent's task the last run gave it.", 1, 'integer'),
    ],
    row: (s, now) => [
      s.metadata.name,
      s.spec.agent,
      s.spec.cron,
      s.spec.suspend === true,
      since(s.status.lastScheduleTime, now),
      s.spec.suspend ? null : until(s.status.nextScheduleTime, now),
      age(s.metadata, now),
      s.spec.timeZone ?? 'UTC',
      s.spec.concurrencyPolicy,
      s.status.lastRun?.outcome ?? null,
      s.status.lastRun?.task ?? null,
    ],
  },

  selectableFields: (s) => ({
    ...objectMetaFields(s.metadata),
    'spec.agent': s.spec.agent,
    'spec.suspend': String(s.spec.suspend === true),
  }),
};
