// What a request asks to do, in Kubernetes authorization terms (verb, group, resource,
// subresource, namespace, name, or a non-resource path). Pure functions, no I/O.
//
// - /apis/{group}/{version}/...: parsed exactly as kube-apiserver's RequestInfoFactory does.
// - /api/v1/{agents|squads|connectors|budgets|schedules|triggers|webhooks|skills|memories}...: the REST mirror, mapped onto the same agentplane.io
//   resources; /api/v1/secrets onto core (group "") secrets. The namespace is the one the
//   handler will act in: the query's `namespace` for named objects (default "default"), all
//   namespaces for a list without one, the body's `namespace` for creates.
// - everything else: a non-resource URL with the lowercased HTTP method as verb.

import { badRequest } from '../../api/errors.js';
import { DEFAULT_NAMESPACE, GROUP, VERSION } from '../../api/meta.js';

export interface ResourceAttributes {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export interface NonResourceAttributes {
  verb: string;
  path: string;
}

export type RequestAttributes = { resource: ResourceAttributes } | { nonResource: NonResourceAttributes };

export type Query = Record<string, string | string[] | undefined>;

export interface RequestFacts {
  method: string;
  /** The request target as received (path and query). */
  url: string;
  query: Query;
  /** The parsed body; only given once the body has been read. */
  body?: unknown;
  hasBody: boolean;
}

/**
 * What must be authorized. `checks` must all be allowed. `upsertAgent`: POST /api/v1/agents
 * creates the agent or hands a task to an existing one; the filter decides which by looking
 * the agent up, then checks `create` (new) or `update` (existing) on agents.
 */
export interface AuthorizationPlan {
  checks: RequestAttributes[];
  upsertAgent?: { namespace: string; name: string };
}

/** `needsBody`: the namespace (or more) comes from the body; ask again once it is parsed. */
export type PlanResult = AuthorizationPlan | { needsBody: true };

/** agentplane's MCP server (pkg/server/routes/mcp.ts). */
export const MCP_PATH = '/mcp';

const TRUE_VALUES = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const MIRROR_RESOURCES = new Set(['agents', 'squads', 'connectors', 'budgets', 'schedules', 'triggers', 'webhooks', 'skills', 'memories']);

const methodVerb = (method: string): string =>
  ({ GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' })[method] ?? method.toLowerCase();

export function planFor(req: RequestFacts): PlanResult {
  const path = req.url.split('?')[0];
  const segments = path
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .map(decodeSegment);
  if (segments[0] === 'apis' && segments.length >= 4) return { checks: [{ resource: apisAttributes(req, segments) }] };
  if (segments[0] === 'api' && segments[1] === 'v1' && segments.length >= 3) return mirrorPlan(req, segments.slice(2));
  // The MCP endpoint: any authenticated caller may speak MCP; each tool call is then authorized
  // as the REST request it stands for (pkg/server/mcp/server.ts, docs/mcp.md).
  if (path === MCP_PATH) return { checks: [] };
  return { checks: [nonResource(req.method, path)] };
}

/**
 * The attributes that name what a request does, for the audit log (pkg/server/audit): the
 * plan's first check, as the filter authorizes it. POST /api/v1/agents naming an agent is
 * `create` of that name, or `update` when `existed` says the agent was already there. Never
 * throws: a request whose query or body the plan refuses (a repeated parameter, namespaces
 * that differ) is described as if those were absent, so a refused request is still described.
 */
export function primaryAttributes(req: RequestFacts, existed = false): RequestAttributes {
  const attempts: RequestFacts[] = [
    { ...req, hasBody: true },
    { ...req, hasBody: true, body: undefined },
    { ...req, query: {}, hasBody: true, body: undefined },
  ];
  for (const facts of attempts) {
    let plan: PlanResult;
    try {
      plan = planFor(facts);
    } catch {
      continue;
    }
    if ('needsBody' in plan) continue;
    if (plan.upsertAgent) {
      const { namespace, name } = plan.upsertAgent;
      const verb = existed ? 'update' : 'create';
      return { resource: { verb, group: GROUP, version: VERSION, resource: 'agents', subresource: '', namespace, name } };
    }
    if (plan.checks[0]) return plan.checks[0];
  }
  return nonResource(req.method, req.url.split('?')[0]);
}

function nonResource(method: string, path: string): RequestAttributes {
  return { nonResource: { verb: method === 'HEAD' ? 'get' : method.toLowerCase(), path } };
}

/** kube-apiserver's RequestInfoFactory for /apis/{group}/{version}/{...}. */
function apisAttributes(req: RequestFacts, segments: string[]): ResourceAttributes {
  const group = segments[1];
  const version = segments[2];
  let parts = segments.slice(3);
  let verb = methodVerb(req.method);
  if (parts[0] === 'watch' && req.method === 'GET') {
    verb = 'watch';
    parts = parts.slice(1);
  }
  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
    }
  }
  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = parts[2] ?? '';
  if (!name && verb === 'get') {
    verb = TRUE_VALUES.has(single(req.query, 'watch') ?? '') ? 'watch' : 'list';
    name = nameFromFieldSelector(single(req.query, 'fieldSelector')) ?? '';
  }
  if (!name && verb === 'delete') verb = 'deletecollection';
  return { verb, group, version, resource, subresource, namespace, name };
}

/** list/watch with fieldSelector=metadata.name=x is authorized as naming x (resourceNames rules). */
function nameFromFieldSelector(sel: string | undefined): string | undefined {
  if (!sel) return undefined;
  for (const term of sel.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (m && m[1] && m[1] !== '.' && m[1] !== '..' && !/[/%]/.test(m[1])) return m[1];
  }
  return undefined;
}

function mirrorPlan(req: RequestFacts, parts: string[]): PlanResult {
  const [res, name, sub, subName] = parts as [string, string | undefined, string | undefined, string | undefined];
  const secrets = res === 'secrets';
  if (!MIRROR_RESOURCES.has(res) && !secrets) return { checks: [nonResource(req.method, req.url.split('?')[0])] };
  const group = secrets ? '' : GROUP;
  const version = secrets ? 'v1' : VERSION;
  const attrs = (verb: string, namespace: string, resource: string, subresource = '', objName = ''): RequestAttributes => ({
    resource: { verb, group, version, resource, subresource, namespace, name: objName },
  });
  const agent = (verb: string, namespace: string, objName = '', subresource = ''): RequestAttributes => ({
    resource: { verb, group: GROUP, version: VERSION, resource: 'agents', subresource, namespace, name: objName },
  });

  if (!name) {
    switch (req.method) {
      case 'GET':
      case 'HEAD':
        return { checks: [attrs('list', listNamespace(req.query), res)] };
      case 'POST': {
        if (!req.hasBody) return { needsBody: true };
        const namespace = createNamespace(req.query, req.body);
        if (res === 'agents') {
          const bodyName = (req.body as { name?: unknown } | undefined)?.name;
          if (typeof bodyName === 'string' && bodyName !== '') return { checks: [], upsertAgent: { namespace, name: bodyName } };
          return { checks: [agent('create', namespace)] };
        }
        const checks = [attrs('create', namespace, res)];
        if (res === 'squads') checks.push(...memberChecks(namespace, (req.body as { members?: unknown } | undefined)?.members));
        return { checks };
      }
      case 'DELETE':
        return { checks: [attrs('deletecollection', namedNamespace(req.query), res)] };
      default:
        return { checks: [attrs(methodVerb(req.method), namedNamespace(req.query), res)] };
    }
  }

  if (secrets && req.method === 'PUT') {
    // PUT replaces or creates; the namespace is the query's, else the body's.
    const q = single(req.query, 'namespace');
    let namespace = q;
    if (q === undefined || q === '') {
      if (!req.hasBody) return { needsBody: true };
      namespace = bodyNamespace(req.body);
    }
    return { checks: [attrs('update', namespace!, res, '', name), attrs('create', namespace!, res)] };
  }

  const namespace = namedNamespace(req.query);
  if (res === 'squads' && !sub && req.method === 'PATCH') {
    // A new member list changes the agents it lists too (joining claims them), as adding one does.
    if (!req.hasBody) return { needsBody: true };
    return { checks: [attrs('patch', namespace, res, '', name), ...memberChecks(namespace, (req.body as { members?: unknown } | undefined)?.members)] };
  }
  if (!sub) return { checks: [attrs(methodVerb(req.method), namespace, res, '', name)] };

  if (res === 'agents' && sub === 'ws') return { checks: [agent('get', namespace, name, 'log')] };
  if (res === 'agents' && sub === 'cancel' && req.method === 'POST') return { checks: [agent('create', namespace, name, 'cancel')] };
  if (res === 'squads' && (sub === 'members' || sub === 'break-up')) {
    // Membership and break-up change the squad; joining or leaving also changes the agent, and a
    // member given with a spec is a new agent.
    const checks = [attrs('update', namespace, 'squads', '', name)];
    if (sub === 'members' && req.method === 'POST' && !subName) {
      if (!req.hasBody) return { needsBody: true };
      checks.push(...memberChecks(namespace, [req.body]));
    }
    if (sub === 'members' && req.method === 'DELETE' && subName) checks.push(agent('update', namespace, subName));
    return { checks };
  }
  if (res === 'squads' && sub === 'checkpoints' && req.method === 'POST' && !subName) {
    // One checkpoint per member: creating checkpoints, not changing the squad.
    return { checks: [attrs('get', namespace, 'squads', '', name), attrs('create', namespace, 'agentcheckpoints')] };
  }
  if (res === 'agents' && sub === 'checkpoints') {
    // An agent's checkpoints are AgentCheckpoint objects named "<agent>.<checkpoint>".
    const verb = subName ? methodVerb(req.method) : req.method === 'POST' ? 'create' : 'list';
    return { checks: [attrs(verb, namespace, 'agentcheckpoints', '', subName ? `${name}.${subName}` : '')] };
  }
  // events, connectors' tools, and anything else: the HTTP method's verb on the subresource.
  return { checks: [attrs(methodVerb(req.method), namespace, res, sub, name)] };
}

/** Squad members: `{ref: {name}}` changes an existing agent; `{name, spec}` creates one. */
function memberChecks(namespace: string, members: unknown): RequestAttributes[] {
  if (!Array.isArray(members)) return [];
  const out: RequestAttributes[] = [];
  let creates = false;
  for (const m of members) {
    if (!m || typeof m !== 'object') continue;
    const ref = (m as { ref?: { name?: unknown } }).ref;
    if (ref && typeof ref === 'object' && typeof ref.name === 'string') {
      out.push({ resource: { verb: 'update', group: GROUP, version: VERSION, resource: 'agents', subresource: '', namespace, name: ref.name } });
    } else if ('spec' in m || 'name' in m) {
      creates = true;
    }
  }
  if (creates) out.push({ resource: { verb: 'create', group: GROUP, version: VERSION, resource: 'agents', subresource: '', namespace, name: '' } });
  return out;
}

/** A list without `namespace` (or with an empty one) spans all namespaces, as the handler lists them all. */
function listNamespace(q: Query): string {
  return single(q, 'namespace') ?? '';
}

/** Where a create lands, decided as the handler decides it: the body's namespace, else the query's. */
function createNamespace(q: Query, body: unknown): string {
  const fromQuery = single(q, 'namespace') || undefined;
  const inBody = !!body && typeof body === 'object' && (body as { namespace?: unknown }).namespace != null;
  if (!inBody) return fromQuery ?? DEFAULT_NAMESPACE;
  const ns = bodyNamespace(body);
  if (fromQuery !== undefined && fromQuery !== ns) {
    throw badRequest(`the body's namespace "${ns}" differs from the query's "${fromQuery}": give one of them, or the same in both`, {
      causes: [{ field: 'namespace', message: `differs from ?namespace=${fromQuery}` }],
    });
  }
  return ns;
}

function namedNamespace(q: Query): string {
  const ns = single(q, 'namespace');
  return ns === undefined || ns === '' ? DEFAULT_NAMESPACE : ns;
}

function bodyNamespace(body: unknown): string {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return DEFAULT_NAMESPACE;
  const ns = (body as { namespace?: unknown }).namespace;
  if (ns === undefined || ns === null) return DEFAULT_NAMESPACE;
  if (typeof ns !== 'string' || ns === '') {
    throw badRequest('namespace must be a non-empty string', { causes: [{ field: 'namespace', message: 'must be a DNS label' }] });
  }
  return ns;
}

function single(q: Query, key: string): string | undefined {
  const v = q[key];
  if (Array.isArray(v)) throw badRequest(`query parameter "${key}" is given more than once`);
  return v;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
