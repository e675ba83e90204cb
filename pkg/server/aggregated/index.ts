// The Kubernetes aggregated API of agentplane.io/v1alpha1, as a fastify plugin: discovery,
// OpenAPI v2/v3, the verbs on agents, squads and connectors (watch included), Table output, and
// the agent subresources. Encapsulated, with its own error handler: every failure leaves as a
// metav1.Status. Authentication and authorization are not done here (a filter runs before).
// It serves the embedded home as well: nothing here needs Kubernetes.

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, isApiError } from '../../api/errors.js';
import { GROUP, VERSION } from '../../api/meta.js';
import { toApiError } from '../app.js';
import { lenientJson, UnparsedBody, unsupportedMediaType } from '../body.js';
import { apiGroup, apiGroupList, apiResourceList } from './discovery.js';
import { openApiV2, openApiV3, openApiV3Index, type SerializedDoc, serialize, V3_GROUP_VERSION_PATH } from './openapi.js';
import { PATCH_CONTENT_TYPES } from './patch.js';
import { boolParam, type Query } from './query.js';
import { type AggregatedApiDeps, buildResources, type ResourceDef } from './resources.js';
import {
  agentApprovals,
  agentCost,
  agentEvents,
  cancelAgent,
  compactAgent,
  decideAgentApproval,
  messageAgent,
  prepareAgentLog,
  triggerScheduleNow,
} from './subresources.js';
import { ANONYMOUS } from '../audit/event.js';
import { createVerb, deleteCollectionVerb, deleteVerb, getVerb, listVerb, patchVerb, updateVerb, type VerbRequest, type VerbResponse } from './verbs.js';
import { statusOf } from './status.js';
import { prepareWatch, type WatchSink } from './watch.js';

export type { AggregatedApiDeps } from './resources.js';

const BASE = `/apis/${GROUP}/${VERSION}`;

interface Params {
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

export function aggregatedApiRoutes(deps: AggregatedApiDeps) {
  const resources = buildResources(deps);
  const byPlural = new Map(resources.map((r) => [r.plural, r]));
  let docs: { v2: SerializedDoc; v3: SerializedDoc } | undefined;
  const openapi = () => (docs ??= { v2: serialize(openApiV2(resources)), v3: serialize(openApiV3(resources)) });
  const watchOpts = deps.watch?.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: deps.watch.bookmarkIntervalMs } : {};
  const resourceOf = (plural: string): ResourceDef => {
    const def = byPlural.get(plural);
    if (!def) throw unknownPath();
    return def;
  };

  return async (app: FastifyInstance): Promise<void> => {
    installProtocol(app, resources);
    discoveryRoutes(app, resources, openapi);
    resourceRoutes(app, resourceOf, watchOpts);
    subresourceRoutes(app, deps, resourceOf);
    app.all('/apis/*', async () => {
      throw unknownPath();
    });
  };
}

/** Errors as metav1.Status, the body parsers of JSON and patch types, 405 for unknown methods. */
function installProtocol(app: FastifyInstance, resources: ResourceDef[]): void {
  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const apiErr =
      !isApiError(err) && err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? unsupportedMediaType(req.headers['content-type'] ?? '') : toApiError(err);
    if (apiErr.code >= 500) req.log.error({ err }, apiErr.code === 503 ? apiErr.message : 'request failed');
    const status = statusOf(apiErr, resources);
    void reply.status(status.code).type('application/json').send(status);
  });

  // JSON bodies may be empty (a DELETE without DeleteOptions; app-wide, see ../body.ts); patch
  // types parse as JSON, an apply configuration stays text for the YAML parser.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- fastify's default JSON parser is the callback form; its type also allows the async one
  const parseJson = lenientJson(app.getDefaultJsonParser('error', 'ignore'));
  const jsonPatchTypes = Object.entries(PATCH_CONTENT_TYPES)
    .filter(([, t]) => t !== 'apply')
    .map(([ct]) => ct);
  app.addContentTypeParser(jsonPatchTypes, { parseAs: 'string' }, parseJson);
  app.addContentTypeParser(['application/apply-patch+yaml', 'application/yaml'], { parseAs: 'string' }, (_req, body, done) => done(null, String(body)));

  // A method no route here serves (QUERY, say): 405 before body parsing, which would refuse
  // a bodiless one for its missing Content-Type (400) first.
  app.addHook('onRequest', async (req, reply) => {
    if (!KNOWN_METHODS.has(req.method)) throw methodNotAllowed(req, reply, allowedFor(req.url.split('?')[0]));
  });
}

function discoveryRoutes(app: FastifyInstance, resources: ResourceDef[], openapi: () => { v2: SerializedDoc; v3: SerializedDoc }): void {
  for (const slash of ['', '/']) {
    app.get(`/apis${slash}`, async () => apiGroupList());
    app.get(`/apis/${GROUP}${slash}`, async () => apiGroup());
    app.get(`${BASE}${slash}`, async () => apiResourceList(resources));
  }
  app.get('/openapi/v2', async (req, reply) => sendDoc(req, reply, openapi().v2, false));
  app.get('/openapi/v3', async () => openApiV3Index(openapi().v3));
  app.get(`/openapi/v3/${V3_GROUP_VERSION_PATH}`, async (req, reply) => sendDoc(req, reply, openapi().v3, true));
}

