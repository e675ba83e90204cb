// Connector operations behind the REST mirror, and what ties connectors to agents:
// `mcpServersFor` (at task dispatch: the connectors an agent lists, by name) and `gatewayTarget`
// (at every request the engine makes through the connector gateway: whether the agent may use
// the connector now, and its secret read at that moment). Rules of the resource live in the connector strategy, rules across
// objects in the admission plugins (pkg/registry/admission); this layer composes.
//
// A connector's status is what the last check found: after create, after a task that uses it
// was dispatched, after its secret changed, and on GET .../tools. Checks run in the background
// (never blocking a request or a task), one at a time per connector.
//
// Credentials go only where they are bound: the ConnectorSecretBinding admission plugin (every
// connector write) refuses a URL the secret's allowedUrls do not cover, or one inside the
// server's network; `auth` (every
// sender: status check, tools listing, task dispatch, the connector gateway) checks both again at the moment
// of sending, so a later change of either side cannot leak a token.

import type { Agent } from '../../api/agent.js';
import {
  authTypeOf,
  CONNECTOR_KIND,
  type Connector,
  type ConnectorCreateRequest,
  connectorCreateRequestSchema,
  type ConnectorPhase,
  type ConnectorResponse,
  type ConnectorStatus,
  refineAuthTypeCauses,
  type ConnectorTool,
  toConnectorResponse,
} from '../../api/connector.js';
import { ApiError, conflict, invalid, secretBindingMismatch } from '../../api/errors.js';
import { DEFAULT_NAMESPACE, refKey } from '../../api/meta.js';
import { urlAllowedBy } from '../../api/url-prefix.js';
import { validateSchema } from '../../api/validation.js';
import { explainPeerFields, PEER_CONNECTOR_FIELDS } from '../../api/peer-fields.js';
import type { McpServerSpec } from '../../api/worker-protocol.js';
import type { Logger } from '../../observability/logger.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { type Page, type PageQuery, readOne, readPage } from './paging.js';
import type { SecretStore } from '../../registry/secrets.js';
import { type EgressPolicy, fetchOnlyTo, guardedFetch, urlEgressRefusal } from '../../connector/egress.js';
import type { GatewayDecision } from '../../connector/gateway.js';
import { DEFAULT_PROBE_TIMEOUT_MS, listMcpTools, type ToolListing } from '../../connector/mcp-tools.js';
import { REST_OWNER } from '../../registry/registry.js';

export interface ConnectorServiceOptions {
  connectors: Registry<Connector>;
  agents: Registry<Agent>;
  secrets: SecretStore;
  logger: Logger;
  /** Deadline of one check (tools/list), default 5 s. */
  probeTimeoutMs?: number;
  /** Check connectors in the background after create, dispatch and secret changes; default true. */
  backgroundChecks?: boolean;
  /** Allow connector URLs at loopback and private addresses (--allow-private-connector-urls); default false. */
  allowPrivateUrls?: boolean;
  /** Reads for get and list from the informer cache; storage without it. */
  reads?: ReadCache<Connector>;
}

/**
 * What may be sent to a connector now. `refused` tells why not: the secret is missing or unusable
 * (`secret`), its binding does not cover the URL (`binding`), or the server may not connect
 * there (`egress`).
 */
export type ConnectorAuth =
  | { ok: true; headers: Record<string, string>; token?: string }
  | { ok: false; phase: Extract<ConnectorPhase, 'SecretMissing' | 'Error'>; message: string; refused: 'secret' | 'binding' | 'egress' };
type Auth = ConnectorAuth;

export interface AdmitOptions {
  /** Check only: a secret is not bound by a dry run. */
  dryRun?: boolean;
  /** Prefix of field names in causes: "" for the REST body, "spec" for the aggregated API. */
  root?: string;
}

export class ConnectorService {
  private readonly log: Logger;
  private readonly timeoutMs: number;
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  /** Where the server may connect for connectors (the gateway connects under it too). */
  readonly egress: EgressPolicy;
  /** The fetch of every connection the server makes to a connector: refuses what the policy refuses, after DNS. */
  readonly fetch: ReturnType<typeof guardedFetch>;

  constructor(private readonly o: ConnectorServiceOptions) {
    this.log = o.logger;
    this.timeoutMs = o.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    this.egress = { allowPrivate: o.allowPrivateUrls === true };
    this.fetch = guardedFetch(this.egress);
  }

