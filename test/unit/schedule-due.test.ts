// When a schedule is due (pkg/controller/schedule-due.ts), on a fake clock: the times a cron
// names in its time zone, a new schedule counting from its creation, a time handled once, and
// after downtime only the latest missed time, started within startingDeadlineSeconds or recorded
// as missed past it. The cron and time zone checks' messages name the field.

import { expect } from 'chai';
import type { Schedule, ScheduleSpec, ScheduleStatus } from '../../pkg/api/schedule.js';
import { cronCauses } from '../../pkg/api/schedule-cron.js';
import { dueRun } from '../../pkg/controller/schedule-due.js';

const schedule = (spec: Partial<ScheduleSpec>, status: ScheduleStatus = {}, created = '2026-03-01T00:00:00Z'): Schedule => ({
  apiVersion: 'agentplane.io/v1alpha1',
  kind: 'Schedule',
  metadata: { name: 's', namespace: 'default', uid: 'u', resourceVersion: '1', generation: 1, creationTimestamp: created },
  spec: { agent: 'a', cron: '*/5 * * * *', instructions: 'x', concurrencyPolicy: 'Allow', ...spec },
  status,
});
const at = (iso: string): Date => new Date(iso);

describe('schedule due times (fake clock)', () => {
  it('nothing is due before the first time after creation; then that time, and the next', () => {
    const s = schedule({});
    const early = dueRun(s, at('2026-03-01T00:04:59Z'));
    expect(early.kind).to.equal('none');
    expect(early.next?.toISOString()).to.equal('2026-03-01T00:05:00.000Z');
    const due = dueRun(s, at('2026-03-01T00:05:00.500Z'));
    expect(due).to.deep.include({ kind: 'run' });
    expect((due as { time: Date }).time.toISOString()).to.equal('2026-03-01T00:05:00.000Z');
    expect(due.next?.toISOString()).to.equal('2026-03-01T00:10:00.000Z');
  });

  it('a time once handled (lastScheduleTime) is not due again', () => {
    const s = schedule({}, { lastScheduleTime: '2026-03-01T00:05:00.000Z' });
    expect(dueRun(s, at('2026-03-01T00:07:00Z')).kind).to.equal('none');
    expect(dueRun(s, at('2026-03-01T00:10:01Z')).kind).to.equal('run');
  });

  it('after downtime only the latest missed time counts: started within the deadline, missed past it', () => {
    const handled = { lastScheduleTime: '2026-03-01T00:05:00.000Z' };
    const noDeadline = dueRun(schedule({}, handled), at('2026-03-01T01:02:00Z'));
    expect(noDeadline.kind).to.equal('run');
    expect((noDeadline as { time: Date }).time.toISOString()).to.equal('2026-03-01T01:00:00.000Z');
    const within = dueRun(schedule({ startingDeadlineSeconds: 200 }, handled), at('2026-03-01T01:02:00Z'));
    expect(within.kind).to.equal('run');
    const past = dueRun(schedule({ startingDeadlineSeconds: 60 }, handled), at('2026-03-01T01:02:00Z'));
    expect(past).to.deep.include({ kind: 'missed', lateBySeconds: 120 });
    expect((past as { time: Date }).time.toISOString()).to.equal('2026-03-01T01:00:00.000Z');
  });

  it('reads the cron in its time zone, and a seconds field', () => {
    // 09:00 in Paris on 1 March (UTC+1) is 08:00 UTC.
    const paris = dueRun(schedule({ cron: '0 9 * * *', timeZone: 'Europe/Paris' }), at('2026-03-01T07:00:00Z'));
    expect(paris.next?.toISOString()).to.equal('2026-03-01T08:00:00.000Z');
    const seconds = dueRun(schedule({ cron: '*/20 * * * * *' }), at('2026-03-01T00:00:21Z'));
    expect((seconds as { time: Date }).time.toISOString()).to.equal('2026-03-01T00:00:20.000Z');
    expect(seconds.next?.toISOString()).to.equal('2026-03-01T00:00:40.000Z');
  });

  it('a suspended schedule is never due and has no next time', () => {
    expect(dueRun(schedule({ suspend: true }), at('2026-03-01T00:05:01Z'))).to.deep.equal({ kind: 'none' });
  });

  it('a bad cron or time zone is a cause naming its field', () => {
    expect(cronCauses({ cron: '*/5 * * * *', timeZone: 'Europe/Paris' }, 'spec')).to.deep.equal([]);
    expect(cronCauses({ cron: '61 * * * *' }, 'spec').map((c) => c.field)).to.deep.equal(['spec.cron']);
    expect(cronCauses({ cron: 'every day' }, 'spec')[0].message).to.contain('five fields');
    expect(cronCauses({ cron: '* * * * *', timeZone: 'Mars/Olympus' }, 'cron').map((c) => c.field)).to.deep.equal(['cron.timeZone']);
  });
});
