// The agent's subresources:
//  - agents/<name>/events  GET: history (newest `limit`, default 50, max 200, a larger
//    one read as 200 as clients expect of page sizes; `before=<seq>`), as
//    an AgentEventList, the REST mirror's /api/v1/agents/:name/events;
//  - agents/<name>/cancel  POST: cancels the task in progress; 200 with the agent once the worker
//    confirmed, 202 if it did not in time; 200 with the agent and a Warning "nothing was running"
//    when no task is in progress (a cancel is idempotent);
//  - agents/<name>/compact POST: compacts the running task's session (an AgentCompaction), 409
//    when no task is in progress; the REST mirror's /api/v1/agents/:name/compact;
//  - agents/<name>/approvals GET: the running task's tool-call approvals (an AgentApprovalList);
//    POST {id, decision: allow|deny, reason?}: decides one (the AgentApproval as decided), 404 for
//    an unknown id, 409 for one decided already. Its own RBAC resource (agents/approvals, verb
//    create), apart from changing the agent;
//  - agents/<name>/messages POST {text, from?, wake?}: a message to the agent (an AgentMessage:
//    how it was delivered), 200 delivered, 202 queued while it sleeps; the REST mirror's
//    /api/v1/agents/:name/messages (docs/messages.md). Its own RBAC resource (agents/messages, create);
//  - agents/<name>/cost    GET: spending per task and per model (an AgentCost), the REST
//    mirror's /api/v1/agents/:name/cost, with the same `limit` and `events`;
//  - schedules/<name>/trigger POST: runs the schedule now (docs/schedules.md); 200 with the
//    schedule once its controller recorded the run, 202 if not yet;
//  - agents/<name>/log     GET: the current task's events, one JSON line each (`since=<seq>`
//    replays from there instead); with follow=true it then streams live events until the client
//    goes or the agent is deleted. Named "log" so kube-apiserver treats it as long-running.

