// Schedule: a task given to an agent on a cron schedule, in the words of Kubernetes' CronJob
// (docs/schedules.md). The spec is the user's; the status is the schedule controller's
// (pkg/controller/schedule-controller.ts), which alone fires runs, on the leader.

import { nameSchema, namespaceSchema } from './agent-fields.js';
import { type Condition, conditionSchema } from './condition.js';
import { NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, type Resource } from './meta.js';

export const SCHEDULE_KIND = 'Schedule';

/** What a run does when the agent is busy with a task (CronJob's concurrencyPolicy). */
export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace';
export const CONCURRENCY_POLICIES: readonly ConcurrencyPolicy[] = ['Allow', 'Forbid', 'Replace'];

export interface ScheduleSpec {
  /** The agent (in the schedule's namespace) each run gives a task. */
  agent: string;
  /** Five fields (minute hour day-of-month month day-of-week), or six with seconds first. */
  cron: string;
  /** IANA time zone the cron is read in; UTC when unset. */
  timeZone?: string;
  /** The task each run gives the agent. */
  instructions: string;
  concurrencyPolicy: ConcurrencyPolicy;
  /** No run fires while true (a trigger still runs). */
  suspend?: boolean;
  /** A run this many seconds past its time is recorded as missed, never started late. */
  startingDeadlineSeconds?: number;
}

/**
 * How a run went: Started (its task was assigned), Queued (waiting behind the agent's task:
 * Allow and Replace), Skipped (Forbid, agent busy), Missed (past startingDeadlineSeconds),
 * Failed (the task could not be given: no such agent), then the task's end once it is over.
 */
export type RunOutcome = 'Started' | 'Queued' | 'Skipped' | 'Missed' | 'Failed' | 'Complete' | 'Error' | 'Cancelled';
export const RUN_OUTCOMES: readonly RunOutcome[] = ['Started', 'Queued', 'Skipped', 'Missed', 'Failed', 'Complete', 'Error', 'Cancelled'];

export interface ScheduleRun {
  /** The run's scheduled time (a trigger's: when it was asked for). */
  time: string;
  outcome: RunOutcome;
  /** The agent's task number the run gave it. */
  task?: number;
  /** Why it was skipped, missed, failed or queued. */
  reason?: string;
  /** The run was asked for (trigger), not due by the cron. */
  triggered?: boolean;
}

/** A run waiting for the agent's current task to end (Allow and Replace). */
export interface PendingRun {
  time: string;
  /** The trigger request it answers, if it was asked for. */
  trigger?: string;
  /** Replace: the agent's task this run cancelled. */
  replacing?: number;
}

export interface ScheduleStatus {
  /** The last due time handled (started, queued, skipped or missed). */
  lastScheduleTime?: string;
  nextScheduleTime?: string;
  lastRun?: ScheduleRun;
  pendingRun?: PendingRun;
  /** The last trigger request acted on (the `agentplane.io/trigger` annotation's value). */
  lastTrigger?: string;
  /** Ready: the cron and time zone read and the agent exists. */
  conditions?: Condition[];
}

export type Schedule = Resource<ScheduleSpec, ScheduleStatus>;

/** A request to run the schedule now, stored on it as a cancel is on an agent (POST …/trigger). */
export const TRIGGER_ANNOTATION = 'agentplane.io/trigger';

/** The run a schedule gave an agent, noted on the agent in the assigning write: `<schedule>@<time>`. */
export const SCHEDULED_RUN_ANNOTATION = 'agentplane.io/scheduled-run';

export const runKey = (schedule: string, time: string): string => `${schedule}@${time}`;

const agentName = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  pattern: NAME_PATTERN,
  description: `the agent each run gives a task (same namespace): ${NAME_RULE}`,
} as const;

export const scheduleFields = {
  agent: agentName,
  cron: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: 'five cron fields (minute hour day-of-month month day-of-week), or six with seconds first; names and ranges as in crontab',
  },
  timeZone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone the cron is read in (e.g. "Europe/Paris"); UTC when unset' },
  instructions: { type: 'string', minLength: 1, maxLength: 100_000, description: 'the task each run gives the agent' },
  concurrencyPolicy: {
    type: 'string',
    enum: CONCURRENCY_POLICIES,
    description: 'when the agent is busy: Allow queues the run behind its task, Forbid skips it, Replace cancels the task and runs; default Allow',
  },
  suspend: { type: 'boolean', description: 'no run fires while true (a trigger still runs)' },
  startingDeadlineSeconds: {
    type: 'integer',
    minimum: 1,
    maximum: 31_536_000,
    description: 'a run found this many seconds past its time (after downtime) is recorded as missed, never started late; unset: the latest missed run starts',
  },
} as const;

