// The OpenAPI documents of agentplane.io/v1alpha1: /openapi/v2 (Swagger 2.0, merged by
// kube-apiserver's aggregator) and /openapi/v3 (index) + /openapi/v3/apis/agentplane.io/v1alpha1.
// Operations carry x-kubernetes-action and x-kubernetes-group-version-kind; the PATCH operations
// list dryRun and fieldValidation, which is how kubectl finds out it may use server-side dry run
// and field validation.

import { createHash } from 'node:crypto';
import { COST_EVENTS_MAX_TASKS } from '../../api/agent-cost.js';
import { EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from '../../api/event.js';
import { API_VERSION, GROUP, VERSION } from '../../api/meta.js';
import { definitions, META, OWN, ref, type Schema } from './openapi-definitions.js';
import { PATCH_CONTENT_TYPES } from './patch.js';
import type { ResourceDef } from './resources.js';

interface Param {
  name: string;
  in: 'path' | 'query';
  type: 'string' | 'integer' | 'boolean';
  description: string;
  required?: boolean;
}

interface Op {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  id: string;
  action: string;
  description: string;
  params: Param[];
  body?: { ref: string; required: boolean; consumes?: string[] };
  responses: Record<string, { ref?: string; description: string }>;
  produces?: string[];
  kind?: string;
}

interface PathItem {
  params: Param[];
  ops: Op[];
}

const q = (name: string, type: Param['type'], description: string): Param => ({ name, in: 'query', type, description });
const P = {
  namespace: {
    name: 'namespace',
    in: 'path',
    type: 'string',
    required: true,
    description: 'object name and auth scope, such as for teams and projects',
  } as Param,
  name: (kind: string): Param => ({ name: 'name', in: 'path', type: 'string', required: true, description: `name of the ${kind}` }),
  pretty: q('pretty', 'string', "If 'true', then the output is pretty printed (accepted; output is compact)."),
  dryRun: q('dryRun', 'string', 'When present, indicates that modifications should not be persisted. Valid value: All.'),
  fieldManager: q('fieldManager', 'string', 'A name associated with the actor making these changes; required for apply.'),
  fieldValidation: q(
    'fieldValidation',
    'string',
    'How to treat unknown fields in the object: Ignore, Warn (default) or Strict. Unknown fields inside spec are always refused.',
  ),
  force: q('force', 'boolean', 'Force apply requests (accepted; field ownership is not tracked).'),
  labelSelector: q('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels.'),
  fieldSelector: q(
    'fieldSelector',
    'string',
    'A selector to restrict the list of returned objects by their fields (metadata.name, metadata.namespace, and per resource).',
  ),
  limit: q('limit', 'integer', 'At most this many objects; when more follow, metadata.continue and metadata.remainingItemCount are set.'),
  continue: q('continue', 'string', "The previous page's metadata.continue: the next page of the same snapshot (410 Expired when it is gone)."),
  resourceVersion: q(
    'resourceVersion',
    'string',
    'Get and list: unset or "" is a consistent read, "0" any cached state, N not older than N. Watch: changes after this version ("" or "0": the current objects first).',
  ),
  resourceVersionMatch: q(
    'resourceVersionMatch',
    'string',
    'List: NotOlderThan or Exact (the objects as they were at resourceVersion). Watch: NotOlderThan, with sendInitialEvents.',
  ),
  sendInitialEvents: q('sendInitialEvents', 'boolean', 'Watch: start with the current objects, then a BOOKMARK annotated k8s.io/initial-events-end.'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  watch: q('watch', 'boolean', 'Watch for changes and return them as a stream of add, update, and remove notifications.'),
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Requests watch events with type "BOOKMARK".'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'Accepted and ignored.'),
  propagationPolicy: q(
    'propagationPolicy',
    'string',
    'Orphan, Background (the default) or Foreground: whether and how the garbage collector deletes dependents.',
  ),
};
const listParams = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const JSON_TYPES = ['application/json'];
const WATCH_TYPES = ['application/json', 'application/json;stream=watch'];

/** kube's operation ids: e.g. listAgentplaneIoV1alpha1NamespacedAgent. */
const GV_ID = `${GROUP.split('.')
  .map((s) => s[0].toUpperCase() + s.slice(1))
  .join('')}${VERSION[0].toUpperCase()}${VERSION.slice(1)}`;

function resourcePaths(r: ResourceDef): Record<string, PathItem> {
  const base = `/apis/${API_VERSION}`;
  const obj = `${OWN}.${r.kind}`;
  const list = `${OWN}.${r.listKind}`;
  const k = r.kind;
  const ok = (refName: string, description = 'OK') => ({ ref: refName, description });
  const paths: Record<string, PathItem> = {
    [`${base}/namespaces/{namespace}/${r.plural}`]: {
      params: [P.namespace, P.pretty],
      ops: [
        {
          method: 'get',
          id: `list${GV_ID}Namespaced${k}`,
          action: 'list',
          description: `list or watch objects of kind ${k}`,
          params: listParams,
          responses: { '200': ok(list) },
          produces: WATCH_TYPES,
          kind: k,
        },
        {
          method: 'post',
          id: `create${GV_ID}Namespaced${k}`,
          action: 'post',
          description: `create a ${k}`,
          params: [P.dryRun, P.fieldManager, P.fieldValidation],
          body: { ref: obj, required: true },
          responses: { '200': ok(obj), '201': ok(obj, 'Created'), '202': ok(obj, 'Accepted') },
          kind: k,
        },
        {
          method: 'delete',
          id: `delete${GV_ID}CollectionNamespaced${k}`,
          action: 'deletecollection',
          description: `delete collection of ${k}`,
          params: [...listParams, P.dryRun, P.gracePeriodSeconds, P.propagationPolicy],
          body: { ref: `${META}.DeleteOptions`, required: false },
          responses: { '200': ok(list) },
          kind: k,
        },
      ],
    },
    [`${base}/namespaces/{namespace}/${r.plural}/{name}`]: {
      params: [P.name(k), P.namespace, P.pretty],
      ops: [
        {
          method: 'get',
          id: `read${GV_ID}Namespaced${k}`,
          action: 'get',
          description: `read the specified ${k}`,
          params: [],
          responses: { '200': ok(obj) },
          kind: k,
        },
        {
          method: 'put',
          id: `replace${GV_ID}Namespaced${k}`,
          action: 'put',
          description: `replace the specified ${k}`,
          params: [P.dryRun, P.fieldManager, P.fieldValidation],
          body: { ref: obj, required: true },
          responses: { '200': ok(obj), '201': ok(obj, 'Created') },
          kind: k,
        },
        {
          method: 'patch',
          id: `patch${GV_ID}Namespaced${k}`,
          action: 'patch',
          description: `partially update the specified ${k} (merge, JSON or server-side apply; not strategic merge)`,
          params: [P.dryRun, P.fieldManager, P.fieldValidation, P.force],
          body: { ref: `${META}.Patch`, required: true, consumes: Object.keys(PATCH_CONTENT_TYPES) },
          responses: { '200': ok(obj), '201': ok(obj, 'Created') },
          kind: k,
        },
        {
          method: 'delete',
          id: `delete${GV_ID}Namespaced${k}`,
          action: 'delete',
          description: `delete a ${k}${r.kind === 'Agent' ? ' (it stays, with metadata.deletionTimestamp, until its workspace is cleaned up and its finalizers are removed)' : ''}`,
          params: [P.dryRun, P.gracePeriodSeconds, P.propagationPolicy],
          body: { ref: `${META}.DeleteOptions`, required: false },
          responses: { '200': ok(obj), '202': ok(obj, 'Accepted') },
          kind: k,
        },
      ],
    },
    [`${base}/${r.plural}`]: {
      params: [P.pretty],
      ops: [
        {
          method: 'get',
          id: `list${GV_ID}${k}ForAllNamespaces`,
          action: 'list',
          description: `list or watch objects of kind ${k}`,
          params: listParams,
          responses: { '200': ok(list) },
          produces: WATCH_TYPES,
          kind: k,
        },
      ],
    },
    [`${base}/watch/namespaces/{namespace}/${r.plural}`]: {
      params: [P.namespace, P.pretty, ...listParams],
      ops: [
        {
          method: 'get',
          id: `watch${GV_ID}Namespaced${k}List`,
          action: 'watchlist',
          description: `watch individual changes to a list of ${k}. deprecated: use the 'watch' parameter with a list operation instead.`,
          params: [],
          responses: { '200': ok(`${META}.WatchEvent`) },
          produces: WATCH_TYPES,
          kind: k,
        },
      ],
    },
    [`${base}/watch/namespaces/{namespace}/${r.plural}/{name}`]: {
      params: [P.name(k), P.namespace, P.pretty, ...listParams],
      ops: [
        {
          method: 'get',
          id: `watch${GV_ID}Namespaced${k}`,
          action: 'watch',
          description: `watch changes to an object of kind ${k}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
          params: [],
          responses: { '200': ok(`${META}.WatchEvent`) },
          produces: WATCH_TYPES,
          kind: k,
        },
      ],
    },
    [`${base}/watch/${r.plural}`]: {
      params: [P.pretty, ...listParams],
      ops: [
        {
          method: 'get',
          id: `watch${GV_ID}${k}ListForAllNamespaces`,
          action: 'watchlist',
          description: `watch individual changes to a list of ${k}. deprecated: use the 'watch' parameter with a list operation instead.`,
          params: [],
          responses: { '200': ok(`${META}.WatchEvent`) },
          produces: WATCH_TYPES,
          kind: k,
        },
      ],
    },
  };
  if (r.kind === 'Agent') Object.assign(paths, agentSubresourcePaths(base, r));
  if (r.kind === 'Schedule') Object.assign(paths, scheduleSubresourcePaths(base, r));
  return paths;
}

function scheduleSubresourcePaths(base: string, r: ResourceDef): Record<string, PathItem> {
  return {
    [`${base}/namespaces/{namespace}/${r.plural}/{name}/trigger`]: {
      params: [P.name(r.kind), P.namespace, P.pretty],
      ops: [
        {
          method: 'post',
          id: `create${GV_ID}Namespaced${r.kind}Trigger`,
          action: 'post',
          description:
            'run the schedule now, whatever its cron and suspend say (its concurrencyPolicy still applies); 200 with the schedule once the run is recorded in status.lastRun, 202 if not yet',
          params: [],
          responses: { '200': { ref: `${OWN}.${r.kind}`, description: 'OK' }, '202': { ref: `${OWN}.${r.kind}`, description: 'Accepted' } },
        },
      ],
    },
  };
}

function agentSubresourcePaths(base: string, r: ResourceDef): Record<string, PathItem> {
  const one = `${base}/namespaces/{namespace}/${r.plural}/{name}`;
  const params = [P.name(r.kind), P.namespace, P.pretty];
  return {
    [`${one}/events`]: {
      params,
      ops: [
        {
          method: 'get',
          id: `read${GV_ID}Namespaced${r.kind}Events`,
          action: 'get',
          description: "read the agent's most recent events (history), oldest first",
          params: [
            q(
              'limit',
              'integer',
              `At most this many events (default ${EVENTS_DEFAULT_LIMIT}, max ${EVENTS_MAX_LIMIT}; a larger value is read as ${EVENTS_MAX_LIMIT}).`,
            ),
            q('before', 'integer', 'Only events with a seq below this.'),
          ],
          responses: { '200': { ref: `${OWN}.AgentEventList`, description: 'OK' } },
        },
      ],
    },
    [`${one}/approvals`]: {
      params,
      ops: [
        {
          method: 'get',
          id: `read${GV_ID}Namespaced${r.kind}Approvals`,
          action: 'get',
          description: "list the running task's tool-call approvals, pending first (docs/approvals.md)",
          params: [],
          responses: { '200': { ref: `${OWN}.AgentApprovalList`, description: 'OK' } },
        },
        {
          method: 'post',
          id: `create${GV_ID}Namespaced${r.kind}Approvals`,
          action: 'post',
          description:
            'decide a pending tool-call approval: {"id": "<approval id>", "decision": "allow" | "deny", "reason": "..."}; RBAC: create on agents/approvals. 404 for an unknown id, 409 for one decided already',
          body: { ref: `${OWN}.AgentApprovalDecision`, required: true },
          params: [],
          responses: { '200': { ref: `${OWN}.AgentApproval`, description: 'OK' } },
        },
      ],
    },
    [`${one}/cancel`]: {
      params,
      ops: [
        {
          method: 'post',
          id: `create${GV_ID}Namespaced${r.kind}Cancel`,
          action: 'post',
          description:
            'cancel the agent\'s task in progress; 200 once the worker confirmed, 202 if not yet; 200 with a Warning "nothing was running" when there is none (a cancel is idempotent)',
          params: [],
          responses: { '200': { ref: `${OWN}.${r.kind}`, description: 'OK' }, '202': { ref: `${OWN}.${r.kind}`, description: 'Accepted' } },
        },
      ],
    },
    [`${one}/messages`]: {
      params,
      ops: [
        {
          method: 'post',
          id: `create${GV_ID}Namespaced${r.kind}Messages`,
          action: 'post',
          description:
            'send the agent a message (docs/messages.md): {"text": "...", "from": "<agent of the namespace, or a person>", "wake": false}; into its running task as a follow-up, as a new task when idle (200), or queued while it sleeps (202; "wake": true wakes it). RBAC: create on agents/messages',
          body: { ref: `${OWN}.AgentMessageRequest`, required: true },
          params: [],
          responses: { '200': { ref: `${OWN}.AgentMessage`, description: 'OK' }, '202': { ref: `${OWN}.AgentMessage`, description: 'Accepted' } },
        },
      ],
    },
    [`${one}/compact`]: {
      params,
      ops: [
        {
          method: 'post',
          id: `create${GV_ID}Namespaced${r.kind}Compact`,
          action: 'post',
          description:
            'compact the running task\'s session with the engine\'s own compaction, after its current turn (a context_compacted event follows); 409 when no task is in progress. Body: {} or {"instructions": "what the summary should keep"}',
          params: [],
          responses: { '200': { ref: `${OWN}.AgentCompaction`, description: 'OK' }, '202': { ref: `${OWN}.AgentCompaction`, description: 'Accepted' } },
        },
      ],
    },
    [`${one}/cost`]: {
      params,
      ops: [
        {
          method: 'get',
          id: `read${GV_ID}Namespaced${r.kind}Cost`,
          action: 'get',
          description: "read the agent's spending per task and per model, summed from its events",
          params: [
            q('limit', 'integer', 'Only the newest this many tasks (0 or absent: all); the totals cover every task.'),
            q('events', 'boolean', `Include each task's events (then at most ${COST_EVENTS_MAX_TASKS} tasks).`),
          ],
          responses: { '200': { ref: `${OWN}.AgentCost`, description: 'OK' } },
        },
      ],
    },
    [`${one}/log`]: {
      params,
      ops: [
        {
          method: 'get',
          id: `read${GV_ID}Namespaced${r.kind}Log`,
          action: 'get',
          description:
            "read the agent's events as lines of JSON: the current task's (or all after `since`), then live ones with follow=true until the agent is deleted (the response then ends)",
          params: [q('follow', 'boolean', 'Keep streaming live events.'), q('since', 'integer', 'Replay every event with a greater seq (0: all).')],
          responses: { '200': { description: 'one JSON event per line' } },
          produces: ['text/plain'],
        },
      ],
    },
  };
}

const gvkOf = (kind: string) => ({ group: GROUP, version: VERSION, kind });

// The refusals each operation may answer, every one a metav1.Status (kube-apiserver's documents
// list only 2xx and 401; these are listed so that a client, and `make fuzz`, knows every code).
// Reads: a malformed parameter (400), 403, an object that is not there (404), an Accept it cannot
// serve (406), the rate limit (429); lists and watches also an expired continue token or
// resourceVersion (410) and list options that do not fit together (422). Writes also: 409
// AlreadyExists/Conflict, 413 over the body limit, 415 an unread content type, 422 Invalid.
const READ_ERRORS: Record<string, string> = {
  '400': 'BadRequest',
  '403': 'Forbidden',
  '404': 'NotFound',
  '406': 'NotAcceptable',
  '429': 'TooManyRequests',
};
const LIST_ERRORS: Record<string, string> = { ...READ_ERRORS, '410': 'Expired', '422': 'Invalid' };
const WRITE_ERRORS: Record<string, string> = {
  ...READ_ERRORS,
  '409': 'AlreadyExists or Conflict',
  '413': 'RequestEntityTooLarge',
  '415': 'UnsupportedMediaType',
  '422': 'Invalid',
};

function errorResponses(op: Op): Record<string, string> {
  if (op.method !== 'get') return WRITE_ERRORS;
  return ['list', 'watch', 'watchlist'].includes(op.action) ? LIST_ERRORS : READ_ERRORS;
}

function allPaths(resources: ResourceDef[]): Record<string, PathItem> {
  const out: Record<string, PathItem> = {};
  for (const p of resources.map(resourcePaths)) Object.assign(out, p);
  return out;
}

// ---- Swagger 2.0 -------------------------------------------------------------------------------

const v2Param = (p: Param): Schema => ({
  name: p.name,
  in: p.in,
  type: p.type,
  description: p.description,
  ...(p.required ? { required: true } : {}),
  uniqueItems: true,
});

function v2Op(op: Op): Schema {
  return {
    description: op.description,
    operationId: op.id,
    tags: [`${GV_ID[0].toLowerCase()}${GV_ID.slice(1)}`],
    consumes: op.body?.consumes ?? ['*/*'],
    produces: op.produces ?? JSON_TYPES,
    schemes: ['https'],
    parameters: [...(op.body ? [{ name: 'body', in: 'body', required: op.body.required, schema: ref(op.body.ref) }] : []), ...op.params.map(v2Param)],
    responses: {
      ...Object.fromEntries(
        Object.entries(op.responses).map(([code, r]) => [
          code,
          { description: r.description, ...(r.ref ? { schema: ref(r.ref) } : { schema: { type: 'string' } }) },
        ]),
      ),
      '401': { description: 'Unauthorized' },
      ...Object.fromEntries(Object.entries(errorResponses(op)).map(([code, d]) => [code, { description: d, schema: ref(`${META}.Status`) }])),
    },
    'x-kubernetes-action': op.action,
    ...(op.kind ? { 'x-kubernetes-group-version-kind': gvkOf(op.kind) } : {}),
  };
}

export function openApiV2(resources: ResourceDef[]): Schema {
  const paths = Object.fromEntries(
    Object.entries(allPaths(resources)).map(([path, item]) => [
      path,
      { parameters: item.params.map(v2Param), ...Object.fromEntries(item.ops.map((op) => [op.method, v2Op(op)])) },
    ]),
  );
  return {
    swagger: '2.0',
    info: { title: 'agentplane', version: VERSION },
    paths,
    definitions: definitions(resources),
  };
}

// ---- OpenAPI 3.0 -------------------------------------------------------------------------------

/** Swagger refs (#/definitions/) become OpenAPI 3 refs (#/components/schemas/). */
const toV3Refs = <T>(v: T): T => JSON.parse(JSON.stringify(v).replaceAll('"#/definitions/', '"#/components/schemas/')) as T;

const v3Param = (p: Param): Schema => ({
  name: p.name,
  in: p.in,
  description: p.description,
  ...(p.required ? { required: true } : {}),
  schema: { type: p.type, uniqueItems: true },
});

function v3Op(op: Op): Schema {
  const produces = op.produces ?? JSON_TYPES;
  return {
    tags: [`${GV_ID[0].toLowerCase()}${GV_ID.slice(1)}`],
    description: op.description,
    operationId: op.id,
    parameters: op.params.map(v3Param),
    ...(op.body
      ? {
          requestBody: {
            content: Object.fromEntries((op.body.consumes ?? ['*/*']).map((ct) => [ct, { schema: ref(op.body!.ref) }])),
            required: op.body.required,
          },
        }
      : {}),
    responses: {
      ...Object.fromEntries(
        Object.entries(op.responses).map(([code, r]) => [
          code,
          { description: r.description, content: Object.fromEntries(produces.map((ct) => [ct, { schema: r.ref ? ref(r.ref) : { type: 'string' } }])) },
        ]),
      ),
      '401': { description: 'Unauthorized' },
      ...Object.fromEntries(
        Object.entries(errorResponses(op)).map(([code, d]) => [code, { description: d, content: { 'application/json': { schema: ref(`${META}.Status`) } } }]),
      ),
    },
    'x-kubernetes-action': op.action,
    ...(op.kind ? { 'x-kubernetes-group-version-kind': gvkOf(op.kind) } : {}),
  };
}

export function openApiV3(resources: ResourceDef[]): Schema {
  const paths = Object.fromEntries(
    Object.entries(allPaths(resources)).map(([path, item]) => [
      path,
      { parameters: item.params.map(v3Param), ...Object.fromEntries(item.ops.map((op) => [op.method, v3Op(op)])) },
    ]),
  );
  return toV3Refs({
    openapi: '3.0.0',
    info: { title: 'agentplane', version: VERSION },
    paths,
    components: { schemas: definitions(resources) },
  });
}

/** The path of our group-version in the OpenAPI v3 index (without the leading /openapi/v3/). */
export const V3_GROUP_VERSION_PATH = `apis/${API_VERSION}`;

/** Serialized documents with their ETags (kube-openapi's: upper-case hex SHA-512). */
export interface SerializedDoc {
  body: string;
  etag: string;
}

export function serialize(doc: unknown): SerializedDoc {
  const body = JSON.stringify(doc);
  return { body, etag: createHash('sha512').update(body).digest('hex').toUpperCase() };
}

/** GET /openapi/v3: the group-versions we serve and where their documents are. */
export const openApiV3Index = (v3: SerializedDoc) => ({
  paths: { [V3_GROUP_VERSION_PATH]: { serverRelativeURL: `/openapi/v3/${V3_GROUP_VERSION_PATH}?hash=${v3.etag}` } },
});