import type { Agent } from '../../api/agent.js';
import { type Cause, invalid, notFound } from '../../api/errors.js';
import { EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from '../../api/event.js';
import { API_VERSION } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import type { Schedule } from '../../api/schedule.js';
import { followEvents, watchAgentGone } from '../event-follow.js';
import { triggerSchedule } from '../services/schedule-trigger.js';
import { boolParam, intParam, type Query } from './query.js';
import type { AggregatedApiDeps } from './resources.js';
import type { WatchSink } from './watch.js';

export async function agentEvents(d: AggregatedApiDeps, namespace: string, name: string, q: Query) {
  const limit = Math.min(intParam(q, 'limit', { min: 1 }) ?? EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
  const before = intParam(q, 'before', { min: 1 });
  const items = await d.agentService.history(namespace, name, limit, before);
  return { apiVersion: API_VERSION, kind: 'AgentEventList', metadata: {}, agent: name, namespace, items };
}

export async function cancelAgent(d: AggregatedApiDeps, namespace: string, name: string): Promise<{ code: number; body: Agent; warnings?: string[] }> {
  const { agent, settled, running } = await d.agentService.cancel(namespace, name);
  return { code: settled ? 200 : 202, body: agent, ...(running ? {} : { warnings: [`nothing was running: agent "${name}" has no task in progress`] }) };
}

export async function triggerScheduleNow(d: AggregatedApiDeps, namespace: string, name: string): Promise<{ code: number; body: Schedule }> {
  const { schedule, settled } = await triggerSchedule(d.schedules, namespace, name);
  return { code: settled ? 200 : 202, body: schedule };
}

const strings = (...fields: string[]): Record<string, { type: 'string' }> => Object.fromEntries(fields.map((f) => [f, { type: 'string' as const }]));

const dateTime = { type: 'string', format: 'date-time' } as const;

/** The typed fields of ObjectMeta (as published) that a subresource's envelope may carry. */
const envelopeMetaSchema = {
  type: 'object',
  properties: {
    ...strings('name', 'generateName', 'namespace', 'uid', 'resourceVersion'),
    creationTimestamp: dateTime,
    deletionTimestamp: dateTime,
    // An int64 in Kubernetes; here no larger than a number JSON's reader holds exactly.
    generation: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    finalizers: { type: 'array', items: { type: 'string' } },
    ownerReferences: {
      type: 'array',
      items: {
        type: 'object',
        required: ['apiVersion', 'kind', 'name', 'uid'],
        properties: { ...strings('apiVersion', 'kind', 'name', 'uid'), controller: { type: 'boolean' }, blockOwnerDeletion: { type: 'boolean' } },
      },
    },
    managedFields: {
      type: 'array',
      items: {
        type: 'object',
        properties: { ...strings('apiVersion', 'fieldsType', 'manager', 'operation', 'subresource'), time: dateTime, fieldsV1: { type: 'object' } },
      },
    },
  },
} as const;

/**
 * The request in a subresource create's body. kubectl sends `{}` or an object with apiVersion,
 * kind and metadata, which are the envelope, not the request's fields: each must have its type
 * (else 422, as for any object). Anything but an object goes to the request's validation as it is.
 */
function subresourceRequest(kind: string, body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const { apiVersion, kind: k, metadata, ...request } = body as Record<string, unknown>;
  const causes: Cause[] = [];
  if (apiVersion !== undefined && typeof apiVersion !== 'string') causes.push({ field: 'apiVersion', message: 'must be a string' });
  if (k !== undefined && typeof k !== 'string') causes.push({ field: 'kind', message: 'must be a string' });
  if (metadata !== undefined) causes.push(...validateSchema(envelopeMetaSchema, metadata, 'metadata'));
  if (causes.length) throw invalid(kind, undefined, causes);
  return request;
}

export async function compactAgent(d: AggregatedApiDeps, namespace: string, name: string, body: unknown) {
  const { response, code } = await d.compaction.compact(namespace, name, subresourceRequest('AgentCompaction', body));
  return { code, body: { apiVersion: API_VERSION, kind: 'AgentCompaction', metadata: {}, ...response } };
}

/** POST agents/<name>/messages: kubectl's apiVersion and kind (if sent) are not the request's fields. */
export async function messageAgent(d: AggregatedApiDeps, namespace: string, name: string, body: unknown, user: string) {
  const { response, code } = await d.messages.send(namespace, name, subresourceRequest('AgentMessage', body), user);
  return { code, body: { apiVersion: API_VERSION, kind: 'AgentMessage', metadata: {}, ...response } };
}

export async function agentApprovals(d: AggregatedApiDeps, namespace: string, name: string) {
  const items = await d.approvals.list(namespace, name);
  return { apiVersion: API_VERSION, kind: 'AgentApprovalList', metadata: {}, agent: name, namespace, items };
}

/** POST agents/<name>/approvals: the body names the approval (`id`) beside the decision. */
export async function decideAgentApproval(d: AggregatedApiDeps, namespace: string, name: string, body: unknown, user: string) {
  const { id, ...request } = (subresourceRequest('AgentApprovalDecision', body) ?? {}) as Record<string, unknown>;
  if (typeof id !== 'string' || id === '') {
    throw invalid('AgentApprovalDecision', undefined, [{ field: 'id', message: 'is required: the approval to decide (GET .../approvals lists them)' }]);
  }
  const approval = await d.approvals.decide(namespace, name, id, request, user);
  return { apiVersion: API_VERSION, kind: 'AgentApproval', metadata: {}, agent: name, namespace, ...approval };
}

/** The REST mirror's options (pkg/server/cost-query.ts), read with this API's parameter rules (400 BadRequest). */
export async function agentCost(d: AggregatedApiDeps, namespace: string, name: string, q: Query) {
  const limit = intParam(q, 'limit', { min: 0 });
  const events = boolParam(q, 'events') ?? false;
  boolParam(q, 'refresh'); // checked, and changes nothing: every answer is computed afresh
  const opts = { ...(limit ? { limit } : {}), ...(events ? { events } : {}) };
  return { apiVersion: API_VERSION, kind: 'AgentCost', metadata: {}, ...(await d.costs.cost(namespace, name, opts)) };
}

/** Checks the request and the agent; the returned function streams the log into a sink. */
export async function prepareAgentLog(d: AggregatedApiDeps, namespace: string, name: string, q: Query): Promise<(sink: WatchSink) => Promise<void>> {
  const follow = boolParam(q, 'follow') ?? false;
  const since = intParam(q, 'since', { min: 0 });
  // Readable while being deleted (the events stay until the agent is gone); a follow ends at once.
  const agent = await d.agents.get(namespace, name);
  if (!agent) throw notFound('Agent', name, namespace);

  return async (sink) => {
    let done = false;
    const following = followEvents(d.events, agent, (ev) => !done && sink.write(`${JSON.stringify(ev)}\n`), {
      follow,
      ...(since !== undefined ? { since } : {}),
    });
    // The stream ends with its agent: a deleted (or re-created) agent's events are gone.
    const unwatch = follow ? watchAgentGone(d.agents, agent, () => end()) : () => undefined;
    const stop = (): void => {
      done = true;
      following.stop();
      unwatch();
    };
    const end = (): void => {
      if (done) return;
      stop();
      sink.end();
    };
    sink.onClose(stop);
    try {
      await following.replayed;
    } catch {
      end();
      return;
    }
    if (!follow) end();
  };
}