export const scheduleSpecSchema = {
  $id: 'ScheduleSpec',
  type: 'object',
  additionalProperties: false,
  required: ['agent', 'cron', 'instructions', 'concurrencyPolicy'],
  properties: scheduleFields,
} as const;

export const scheduleRunSchema = {
  type: 'object',
  required: ['time', 'outcome'],
  properties: {
    time: { type: 'string', format: 'date-time', description: "the run's scheduled time (a trigger's: when it was asked for)" },
    outcome: {
      type: 'string',
      enum: RUN_OUTCOMES,
      description: "Started, Queued, Skipped, Missed or Failed; once its task ended, the task's end (Complete, Error, Cancelled)",
    },
    task: { type: 'integer', minimum: 1, description: "the agent's task number the run gave it" },
    reason: { type: 'string', description: 'why it was queued, skipped, missed or failed' },
    triggered: { type: 'boolean', description: 'asked for (trigger), not due by the cron' },
  },
} as const;

export const pendingRunSchema = {
  type: 'object',
  required: ['time'],
  properties: {
    time: { type: 'string', format: 'date-time' },
    trigger: { type: 'string' },
    replacing: { type: 'integer', minimum: 1, description: "Replace: the agent's task this run cancelled" },
  },
  description: "a run waiting for the agent's task to end (Allow, Replace)",
} as const;

export const scheduleStatusSchema = {
  $id: 'ScheduleStatus',
  type: 'object',
  properties: {
    lastScheduleTime: { type: 'string', format: 'date-time', description: 'the last due time handled (started, queued, skipped or missed)' },
    nextScheduleTime: { type: 'string', format: 'date-time', description: 'the next due time (none while suspended)' },
    lastRun: { ...scheduleRunSchema, description: 'the last run: its time, outcome, task and why' },
    pendingRun: pendingRunSchema,
    lastTrigger: { type: 'string', description: 'the last trigger request acted on' },
    conditions: { type: 'array', items: conditionSchema, description: 'Ready: the cron and time zone are read and the agent exists' },
  },
  description: 'written by the schedule controller (on the leader)',
} as const;

export const scheduleRequestSchema = {
  $id: 'ScheduleRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'agent', 'cron', 'instructions'],
  properties: {
    name: nameSchema,
    namespace: namespaceSchema,
    ...scheduleFields,
  },
} as const;

export const schedulePatchRequestSchema = {
  $id: 'SchedulePatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  // `null` for timeZone or startingDeadlineSeconds (which removes it) is taken by the service before the schema applies.
  properties: scheduleFields,
} as const;

/** POST /api/v1/schedules. */
export interface ScheduleRequest extends Omit<ScheduleSpec, 'concurrencyPolicy'> {
  name: string;
  namespace?: string;
  concurrencyPolicy?: ConcurrencyPolicy;
}

/** PATCH /api/v1/schedules/:name: the fields given change; timeZone or startingDeadlineSeconds null removes it. */
export type SchedulePatchRequest = Partial<Omit<ScheduleSpec, 'timeZone' | 'startingDeadlineSeconds'>> & {
  timeZone?: string | null;
  startingDeadlineSeconds?: number | null;
};

export interface ScheduleResponse extends ScheduleSpec {
  name: string;
  namespace: string;
  createdAt: string;
  suspend: boolean;
  lastScheduleTime: string | null;
  nextScheduleTime: string | null;
  lastRun: ScheduleRun | null;
  pendingRun: PendingRun | null;
  conditions: Condition[];
}

export function toScheduleResponse(s: Schedule): ScheduleResponse {
  return {
    name: s.metadata.name,
    namespace: s.metadata.namespace,
    createdAt: s.metadata.creationTimestamp,
    ...s.spec,
    suspend: s.spec.suspend === true,
    lastScheduleTime: s.status.lastScheduleTime ?? null,
    nextScheduleTime: s.status.nextScheduleTime ?? null,
    lastRun: s.status.lastRun ?? null,
    pendingRun: s.status.pendingRun ?? null,
    conditions: s.status.conditions ?? [],
  };
}
