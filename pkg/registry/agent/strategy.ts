// Agent rules: defaults, field validation, and the one update rule of the spec: a new task may
// not be assigned while one is in progress (409). Changing the instructions of an agent through
// an update of its object (kubectl apply/patch/edit) assigns a new task, so the busy rule applies.

import {
  AGENT_KIND,
  type Agent,
  agentSpecSchema,
  DEFAULT_MODEL,
  agentStatusSchema,
  DEFAULT_TEMPLATE,
  deriveAgentStatus,
  isBusy,
  RESERVED_AGENT_NAMES,
} from '../../api/agent.js';
import { TRACEPARENT_ANNOTATION, validateIdleTimeoutAnnotation } from '../../api/agent-annotations.js';
import { validateBudgetLimits } from '../../api/budget.js';
import { FINALIZER_AGENT_CLEANUP } from '../../api/deletion.js';
import { type Cause, conflict, type ApiError } from '../../api/errors.js';
import { API_VERSION, NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, NAMESPACE_PATTERN, NAMESPACE_RULE } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { traceparentOf } from '../../observability/tracing.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields, orNone } from '../table.js';

const nameRe = new RegExp(NAME_PATTERN);

/**
 * Keeps the trace of the request that assigns a task on the agent (docs/tracing.md): the
 * controller and the worker continue it. A task assigned outside a traced request drops the
 * last task's, so no task joins another's trace.
 */
function stampTrace(a: Agent): void {
  const traceparent = traceparentOf();
  if (traceparent) a.metadata.annotations = { ...a.metadata.annotations, [TRACEPARENT_ANNOTATION]: traceparent };
  else if (a.metadata.annotations?.[TRACEPARENT_ANNOTATION] !== undefined) {
    const { [TRACEPARENT_ANNOTATION]: _, ...rest } = a.metadata.annotations;
    a.metadata.annotations = rest;
  }
}
const nsRe = new RegExp(NAMESPACE_PATTERN);

export function validateObjectName(name: string, namespace: string): Cause[] {
  const causes: Cause[] = [];
  if (!name || name.length > NAME_MAX_LENGTH || !nameRe.test(name)) {
    causes.push({
      field: 'metadata.name',
      message: `must be ${NAME_RULE}`,
    });
  }
  if (!namespace || namespace.length > 63 || !nsRe.test(namespace)) {
    causes.push({ field: 'metadata.namespace', message: `must be ${NAMESPACE_RULE}` });
  }
  return causes;
}

