// Reading a Schedule's cron and time zone, with croner (docs/decisions.md "Schedules", the cron
// library): five fields, or six with seconds first, in an IANA time zone (UTC by default). Pure
// functions of the spec and a given instant, so the controller's clock can be a fake one in tests.

import { Cron } from 'croner';
import type { Cause } from './errors.js';
import type { ScheduleSpec } from './schedule.js';

type CronSpec = Pick<ScheduleSpec, 'cron' | 'timeZone'>;

/** The time zone is one the runtime knows (IANA names, as Intl reads them). */
export function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function cronOf(spec: CronSpec): Cron {
  return new Cron(spec.cron, { paused: true, mode: '5-or-6-parts', timezone: spec.timeZone ?? 'UTC' });
}

/** What is wrong with the cron and time zone (field names under `path`), nothing when both read. */
export function cronCauses(spec: Partial<CronSpec>, path: string): Cause[] {
  const causes: Cause[] = [];
  if (spec.timeZone !== undefined && (typeof spec.timeZone !== 'string' || !validTimeZone(spec.timeZone))) {
    causes.push({ field: `${path}.timeZone`, message: `"${String(spec.timeZone)}" is not an IANA time zone (such as "UTC" or "Europe/Paris")` });
  }
  if (typeof spec.cron !== 'string') return causes;
  try {
    const c = cronOf({ cron: spec.cron, ...(causes.length ? {} : { timeZone: spec.timeZone }) });
    if (!c.nextRun(new Date())) causes.push({ field: `${path}.cron`, message: `"${spec.cron}" never comes due` });
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err);
    causes.push({ field: `${path}.cron`, message: `"${spec.cron}" is not a cron expression of five fields (or six with seconds first): ${why}` });
  }
  return causes;
}

/** The first due time strictly after `after`, or undefined if none. */
export function nextDue(spec: CronSpec, after: Date): Date | undefined {
  return cronOf(spec).nextRun(after) ?? undefined;
}

/** The latest due time at or before `at`, or undefined if none. */
export function latestDue(spec: CronSpec, at: Date): Date | undefined {
  // previousRuns looks strictly before its reference: one millisecond on includes `at` itself.
  return cronOf(spec).previousRuns(1, new Date(at.getTime() + 1))[0];
}
