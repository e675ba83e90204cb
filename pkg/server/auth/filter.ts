// The authn/authz filter: fastify hooks that authenticate every request and authorize it
// before any handler runs. The cluster home gives it delegated authn/authz (front proxy, client
// certificate, TokenReview; SubjectAccessReview), the embedded home a token file (bearer
// tokens scoped to namespaces and verbs, token-file.ts). Refusals are metav1.Status for Kubernetes paths
// and the REST error body for the /api/v1 mirror.
//
// Authentication and, where the URL says everything, authorization happen in onRequest, before
// the body is read. Creates through the mirror name their namespace in the body, so those are
// authorized in preValidation, after parsing and before any route's own preValidation (root
// hooks run first) or handler.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, internalError, isApiError } from '../../api/errors.js';
import { CONNECTOR_GATEWAY_PATH, CONTROL_PATH, MEMORY_TOOL_PATH, MODEL_PROXY_PATH } from '../../api/worker-protocol.js';
import { planFor, type AuthorizationPlan, type RequestAttributes } from './attributes.js';
import type { DelegatedAuthenticator } from './authenticator.js';
import type { DelegatedAuthorizer } from './authorizer.js';
import type { UserInfo } from './user.js';
import { pathOf, sendError } from '../error-reply.js';
import type { Revocable } from './revocation.js';
import { peerChainOf } from './x509.js';
import { underAny } from '../path-prefix.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller (undefined without auth and on unauthenticated paths). */
    user?: UserInfo;
    /**
     * What the filter authorized the request as (every check, in order), once it has; the
     * audit log names the first (pkg/server/audit).
     */
    authorizedAs?: RequestAttributes[];
    /**
     * On a WebSocket upgrade: calls `fn` once if the credential the request was authenticated
     * with is revoked while the socket lives (revocation.ts); returns a function that stops
     * listening. Undefined when the credential cannot be revoked (or there is no auth). Other
     * requests need nothing: the filter ends their response itself.
     */
    onCredentialRevoked?: (fn: (reason: string) => void) => () => void;
  }
}

/**
 * Served without authentication or authorization: kubelet probes carry no credentials. This is
 * kube's delegated-authorization default (AlwaysAllowPaths /healthz, /readyz, /livez).
 */
export const ALWAYS_ALLOW_PATHS = ['/healthz', '/readyz', '/livez'];
/**
 * Not for users at all: the worker control channel, the model proxy and the connector gateway
 * (and everything under them) authenticate workers with their own per-agent credentials.
 */
export const BYPASS_PATHS = [CONTROL_PATH, MODEL_PROXY_PATH, CONNECTOR_GATEWAY_PATH, MEMORY_TOOL_PATH];
/**
 * Served without authentication or authorization: the dashboard's static files
 * (pkg/server/routes/ui.ts). They hold no data; the page's API calls carry the user's token and
 * meet this filter like any other client's. Exactly the paths the dashboard serves (/ui, /ui/,
 * /ui/assets/<file>, and its icon at /favicon.ico): a prefix match would let /ui/../api/...
 * through on a router that resolved dot segments.
 */
const STATIC_RE = /^\/(favicon\.ico|ui(\/|\/assets\/[A-Za-z0-9_-][A-Za-z0-9._-]*)?)$/;
const isStatic = (path: string): boolean => STATIC_RE.test(path);
/**
 * Served without a bearer token: a Trigger's hook, POST /api/v1/triggers/<name>/hook, which
 * external senders (GitHub, Slack) call with no token of ours. The route authenticates each
 * request itself by the HMAC signature of its body with the trigger's secret
 * (pkg/server/services/trigger-hooks.ts; docs/security.md). Exactly that method and path shape.
 */
const TRIGGER_HOOK_RE = /^\/api\/v1\/triggers\/[a-z0-9]([-a-z0-9]*[a-z0-9])?\/hook$/;
export const isTriggerHook = (method: string, path: string): boolean => method === 'POST' && TRIGGER_HOOK_RE.test(path);