export const agentStrategy: Strategy<Agent> = {
  kind: AGENT_KIND,
  specSchema: agentSpecSchema,

  prepareForCreate(a) {
    a.apiVersion = API_VERSION;
    a.kind = AGENT_KIND;
    defaultSpec(a);
    addCleanupFinalizer(a);
    // An agent starts working when created, whoever creates it (POST, kubectl, a squad).
    a.spec.task ??= 1;
    if (a.spec.task > 0) stampTrace(a);
    a.status = {
      status: 'Pending',
      taskStatus: a.spec.task > 0 ? 'InProgress' : '',
      lastTaskMessage: '',
      observedTask: 0,
      conditions: [],
    };
    deriveAgentStatus(a);
  },

  prepareForUpdate(a, old) {
    a.status = structuredClone(old.status);
    defaultSpec(a);
    // A write that leaves the finalizer out does not skip the clean-up; once the agent is being
    // deleted, removing it is allowed (Kubernetes' escape hatch for a stuck object).
    if (!a.metadata.deletionTimestamp) addCleanupFinalizer(a);
    // The task counter is the server's: an update that leaves it out keeps it, and one that
    // changes the instructions without counting up assigns them as a new task.
    a.spec.task ??= old.spec.task;
    // Set on create only: an update that leaves it out (a replace written without it) keeps it.
    if (old.spec.fromCheckpoint) a.spec.fromCheckpoint ??= old.spec.fromCheckpoint;
    if (a.spec.instructions !== old.spec.instructions && a.spec.task === old.spec.task) a.spec.task += 1;
    // Assigning a task and marking it in progress is one write, so no reader sees it idle between.
    if (a.spec.task > old.spec.task) {
      stampTrace(a);
      a.status.taskStatus = 'InProgress';
      a.status.lastTaskMessage = '';
      // "Sleep" is an action, not a standing rule: a task sent to a sleeping agent wakes it for
      // good (docs/squads.md "Lifecycle"). Only a write that sets the lifecycle itself keeps it.
      if (a.spec.lifecycle === 'Sleep' && old.spec.lifecycle === 'Sleep') a.spec.lifecycle = '';
    }
    deriveAgentStatus(a);
  },

  prepareForStatusUpdate(a) {
    deriveAgentStatus(a);
  },

  validateStatusUpdate(a, old) {
    const causes = validateSchema(agentStatusSchema, a.status, 'status');
    if (a.status.observedTask < old.status.observedTask) causes.push({ field: 'status.observedTask', message: 'may only increase' });
    if (a.status.observedTask > a.spec.task) causes.push({ field: 'status.observedTask', message: `may not pass spec.task (${a.spec.task})` });
    const types = (a.status.conditions ?? []).map((c) => c.type);
    if (new Set(types).size !== types.length) causes.push({ field: 'status.conditions', message: 'a condition type appears twice' });
    return causes;
  },

  validate(a) {
    const reserved: Cause[] = RESERVED_AGENT_NAMES.includes(a.metadata.name)
      ? [{ field: 'metadata.name', message: `"${a.metadata.name}" is reserved for agentplane's own container in agent pods; choose another name` }]
      : [];
    return [
      ...validateObjectName(a.metadata.name, a.metadata.namespace),
      ...reserved,
      ...validateSchema(agentSpecSchema, a.spec, 'spec'),
      ...validateBudgetLimits(a.spec.budget, 'spec.budget'),
      ...validateIdleTimeoutAnnotation(a),
    ];
  },

  validateUpdate(a, old): Cause[] | ApiError {
    if (a.spec.task !== old.spec.task && old.metadata.deletionTimestamp) {
      return conflict(`agent "${a.metadata.name}" is being deleted; try again once it is gone`, { kind: AGENT_KIND, name: a.metadata.name });
    }
    if (a.spec.task !== old.spec.task && isBusy(old)) {
      return conflict(`agent "${a.metadata.name}" is busy with a task; cancel it or wait for it to finish`, {
        kind: AGENT_KIND,
        name: a.metadata.name,
      });
    }
    if (a.spec.task < old.spec.task) return [{ field: 'spec.task', message: 'may only increase' }];
    if (a.spec.fromCheckpoint !== old.spec.fromCheckpoint)
      return [{ field: 'spec.fromCheckpoint', message: 'may only be set on create: an agent starts from a checkpoint once' }];
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('Status', "Pending, Queued, Running, Paused, Sleeping or Failed; a queued agent shows its place in its namespace's line, Queued:1 going next."),
      column('Task', 'Status of the current task: InProgress, Complete, Error or Cancelled.'),
      column('Model', 'The model the agent uses.'),
      ageColumn,
      column('Message', 'Latest activity line of the current task.', 1),
    ],
    row: (a, now) => [
      a.metadata.name,
      a.status.queue ? `Queued:${a.status.queue.position}` : a.status.status,
      orNone(a.status.taskStatus),
      a.spec.model,
      age(a.metadata, now),
      orNone(a.status.lastTaskMessage),
    ],
  },

  selectableFields: (a) => ({
    ...objectMetaFields(a.metadata),
    'spec.model': a.spec.model,
    'spec.role': a.spec.role,
    'spec.lifecycle': a.spec.lifecycle,
    'status.status': a.status.status,
    'status.taskStatus': a.status.taskStatus,
  }),
};

/** The agent controller's clean-up (worker, workspace, events) runs before the agent goes. */
function addCleanupFinalizer(a: Agent): void {
  if (!a.metadata.finalizers?.includes(FINALIZER_AGENT_CLEANUP)) a.metadata.finalizers = [...(a.metadata.finalizers ?? []), FINALIZER_AGENT_CLEANUP];
}

/** Defaults of fields left out, on create and on every update (as Kubernetes defaults). */
function defaultSpec(a: Agent): void {
  a.spec.model ||= DEFAULT_MODEL;
  a.spec.templateRef ||= DEFAULT_TEMPLATE;
  a.spec.role ||= 'manager';
  a.spec.connectors ??= [];
  a.spec.lifecycle ??= '';
}