  async create(body: unknown): Promise<ConnectorResponse> {
    const req = body as ConnectorCreateRequest;
    const name = typeof req?.name === 'string' ? req.name : undefined;
    const causes = refineAuthTypeCauses(explainPeerFields(validateSchema(connectorCreateRequestSchema, body), PEER_CONNECTOR_FIELDS), req?.authType, '');
    // The rules across fields are the strategy's (pkg/registry/connector/strategy.ts), checked on
    // the create below as for every writer; REST renders their fields without `spec.`.
    if (causes.length) throw invalid(CONNECTOR_KIND, name, causes);
    const namespace = req.namespace ?? DEFAULT_NAMESPACE;
    const obj: Connector = {
      apiVersion: '',
      kind: CONNECTOR_KIND,
      metadata: { name: req.name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
      spec: {
        service: req.service ?? '',
        displayName: req.displayName ?? '',
        url: req.url,
        ...(req.authSecretName ? { authSecretName: req.authSecretName } : {}),
        ...(req.authSecretKey ? { authSecretKey: req.authSecretKey } : {}),
        authType: authTypeOf(req.authType) ?? 'bearer',
        ...(req.headerName !== undefined ? { headerName: req.headerName } : {}),
      },
      status: { phase: 'Unknown', message: '' },
    };
    const created = await this.o.connectors.create(obj, { owner: REST_OWNER });
    this.checkInBackground(created);
    return toConnectorResponse(created, await this.agentNames(namespace, req.name));
  }

  async get(namespace: string, name: string): Promise<ConnectorResponse> {
    const c = await readOne(this.o.reads, this.o.connectors, CONNECTOR_KIND, namespace, name);
    return toConnectorResponse(c, await this.agentNames(namespace, name));
  }

  async list(namespace?: string, page: PageQuery = {}): Promise<Page<ConnectorResponse>> {
    const [{ items, ...paging }, users] = await Promise.all([
      this.o.reads ? readPage(this.o.reads, namespace, page) : this.o.connectors.list(namespace ? { namespace } : {}).then((r) => ({ items: r.items })),
      this.usersByConnector(namespace),
    ]);
    return { items: items.map((c) => toConnectorResponse(c, users.get(refKey(c.metadata)) ?? [])), ...paging };
  }

  /**
   * Deletes the connector. While agents list it the answer is 409 naming them, unless `force`,
   * which first removes it from each of those agents. Returns the connector as it was.
   */
  async delete(namespace: string, name: string, force: boolean): Promise<ConnectorResponse> {
    const c = await this.o.connectors.mustGet(namespace, name);
    const users = await this.agentNames(namespace, name);
    // Without force the ConnectorInUse admission plugin refuses while agents list it.
    for (const agent of force ? users : []) {
      try {
        await this.o.agents.update(namespace, agent, (a) => {
          a.spec.connectors = a.spec.connectors.filter((n) => n !== name);
        }, { owner: REST_OWNER });
        this.log.info({ namespace, agent, connector: name }, 'connector detached from agent (forced delete)');
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
      }
    }
    await this.o.connectors.delete(namespace, name);
    return toConnectorResponse(c, users);
  }

  /** GET .../tools: asks the server now; 502 when it cannot be reached or refuses the credential. */
  async tools(namespace: string, name: string): Promise<{ connector: string; namespace: string; tools: ConnectorTool[] }> {
    const c = await this.o.connectors.mustGet(namespace, name);
    const auth = await this.auth(c);
    if (!auth.ok) {
      await this.setStatus(c, { phase: auth.phase, message: auth.message });
      const details = { kind: CONNECTOR_KIND, name, phase: auth.phase };
      if (auth.refused === 'binding') throw secretBindingMismatch(`connector "${name}": ${auth.message}`, { ...details, secret: c.spec.authSecretName });
      if (auth.refused === 'egress') throw conflict(`connector "${name}" cannot be used: ${auth.message}`, details);
      throw conflict(`connector "${name}" cannot authenticate: ${auth.message}`, details);
    }
    const listing = await this.listAndRecord(c, auth);
    if (!listing.ok) {
      throw new ApiError('BadGateway', 502, `connector "${name}": ${listing.message}`, { kind: CONNECTOR_KIND, name, phase: listing.phase });
    }
    return { connector: name, namespace, tools: listing.tools };
  }

  /**
   * Hook (Hooks.mcpServers): the MCP servers for the agent's task, with credentials read now.
   * A connector that is gone or whose secret is missing is skipped with a warning: the task runs
   * without it and a call to its tools fails as a tool error, not as a crashed task.
   */
  async mcpServersFor(agent: Agent): Promise<McpServerSpec[]> {
    const { namespace, name: agentName } = agent.metadata;
    const out: McpServerSpec[] = [];
    const attached: Connector[] = [];
    for (const connectorName of agent.spec.connectors) {
      const log = { namespace, agent: agentName, connector: connectorName };
      try {
        const c = await this.o.connectors.get(namespace, connectorName);
        if (!c) {
          this.log.warn(log, 'connector not found; the task runs without it');
          continue;
        }
        const auth = await this.auth(c);
        if (!auth.ok) {
          this.log.warn({ ...log, reason: auth.message }, 'connector cannot authenticate; the task runs without it');
          await this.setStatus(c, { phase: auth.phase, message: auth.message });
          continue;
        }
        // Names only: the engine reaches it through the gateway, which adds the secret.
        out.push({ name: connectorName, namespace, revision: `${c.metadata.uid}/${c.metadata.generation}` });
        attached.push(c);
      } catch (err) {
        // A broken secret file or store must not keep the task from running.
        this.log.error({ ...log, err: err instanceof Error ? err.message : String(err) }, 'connector could not be resolved; the task runs without it');
      }
    }
    for (const c of attached) this.checkInBackground(c);
    return out;
  }

  /**
   * The connector gateway's question, at every request an engine makes: may this agent
   * incarnation (its model credential's grant) use the connector now, and with which headers?
   * It must be the agent's own namespace, the live agent of that uid, listing the connector, and
   * `auth` must allow sending (egress and binding checked again, the secret read now).
   */
  async gatewayTarget(grant: { ref: { namespace: string; name: string }; uid: string }, namespace: string, name: string): Promise<GatewayDecision> {
    const refuse = (reason: 'Forbidden' | 'NotFound' | 'Conflict' | 'SecretBindingMismatch', code: number, message: string): GatewayDecision => ({
      ok: false,
      error: new ApiError(reason, code, message, { kind: CONNECTOR_KIND, name }),
    });
    const agentName = grant.ref.name;
    if (grant.ref.namespace !== namespace) return refuse('Forbidden', 403, `agent "${agentName}" may use connectors of its own namespace "${grant.ref.namespace}" only`);
    const agent = await this.o.agents.get(namespace, agentName);
    if (!agent || agent.metadata.uid !== grant.uid || agent.metadata.deletionTimestamp) return refuse('Forbidden', 403, `agent "${agentName}" no longer exists`);
    if (!agent.spec.connectors.includes(name)) return refuse('Forbidden', 403, `connector "${name}" is not attached to agent "${agentName}"`);
    const c = await this.o.connectors.get(namespace, name);
    if (!c) return refuse('NotFound', 404, `connector "${name}" not found in namespace "${namespace}"`);
    const auth = await this.auth(c);
    if (!auth.ok) {
      this.log.warn({ namespace, agent: agentName, connector: name, reason: auth.message }, 'connector gateway: refused to forward');
      if (auth.refused === 'binding') return refuse('SecretBindingMismatch', 422, `connector "${name}": ${auth.message}`);
      return refuse('Conflict', 409, `connector "${name}" cannot be used: ${auth.message}`);
    }
    return { ok: true, target: { url: c.spec.url, headers: auth.headers, ...(auth.token ? { token: auth.token } : {}) } };
  }

  /** A secret was created, replaced or deleted: re-check the connectors that use it. */
  async secretChanged(namespace: string, secretName: string): Promise<void> {
    const { items } = await this.o.connectors.list({ namespace });
    for (const c of items) if (c.spec.authSecretName === secretName) this.checkInBackground(c);
  }

  /** Stops background checks and waits for those under way. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.inflight.values()]);
  }

  /** Checks the connector now and records the outcome in its status. */
  async check(c: Connector): Promise<ConnectorStatus['phase']> {
    const auth = await this.auth(c);
    if (!auth.ok) {
      await this.setStatus(c, { phase: auth.phase, message: auth.message });
      return auth.phase;
    }
    const listing = await this.listAndRecord(c, auth);
    return listing.ok ? 'Ready' : listing.phase;
  }

  private checkInBackground(c: Connector): void {
    if (this.o.backgroundChecks === false || this.stopping.signal.aborted) return;
    const key = refKey(c.metadata);
    if (this.inflight.has(key)) return;
    const run = async (): Promise<void> => {
      // Check the latest version (the caller's copy may be stale).
      const cur = await this.o.connectors.get(c.metadata.namespace, c.metadata.name);
      if (cur && !this.stopping.signal.aborted) await this.check(cur);
    };
    const p = run()
      .catch((err: unknown) => {
        if (!this.stopping.signal.aborted) {
          this.log.warn({ namespace: c.metadata.namespace, connector: c.metadata.name, err: String(err) }, 'connector check failed');
        }
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
  }

  /** tools/list against the server, recording the outcome in the connector's status. */
  private async listAndRecord(c: Connector, auth: Extract<Auth, { ok: true }>): Promise<ToolListing> {
    const listing = await listMcpTools(c.spec.url, auth.headers, {
      // The credential goes to the connector's URL only: a redirect, even within its origin, is not followed.
      fetch: fetchOnlyTo(c.spec.url, this.fetch),
      timeoutMs: this.timeoutMs,
      signal: this.stopping.signal,
      ...(auth.token ? { secrets: [auth.token] } : {}),
    });
    if (this.stopping.signal.aborted) return listing;
    if (listing.ok) {
      const n = listing.tools.length;
      await this.setStatus(c, { phase: 'Ready', message: `${n} tool${n === 1 ? '' : 's'} available`, toolCount: n });
    } else {
      await this.setStatus(c, { phase: listing.phase, message: listing.message });
    }
    return listing;
  }

  /**
   * Whether anything may be sent to the connector now, and its auth header with the token read
   * from its secret now. Every sender calls this at the moment of sending (status check, tools
   * listing, task dispatch, every gateway request): the URL must be one the server may reach, and the secret,
   * read from the connector's own namespace, must be bound to a prefix covering the URL. An
   * unbound secret is sent nowhere: only a connector write binds it (see `admit`).
   */
  async auth(c: Connector): Promise<Auth> {
    const { authSecretName: secretName, authSecretKey: key, authType, headerName, url } = c.spec;
    const why = urlEgressRefusal(url, this.egress);
    if (why) return { ok: false, phase: 'Error', refused: 'egress', message: `the server does not connect to ${url}: ${why}` };
    if (!secretName || !key) return { ok: true, headers: {} };
    const ns = c.metadata.namespace;
    const secret = await this.o.secrets.get(ns, secretName);
    const missing = (message: string): Auth => ({ ok: false, phase: 'SecretMissing', refused: 'secret', message });
    if (!secret) return missing(`secret "${secretName}" not found in namespace "${ns}"`);
    if (!secret.allowedUrls.length) {
      return {
        ok: false,
        phase: 'Error',
        refused: 'binding',
        message: `secret "${secretName}" is not bound to any URL yet (no connector was written after it); set its allowedUrls (PUT /api/v1/secrets/${secretName}) or re-create the connector`,
      };
    }
    if (!urlAllowedBy(url, secret.allowedUrls)) {
      return {
        ok: false,
        phase: 'Error',
        refused: 'binding',
        message: `secret "${secretName}" may not be sent to ${url}: it is bound to ${secret.allowedUrls.join(', ')}`,
      };
    }
    const token = secret.data[key];
    if (token === undefined) return missing(`secret "${secretName}" has no key "${key}"`);
    if (token === '') return missing(`key "${key}" of secret "${secretName}" is empty`);
    // A header value may not hold control characters; refuse rather than send a broken request.
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(token) || token.trim() !== token) {
      return { ok: false, phase: 'Error', refused: 'secret', message: `key "${key}" of secret "${secretName}" is not a valid HTTP header value` };
    }
    const headers = authType === 'header' && headerName ? { [headerName]: token } : { Authorization: `Bearer ${token}` };
    return { ok: true, headers, token };
  }

  private async setStatus(c: Connector, next: Omit<ConnectorStatus, 'lastCheckedAt'>): Promise<void> {
    const { namespace, name } = c.metadata;
    try {
      let before: ConnectorPhase | undefined;
      await this.o.connectors.updateStatus(namespace, name, (s, obj) => {
        // A check of an older version must not overwrite what a newer one found.
        if (obj.metadata.uid !== c.metadata.uid || obj.metadata.generation !== c.metadata.generation) return;
        before = s.phase;
        s.phase = next.phase;
        s.message = next.message;
        if (next.toolCount !== undefined) s.toolCount = next.toolCount;
        else delete s.toolCount;
        s.lastCheckedAt = new Date().toISOString();
      });
      if (before !== undefined && before !== next.phase) {
        const line = { namespace, connector: name, phase: next.phase, message: next.message };
        if (next.phase === 'Ready') this.log.info(line, 'connector status changed');
        else this.log.warn(line, 'connector status changed');
      }
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
    }
  }

  /** Names of the live agents in `namespace` that list the connector. */
  private async agentNames(namespace: string, connector: string): Promise<string[]> {
    return (await this.usersByConnector(namespace)).get(refKey({ namespace, name: connector })) ?? [];
  }

  /** namespace/connector -> names of live agents listing it. */
  private async usersByConnector(namespace?: string): Promise<Map<string, string[]>> {
    const { items } = await this.o.agents.list(namespace ? { namespace } : {});
    const out = new Map<string, string[]>();
    for (const a of items) {
      if (a.metadata.deletionTimestamp) continue;
      for (const c of a.spec.connectors) {
        const key = refKey({ namespace: a.metadata.namespace, name: c });
        const names = out.get(key) ?? [];
        names.push(a.metadata.name);
        out.set(key, names);
      }
    }
    return out;
  }
}