export interface AuthFilterOptions {
  authenticator: Pick<DelegatedAuthenticator, 'authenticate' | 'isIdentityHeader'>;
  authorizer: Pick<DelegatedAuthorizer, 'authorize'>;
  alwaysAllowPaths?: string[];
  bypassPaths?: string[];
  /**
   * Whether an agent exists, for POST /api/v1/agents: a new agent needs `create`, a task for an
   * existing one needs `update`. Without it (or when it fails) both are required.
   */
  agentExists?: (namespace: string, name: string) => Promise<boolean>;
}

/**
 * A home's auth, ready for the filter: the cluster home's delegated authn/authz
 * (delegated.ts) or the embedded home's token file (token-file.ts).
 */
export interface RequestAuth extends Pick<AuthFilterOptions, 'authenticator' | 'authorizer' | 'alwaysAllowPaths'> {
  stop(): void;
}

const AUTHORIZED = Symbol('agentplane.authorized');
type Marked = FastifyRequest & { [AUTHORIZED]?: boolean };

/** Adds the hooks to `app` itself (call before registering routes, on the root instance). */
export function installAuthFilter(app: FastifyInstance, opts: AuthFilterOptions): void {
  const alwaysAllow = new Set(opts.alwaysAllowPaths ?? ALWAYS_ALLOW_PATHS);
  const bypassed = opts.bypassPaths ?? BYPASS_PATHS;
  const bypass = { has: (path: string): boolean => underAny(path, bypassed) };

  app.addHook('onRequest', async (req, reply) => {
    const path = pathOf(req.url);
    if (bypass.has(path)) return;
    const rawHeaders = req.raw.rawHeaders;
    stripIdentityHeaders(req, opts.authenticator);
    if (alwaysAllow.has(path) || isStatic(path) || isTriggerHook(req.method, path)) {
      (req as Marked)[AUTHORIZED] = true;
      return;
    }

    const result = await opts.authenticator.authenticate({ peer: peerChainOf(req.raw.socket), rawHeaders });
    if (!result.user) {
      req.log.debug({ path, errors: result.errors }, 'unauthenticated request');
      return refuse(req, reply, new ApiError('Unauthorized', 401, 'Unauthorized'));
    }
    req.user = result.user;
    req.log = req.log.child({ user: result.user.username });
    // The token has done its job; handlers and logs have no use for it.
    if (result.method === 'token') delete req.headers.authorization;
    if (result.revocable) endWhenRevoked(req, reply, result.revocable);

    return authorizeStep(req, reply, false);
  });

  app.addHook('preValidation', async (req, reply) => {
    const path = pathOf(req.url);
    if (bypass.has(path) || (req as Marked)[AUTHORIZED]) return;
    return authorizeStep(req, reply, true);
  });

  async function authorizeStep(req: FastifyRequest, reply: FastifyReply, hasBody: boolean): Promise<FastifyReply | undefined> {
    const user = req.user;
    if (!user) return refuse(req, reply, new ApiError('Unauthorized', 401, 'Unauthorized'));
    let plan: AuthorizationPlan;
    try {
      const p = planFor({
        method: req.method,
        url: req.url,
        query: (req.query ?? {}) as Record<string, string>,
        hasBody,
        body: hasBody ? req.body : undefined,
      });
      if ('needsBody' in p) return undefined; // decided in preValidation
      plan = p;
    } catch (err) {
      return refuse(req, reply, isApiError(err) ? err : badRequest('malformed request'));
    }
    const checks = [...plan.checks, ...(await upsertChecks(plan, opts, req))];
    for (const attrs of checks) {
      let allowed: boolean;
      let reason: string;
      try {
        ({ allowed, reason } = await opts.authorizer.authorize(user, attrs));
      } catch {
        return refuse(req, reply, internalError('authorization failed: the SubjectAccessReview could not be completed'));
      }
      if (!allowed) {
        req.log.info({ ...describe(attrs), reason: reason || undefined }, 'request forbidden');
        return refuse(req, reply, forbidden(user, attrs, reason));
      }
    }
    (req as Marked)[AUTHORIZED] = true;
    req.authorizedAs = checks;
    return undefined;
  }
}

