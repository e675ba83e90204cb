// The one place where the CLI's REST calls (what `agentplane` sends an agentplane server's
// /api/v1) become calls of the aggregated API (agentplane.io/v1alpha1) through kube-apiserver,
// and their answers the REST mirror's shapes again, so the commands are the same in both modes.
// A call with no route here is a command not available through kubectl yet (docs/kubectl-plugin.md).

import { type Agent, type AgentResponse, isBusy, toAgentResponse } from '../../api/agent.js';
import { GROUP_VERSION } from '../client.js';
import type { Target } from '../config.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { CallOptions, Reply } from '../transport.js';

export interface KubeReply<T> extends Reply<T> {
  /** The `Warning` headers' texts. */
  warnings: string[];
}

/** What the routes need of the transport: one request to kube-apiserver. */
export interface KubeApi {
  readonly target: Target;
  request<T>(method: string, path: string, opts?: CallOptions & { contentType?: string }): Promise<KubeReply<T>>;
}

type Handler = (k: KubeApi, at: Place, opts: CallOptions) => Promise<Reply<unknown>>;

/** The namespace and agent a REST call names. */
interface Place {
  namespace: string | undefined;
  name: string;
  /** An approval's id. */
  id?: string | undefined;
}

export const agentsPath = (namespace: string | undefined): string =>
  `/apis/${GROUP_VERSION}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/agents`;
const agentPath = (at: Place, sub = ''): string => `${agentsPath(at.namespace)}/${encodeURIComponent(at.name)}${sub ? `/${sub}` : ''}`;
const MERGE_PATCH = 'application/merge-patch+json';
const AGENT = { kind: 'agent' };

/** A subresource's answer without the Kubernetes envelope (apiVersion, kind, metadata), as REST gives it. */
function unwrap(body: unknown): Record<string, unknown> {
  const { apiVersion: _v, kind: _k, metadata: _m, ...rest } = (body ?? {}) as Record<string, unknown>;
  return rest;
}

const getAgent = async (k: KubeApi, at: Place): Promise<Agent> => (await k.request<Agent>('GET', agentPath(at), { ...AGENT, ns: at.namespace })).body;

/** An existing agent gets a new task: the next task number (so the same words run again), on the version read. */
async function assignTask(k: KubeApi, at: Place, spec: Record<string, unknown>, current?: Agent): Promise<Agent> {
  const a = current ?? (await getAgent(k, at));
  const body = { metadata: { resourceVersion: a.metadata.resourceVersion }, spec: { ...spec, task: a.spec.task + 1 } };
  return (await k.request<Agent>('PATCH', agentPath(at), { body, contentType: MERGE_PATCH, ...AGENT, ns: at.namespace })).body;
}

/** `POST /api/v1/agents` (run): create the agent with its first task (201), or give the existing one a new task (200). */
const runTask: Handler = async (k, at, opts) => {
  const { name, namespace: _ns, ...spec } = opts.body as Record<string, unknown>;
  const place = { namespace: at.namespace, name: String(name) };
  const object = { apiVersion: GROUP_VERSION, kind: 'Agent', metadata: { name, namespace: at.namespace }, spec };
  try {
    const made = await k.request<Agent>('POST', agentsPath(at.namespace), { body: object, ...AGENT, ns: at.namespace });
    return { status: 201, body: toAgentResponse(made.body) };
  } catch (err) {
    if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
  }
  return { status: 200, body: toAgentResponse(await assignTask(k, place, spec)) };
};

/**
 * `PATCH /api/v1/agents/:name`. Settings (lifecycle, model…) are a merge patch of the spec. New
 * instructions (steer) are a new task on an idle agent, and a message (`agents/messages`) into
 * the running task on a busy one: the aggregated API takes no follow-up through the spec.
 */
const patchAgent: Handler = async (k, at, opts) => {
  const { instructions, ...spec } = opts.body as Record<string, unknown>;
  if (instructions === undefined) {
    const r = await k.request<Agent>('PATCH', agentPath(at), { body: { spec }, contentType: MERGE_PATCH, ...AGENT, ns: at.namespace });
    return { status: 200, body: toAgentResponse(r.body) };
  }
  const a = await getAgent(k, at);
  if (!isBusy(a)) return { status: 200, body: toAgentResponse(await assignTask(k, at, { ...spec, instructions }, a)) };
  if (Object.keys(spec).length) await k.request('PATCH', agentPath(at), { body: { spec }, contentType: MERGE_PATCH, ...AGENT, ns: at.namespace });
  const sent = await k.request('POST', agentPath(at, 'messages'), { body: { text: instructions }, ...AGENT, ns: at.namespace });
  return { status: sent.status, body: toAgentResponse(await getAgent(k, at)) };
};