/** What a verb needs of a request; a body of a type no parser took is a 415. */
function verbRequest(req: FastifyRequest, p: Params, resourceOf: (plural: string) => ResourceDef): VerbRequest {
  if (req.body instanceof UnparsedBody && (req.body.text.trim() !== '' || req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH')) {
    throw unsupportedMediaType(req.body.contentType, `application/json, or for PATCH one of ${Object.keys(PATCH_CONTENT_TYPES).join(', ')}`);
  }
  return {
    def: resourceOf(p.resource),
    ...(p.namespace !== undefined ? { namespace: p.namespace } : {}),
    ...(p.name !== undefined ? { name: p.name } : {}),
    query: req.query as Query,
    ...(req.headers.accept ? { accept: req.headers.accept } : {}),
    ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
    ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
    body: req.body instanceof UnparsedBody ? undefined : req.body,
  };
}

/** The verbs on collections and objects, and watches (also on the deprecated /watch/ paths). */
function resourceRoutes(app: FastifyInstance, resourceOf: (plural: string) => ResourceDef, watchOpts: { bookmarkIntervalMs?: number }): void {
  const isWatch = (req: FastifyRequest): boolean => boolParam(req.query as Query, 'watch') === true;
  const watch = async (req: FastifyRequest, reply: FastifyReply, p: Params): Promise<void> => {
    const r = verbRequest(req, p, resourceOf);
    const run = prepareWatch({ def: r.def, namespace: r.namespace, name: r.name, query: r.query, accept: r.accept }, watchOpts);
    await stream(reply, 'application/json', run);
  };

  // All namespaces: list and watch only.
  app.all<{ Params: Params }>(`${BASE}/:resource`, async (req, reply) => {
    const p = req.params;
    resourceOf(p.resource);
    if (req.method !== 'GET') throw methodNotAllowed(req, reply, ['GET']);
    if (isWatch(req)) return watch(req, reply, p);
    return send(reply, await listVerb(verbRequest(req, p, resourceOf)));
  });

  // Creating an agent starts its first task; an update or patch may assign the next: each is the
  // root span of the task's trace (../request-spans.ts).
  const creates = { startsTask: { methods: ['POST'], resources: ['agents'] } };
  app.all<{ Params: Params }>(`${BASE}/namespaces/:namespace/:resource`, { config: creates }, async (req, reply) => {
    const p = req.params;
    const r = verbRequest(req, p, resourceOf);
    switch (req.method) {
      case 'GET':
        if (isWatch(req)) return watch(req, reply, p);
        return send(reply, await listVerb(r));
      case 'POST':
        return send(reply, await createVerb(r));
      case 'DELETE':
        return send(reply, await deleteCollectionVerb(r));
      default:
        throw methodNotAllowed(req, reply, ['GET', 'POST', 'DELETE']);
    }
  });

  const writes = { startsTask: { methods: ['PUT', 'PATCH'], resources: ['agents'] } };
  app.all<{ Params: Params }>(`${BASE}/namespaces/:namespace/:resource/:name`, { config: writes }, async (req, reply) => {
    const r = verbRequest(req, req.params, resourceOf);
    switch (req.method) {
      case 'GET':
        return send(reply, await getVerb(r));
      case 'PUT':
        return send(reply, await updateVerb(r));
      case 'PATCH':
        return send(reply, await patchVerb(r));
      case 'DELETE':
        return send(reply, await deleteVerb(r));
      default:
        throw methodNotAllowed(req, reply, ['GET', 'PUT', 'PATCH', 'DELETE']);
    }
  });

  // The deprecated /watch/ paths.
  const watchOnly = async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<void> => {
    resourceOf(req.params.resource);
    if (req.method !== 'GET') throw methodNotAllowed(req, reply, ['GET']);
    return watch(req, reply, req.params);
  };
  app.all(`${BASE}/watch/:resource`, watchOnly);
  app.all(`${BASE}/watch/namespaces/:namespace/:resource`, watchOnly);
  app.all(`${BASE}/watch/namespaces/:namespace/:resource/:name`, watchOnly);
}

/** agents/<name>/events, /approvals, /cancel, /compact, /cost, /log and /messages; schedules/<name>/trigger. */
function subresourceRoutes(app: FastifyInstance, deps: AggregatedApiDeps, resourceOf: (plural: string) => ResourceDef): void {
  app.all<{ Params: Required<Params> }>(`${BASE}/namespaces/:namespace/:resource/:name/:subresource`, async (req, reply) => {
    const { namespace, resource, name, subresource } = req.params;
    const def = resourceOf(resource);
    const sub = def.subresources.find((s) => s.name === subresource);
    if (!sub) throw unknownPath();
    const q = req.query as Query;
    if (subresource === 'events' && req.method === 'GET') return send(reply, { code: 200, body: await agentEvents(deps, namespace, name, q) });
    if (subresource === 'cancel' && req.method === 'POST') return send(reply, await cancelAgent(deps, namespace, name));
    if (subresource === 'trigger' && req.method === 'POST') return send(reply, await triggerScheduleNow(deps, namespace, name));
    if (subresource === 'approvals' && req.method === 'GET') return send(reply, { code: 200, body: await agentApprovals(deps, namespace, name) });
    if (subresource === 'approvals' && req.method === 'POST') {
      const user = req.user?.username ?? ANONYMOUS.username;
      return send(reply, { code: 200, body: await decideAgentApproval(deps, namespace, name, req.body, user) });
    }
    if (subresource === 'messages' && req.method === 'POST') {
      const user = req.user?.username ?? ANONYMOUS.username;
      return send(reply, await messageAgent(deps, namespace, name, req.body, user));
    }
    if (subresource === 'compact' && req.method === 'POST') return send(reply, await compactAgent(deps, namespace, name, req.body));
    if (subresource === 'cost' && req.method === 'GET') return send(reply, { code: 200, body: await agentCost(deps, namespace, name, q) });
    if (subresource === 'log' && req.method === 'GET') {
      const run = await prepareAgentLog(deps, namespace, name, q);
      return stream(reply, 'text/plain; charset=utf-8', run);
    }
    throw methodNotAllowed(req, reply, subresource === 'approvals' ? ['GET', 'POST'] : [POST_SUBRESOURCES.has(subresource) ? 'POST' : 'GET']);
  });
}

function send(reply: FastifyReply, res: VerbResponse): FastifyReply {
  for (const w of res.warnings ?? []) void reply.header('Warning', `299 - ${quoteWarning(w)}`);
  return reply.status(res.code).type('application/json').send(res.body);
}

/**
 * A warning's text as a quoted string of printable ASCII, in the escapes Go's strconv.Unquote
 * reads (kubectl's): a warning names fields the client sent, and a header value may hold no
 * control characters (no header injection) nor, for Node, characters past U+00FF.
 */
export function quoteWarning(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd';
    else if (cp > 0xffff) out += `\\U${cp.toString(16).padStart(8, '0')}`;
    else out += `\\u${cp.toString(16).padStart(4, '0')}`;
  }
  return `${out}"`;
}