/**
 * A revoked credential ends what it opened. A WebSocket route closes its socket with its own code
 * (req.onCredentialRevoked); any other response still being written when the credential is
 * revoked, i.e. a watch or a `log?follow=true` stream, is ended here (a client that reconnects
 * is then refused). Listening stops when the response closes.
 */
function endWhenRevoked(req: FastifyRequest, reply: FastifyReply, revocable: Revocable): void {
  if (req.headers.upgrade?.toLowerCase() === 'websocket') {
    req.onCredentialRevoked = (fn) => revocable.onRevoked(fn);
    return;
  }
  const res = reply.raw;
  const stop = revocable.onRevoked((reason) => {
    // A response not started yet was authorized before the revocation and ends on its own.
    if (!res.headersSent || res.writableEnded) return;
    req.log.info({ reason }, 'credential revoked: ending the stream it opened');
    res.end();
  });
  res.once('close', stop);
}

/** The same hooks as a fastify plugin that is not encapsulated (it applies to the whole app). */
export function authFilter(opts: AuthFilterOptions): (app: FastifyInstance) => Promise<void> {
  const plugin = async (app: FastifyInstance): Promise<void> => installAuthFilter(app, opts);
  (plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
  return plugin;
}

async function upsertChecks(plan: AuthorizationPlan, opts: AuthFilterOptions, req: FastifyRequest): Promise<RequestAttributes[]> {
  const u = plan.upsertAgent;
  if (!u) return [];
  const agents = (verb: string, name: string): RequestAttributes => ({
    resource: { verb, group: 'agentplane.io', version: 'v1alpha1', resource: 'agents', subresource: '', namespace: u.namespace, name },
  });
  let exists: boolean | undefined;
  if (opts.agentExists) {
    try {
      exists = await opts.agentExists(u.namespace, u.name);
    } catch (err) {
      req.log.warn({ err: (err as Error).message }, 'agent lookup for authorization failed; requiring create and update');
    }
  }
  if (exists === true) return [agents('update', u.name)];
  if (exists === false) return [agents('create', '')];
  return [agents('create', ''), agents('update', u.name)];
}

function stripIdentityHeaders(req: FastifyRequest, authn: Pick<DelegatedAuthenticator, 'isIdentityHeader'>): void {
  for (const name of Object.keys(req.headers)) {
    if (authn.isIdentityHeader(name)) delete req.headers[name];
  }
}

/** kube-apiserver's Forbidden wording (responsewriters.forbiddenMessage + errors.NewForbidden). */
export function forbidden(user: UserInfo, attrs: RequestAttributes, reason = ''): ApiError {
  const suffix = reason ? `: ${reason}` : '';
  if ('nonResource' in attrs) {
    const { verb, path } = attrs.nonResource;
    return new ApiError('Forbidden', 403, `forbidden: User "${user.username}" cannot ${verb} path "${path}"${suffix}`, {});
  }
  const r = attrs.resource;
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  const why = `User "${user.username}" cannot ${r.verb} resource "${resource}" in API group "${r.group}" ${scope}${suffix}`;
  const qualified = r.group ? `${r.resource}.${r.group}` : r.resource;
  const message = r.name ? `${qualified} "${r.name}" is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  return new ApiError('Forbidden', 403, message, { group: r.group, kind: r.resource, ...(r.name ? { name: r.name } : {}) });
}

function refuse(req: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  return sendError(req, reply, err);
}

function describe(attrs: RequestAttributes): Record<string, string> {
  if ('nonResource' in attrs) return { verb: attrs.nonResource.verb, path: attrs.nonResource.path };
  const r = attrs.resource;
  return { verb: r.verb, group: r.group, resource: r.subresource ? `${r.resource}/${r.subresource}` : r.resource, namespace: r.namespace, name: r.name };
}