/** `POST .../cancel`: the subresource answers the Agent, and a Warning when nothing was running. */
const cancel: Handler = async (k, at) => {
  const r = await k.request<Agent>('POST', agentPath(at, 'cancel'), { body: {}, ...AGENT, ns: at.namespace });
  const idle = r.warnings.find((w) => w.startsWith('nothing was running'));
  return { status: r.status, body: { ...toAgentResponse(r.body), cancelled: !idle, ...(idle ? { message: idle } : {}) } };
};

/** `DELETE`: an agent held by its finalizer while its clean-up runs is the REST mirror's 202. */
const deleteAgent: Handler = async (k, at) => {
  const r = await k.request<Agent>('DELETE', agentPath(at), { ...AGENT, ns: at.namespace });
  return { status: r.body?.metadata?.deletionTimestamp ? 202 : 200, body: r.body ? toAgentResponse(r.body) : {} };
};

const list: Handler = async (k, at) => {
  const r = await k.request<{ items: Agent[] }>('GET', agentsPath(at.namespace), { ...AGENT, ...(at.namespace ? { ns: at.namespace } : {}) });
  return { status: 200, body: { agents: r.body.items.map(toAgentResponse) } };
};

/** A subresource read whose `items` are the REST answer's `key`. */
const items =
  (sub: string, key: string): Handler =>
  async (k, at, opts) => {
    const query = { ...opts.query, namespace: undefined };
    const r = await k.request<{ items: unknown[] }>('GET', agentPath(at, sub), { query, ...AGENT, ns: at.namespace });
    return { status: r.status, body: { [key]: r.body.items } };
  };

/** A subresource write whose answer is the REST one in an envelope. */
const post =
  (sub: string, body: (b: Record<string, unknown>, id: string | undefined) => unknown): Handler =>
  async (k, at, opts) => {
    const r = await k.request('POST', agentPath(at, sub), { body: body((opts.body ?? {}) as Record<string, unknown>, at.id), ...AGENT, ns: at.namespace });
    return { status: r.status, body: unwrap(r.body) };
  };

const NAME = '([^/]+)';
const ROUTES: { method: string; path: RegExp; handler: Handler }[] = [
  { method: 'GET', path: /^\/api\/v1\/agents$/, handler: list },
  { method: 'POST', path: /^\/api\/v1\/agents$/, handler: runTask },
  {
    method: 'GET',
    path: new RegExp(`^/api/v1/agents/${NAME}$`),
    handler: async (k, at) => ({ status: 200, body: toAgentResponse(await getAgent(k, at)) satisfies AgentResponse }),
  },
  { method: 'PATCH', path: new RegExp(`^/api/v1/agents/${NAME}$`), handler: patchAgent },
  { method: 'DELETE', path: new RegExp(`^/api/v1/agents/${NAME}$`), handler: deleteAgent },
  { method: 'POST', path: new RegExp(`^/api/v1/agents/${NAME}/cancel$`), handler: cancel },
  { method: 'GET', path: new RegExp(`^/api/v1/agents/${NAME}/events$`), handler: items('events', 'events') },
  { method: 'GET', path: new RegExp(`^/api/v1/agents/${NAME}/approvals$`), handler: items('approvals', 'approvals') },
  { method: 'POST', path: new RegExp(`^/api/v1/agents/${NAME}/approvals/${NAME}$`), handler: post('approvals', (b, id) => ({ ...b, id })) },
  { method: 'POST', path: new RegExp(`^/api/v1/agents/${NAME}/messages$`), handler: post('messages', (b) => b) },
  { method: 'POST', path: new RegExp(`^/api/v1/agents/${NAME}/compact$`), handler: post('compact', (b) => b) },
];

/** Runs a REST call as aggregated API calls; one without a route says its command is not available through kubectl yet. */
export async function restOverKube(k: KubeApi, command: string, method: string, path: string, opts: CallOptions): Promise<Reply<unknown>> {
  for (const r of ROUTES) {
    if (r.method !== method) continue;
    const m = r.path.exec(path);
    if (!m) continue;
    const ns = opts.query?.namespace ?? opts.ns ?? (opts.body as { namespace?: unknown } | undefined)?.namespace;
    const at = { namespace: typeof ns === 'string' ? ns : undefined, name: decodeURIComponent(m[1] ?? ''), id: m[2] && decodeURIComponent(m[2]) };
    return r.handler(k, at, opts);
  }
  throw new CliError(
    `\`${command}\` is not available through kubectl agentplane yet`,
    'docs/kubectl-plugin.md lists the commands that are; meanwhile kubectl get/apply/delete work on the agentplane.io objects',
    EXIT.USAGE,
  );
}
