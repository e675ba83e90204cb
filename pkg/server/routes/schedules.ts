// The REST mirror of Schedules (docs/schedules.md): the generic kind routes, and
// POST /api/v1/schedules/:name/trigger, which runs it now: 200 with the schedule once the
// controller recorded the run, 202 if it had not in time.

import type { FastifyInstance } from 'fastify';
import { type Schedule, toScheduleResponse } from '../../api/schedule.js';
import type { Registry } from '../../registry/registry.js';
import { namespaceOf, type Query } from '../params.js';
import type { ScheduleService } from '../services/schedule-service.js';
import { triggerSchedule } from '../services/schedule-trigger.js';
import { kindRoutes } from './kind-routes.js';

export function scheduleRoutes(service: ScheduleService, schedules: Registry<Schedule>) {
  return async (app: FastifyInstance): Promise<void> => {
    await app.register(kindRoutes('schedules', service, toScheduleResponse));
    app.post<{ Params: { name: string } }>('/api/v1/schedules/:name/trigger', async (req, reply) => {
      const { schedule, settled } = await triggerSchedule(schedules, namespaceOf(req.query as Query), req.params.name);
      return reply.status(settled ? 200 : 202).send(toScheduleResponse(schedule));
    });
  };
}
