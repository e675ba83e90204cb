// Agent rules: defaults, field validation, and the one update rule of the spec: a new task may
// not be assigned while one is in progress (409).

import {
  AGENT_KIND,
  type Agent,
  agentSpecSchema,
  DEFAULT_MODEL,
  DEFAULT_TEMPLATE,
} from '../../api/agent.js';
import { type Cause, conflict, type ApiError } from '../../api/errors.js';
import { API_VERSION, NAME_MAX_LENGTH, NAME_PATTERN, NAMESPACE_PATTERN } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import type { Strategy } from '../strategy.js';

const nameRe = new RegExp(NAME_PATTERN);
const nsRe = new RegExp(NAMESPACE_PATTERN);

export function validateObjectName(name: string, namespace: string): Cause[] {
  const causes: Cause[] = [];
  if (!name || name.length > NAME_MAX_LENGTH || !nameRe.test(name)) {
    causes.push({
      field: 'metadata.name',
      message: 'must be lowercase letters and hyphens, start and end with a letter, at most 63 characters',
    });
  }
  if (!namespace || namespace.length > 63 || !nsRe.test(namespace)) {
    causes.push({ field: 'metadata.namespace', message: 'must be a DNS label (lowercase letters, digits, hyphens)' });
  }
  return causes;
}

export const agentStrategy: Strategy<Agent> = {
  kind: AGENT_KIND,
  finalized: true,

  prepareForCreate(a) {
    a.apiVersion = API_VERSION;
    a.kind = AGENT_KIND;
    a.spec.model ||= DEFAULT_MODEL;
    a.spec.templateRef ||= DEFAULT_TEMPLATE;
    a.spec.role ||= 'manager';
    a.spec.connectors ??= [];
    a.spec.lifecycle ??= '';
    a.spec.task ??= 0;
    a.status = {
      status: 'Pending',
      taskStatus: a.spec.task > 0 ? 'InProgress' : '',
      lastTaskMessage: '',
      observedTask: 0,
    };
  },

  prepareForUpdate(a, old) {
    a.status = structuredClone(old.status);
    // Assigning a task and marking it in progress is one write, so no reader sees it idle between.
    if (a.spec.task > old.spec.task) {
      a.status.taskStatus = 'InProgress';
      a.status.lastTaskMessage = '';
      if (a.status.status === 'Failed') a.status.status = 'Pending';
    }
  },

  validate(a) {
    return [
      ...validateObjectName(a.metadata.name, a.metadata.namespace),
      ...validateSchema(agentSpecSchema, a.spec, 'spec'),
    ];
  },

  validateUpdate(a, old): Cause[] | ApiError {
    if (a.spec.task !== old.spec.task && isBusy(old)) {
      return conflict(`agent "${a.metadata.name}" is busy with a task; cancel it or wait for it to finish`, {
        kind: AGENT_KIND,
        name: a.metadata.name,
      });
    }
    if (a.spec.task < old.spec.task) return [{ field: 'spec.task', message: 'may only increase' }];
    return [];
  },
};

/** A task is assigned and not yet settled. */
export const isBusy = (a: Agent): boolean => a.status.taskStatus === 'InProgress' || a.spec.task > a.status.observedTask;