/** Streams a long-running response (watch, log follow): headers now, lines as they come. */
async function stream(reply: FastifyReply, contentType: string, run: (sink: WatchSink) => Promise<void>): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache, private' });
  res.flushHeaders?.();
  const sink: WatchSink = {
    write: (line) => void res.write(line),
    end: () => void res.end(),
    onClose: (fn) => void res.on('close', fn),
  };
  try {
    await run(sink);
  } catch (err) {
    reply.log.error({ err }, 'stream failed');
    res.end();
  }
}

/** OpenAPI documents: JSON whatever the Accept (protobuf is not served), with ETags. */
function sendDoc(req: FastifyRequest, reply: FastifyReply, doc: SerializedDoc, hashed: boolean): FastifyReply {
  const etag = `"${doc.etag}"`;
  void reply.header('ETag', etag).header('Vary', 'Accept');
  const hash = (req.query as Query).hash;
  if (hashed && hash === doc.etag) void reply.header('Cache-Control', 'public, immutable');
  else void reply.header('Cache-Control', 'no-cache, private');
  if (req.headers['if-none-match'] === etag) return reply.status(304).send();
  return reply.status(200).type('application/json').send(doc.body);
}

/** Subresources written with POST (a create); the others are read with GET. */
const POST_SUBRESOURCES = new Set(['cancel', 'compact', 'messages', 'trigger']);

const unknownPath = (): ApiError => new ApiError('NotFound', 404, 'the server could not find the requested resource');

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The methods the routes below serve on `path` (for a 405's `Allow`). */
function allowedFor(path: string): string[] {
  const parts = path.startsWith(`${BASE}/`)
    ? path
        .slice(BASE.length + 1)
        .split('/')
        .filter(Boolean)
    : [];
  if (parts[0] !== 'namespaces') return ['GET'];
  if (parts.length === 3) return ['GET', 'POST', 'DELETE'];
  if (parts.length === 4) return ['GET', 'PUT', 'PATCH', 'DELETE'];
  if (parts.length === 5 && POST_SUBRESOURCES.has(parts[4])) return ['POST'];
  if (parts.length === 5 && parts[4] === 'approvals') return ['GET', 'POST'];
  return ['GET'];
}

/** 405 with the `Allow` header RFC 9110 asks for, as the REST mirror answers. */
function methodNotAllowed(req: FastifyRequest, reply: FastifyReply, allowed: string[]): ApiError {
  void reply.header('Allow', allowed.join(', '));
  return new ApiError('MethodNotAllowed', 405, `the server does not allow this method on the requested resource: ${req.method} ${req.url.split('?')[0]}`);
}
