// "Run it now" for a Schedule (POST /api/v1/schedules/:name/trigger and the aggregated
// schedules/<name>/trigger): a request stored on the schedule (annotation agentplane.io/trigger,
// a new id each time), as a cancel is on an agent, so any replica may take it and the schedule
// controller on the leader acts on it once. Answers once the controller recorded the run
// (status.lastTrigger is the id), or `settled` false after the wait.

import { randomUUID } from 'node:crypto';
import { notFound } from '../../api/errors.js';
import { type Schedule, SCHEDULE_KIND, TRIGGER_ANNOTATION } from '../../api/schedule.js';
import { type Registry, REST_OWNER } from '../../registry/registry.js';

export interface TriggerResult {
  schedule: Schedule;
  /** The controller recorded the run in time (status.lastRun is this run). */
  settled: boolean;
}

export async function triggerSchedule(schedules: Registry<Schedule>, namespace: string, name: string, timeoutMs = 10_000): Promise<TriggerResult> {
  const existing = await schedules.get(namespace, name);
  if (!existing || existing.metadata.deletionTimestamp) throw notFound(SCHEDULE_KIND, name, namespace);
  const id = randomUUID();
  // Taken, and past the claim: started, skipped, failed, or queued behind the agent's task.
  const taken = (s: Schedule): boolean => s.status.lastTrigger === id && (s.status.pendingRun?.trigger !== id || s.status.lastRun?.outcome === 'Queued');
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  // Watch before the write, so the controller's answer cannot fall between the two.
  const unwatch = schedules.watch((ev) => {
    const s = ev.object;
    if (s.metadata.namespace !== namespace || s.metadata.name !== name) return;
    if (ev.type === 'DELETED') return finish();
    if (taken(s)) finish();
  });
  const timer = setTimeout(finish, timeoutMs);
  try {
    const written = await schedules.update(
      namespace,
      name,
      (s) => {
        s.metadata.annotations = { ...s.metadata.annotations, [TRIGGER_ANNOTATION]: id };
      },
      { owner: REST_OWNER },
    );
    if (!taken(written)) await done;
    const now = (await schedules.get(namespace, name)) ?? written;
    return { schedule: structuredClone(now), settled: taken(now) };
  } finally {
    clearTimeout(timer);
    unwatch();
  }
}
