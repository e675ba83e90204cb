// The OpenAPI paths of Schedules (/api/v1/schedules; docs/schedules.md), with their schemas and
// POST …/trigger.

import type { OpenAPIV3 } from 'openapi-types';
import { conditionSchema } from './condition.js';
import { errors, json, nameParam, nsParam, ref, type Schema, toOpenApi } from './openapi-common.js';
import { kindPaths } from './openapi-kind.js';
import { pendingRunSchema, scheduleFields, schedulePatchRequestSchema, scheduleRequestSchema, scheduleRunSchema } from './schedule.js';

const scheduleResponseSchema = {
  type: 'object',
  required: [
    'name',
    'namespace',
    'createdAt',
    'agent',
    'cron',
    'instructions',
    'concurrencyPolicy',
    'suspend',
    'lastScheduleTime',
    'nextScheduleTime',
    'lastRun',
    'pendingRun',
    'conditions',
  ],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    ...scheduleFields,
    lastScheduleTime: { type: 'string', format: 'date-time', nullable: true, description: 'the last due time handled (started, queued, skipped or missed)' },
    nextScheduleTime: { type: 'string', format: 'date-time', nullable: true, description: 'the next due time (null while suspended)' },
    lastRun: { ...scheduleRunSchema, nullable: true, description: 'the last run: its time, outcome, task and why' },
    pendingRun: { ...pendingRunSchema, nullable: true },
    conditions: { type: 'array', items: conditionSchema, description: 'Ready: the cron and time zone are read and the agent exists' },
  },
} as const;

export function scheduleComponents(): Record<string, Schema> {
  return {
    ScheduleRequest: toOpenApi(scheduleRequestSchema),
    SchedulePatchRequest: toOpenApi({
      ...schedulePatchRequestSchema,
      // Given as null, timeZone or startingDeadlineSeconds is removed: taken by the service before its schema applies.
      properties: {
        ...schedulePatchRequestSchema.properties,
        timeZone: { ...schedulePatchRequestSchema.properties.timeZone, nullable: true },
        startingDeadlineSeconds: { ...schedulePatchRequestSchema.properties.startingDeadlineSeconds, nullable: true },
      },
      description: 'the fields given change; timeZone or startingDeadlineSeconds given as null is removed',
    }),
    ScheduleResponse: toOpenApi(scheduleResponseSchema),
  };
}

export function schedulePaths(): OpenAPIV3.PathsObject {
  const schedule = { content: json(ref('ScheduleResponse')) };
  return {
    ...kindPaths({ plural: 'schedules', kind: 'Schedule', one: 'the schedule with its last and next run', list: 'schedules, each with its last and next run' }),
    '/api/v1/schedules/{name}/trigger': {
      post: {
        operationId: 'triggerSchedule',
        description: 'run the schedule now, whatever its cron and suspend say (its concurrencyPolicy applies)',
        parameters: [nameParam, nsParam],
        responses: {
          '200': { description: 'the run is recorded in lastRun', ...schedule },
          '202': { description: 'asked for; the controller had not recorded the run in time (it will)', ...schedule },
          ...errors(400, 404, 409),
        },
      },
    },
  };
}
