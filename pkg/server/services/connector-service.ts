// Connector operations behind the REST mirror, and what ties connectors to agents:
// `mcpServersFor` (at task dispatch: the connectors an agent lists, by name) and `gatewayTarget`
// (at every request the engine makes through the connector gateway: whether the agent may use
// the connector now, and its secret read at that moment). Rules of the resource live in the connector strategy, rules across
// objects in the admission plugins (pkg/registry/admission); this layer composes.
//
// A connector's status belongs to the connector controller (pkg/controller/connector-controller.ts),
// which checks connectors from every API, after their secrets change and periodically. This
// service runs no background work: dispatch only asks the controller for a re-check (`recheck`),
// and GET .../tools, which asks the server in the request anyway, records what it found through
// the controller's own check code (pkg/connector/check.ts).
//
// Credentials go only where they are bound: the ConnectorSecretBinding admission plugin (every
// connector write) refuses a URL the secret's allowedUrls do not cover, or one inside the
// server's network; `ConnectorAccess.auth` (every sender: status check, tools listing, task
// dispatch, the connector gateway) checks both again at the moment of sending, so a later change
// of either side cannot leak a token.

import type { Agent } from '../../api/agent.js';
import {
  authTypeOf,
  CONNECTOR_KIND,
  type Connector,
  type ConnectorCreateRequest,
  connectorCreateRequestSchema,
  type ConnectorResponse,
  refineAuthTypeCauses,
  type ConnectorTool,
  toConnectorResponse,
} from '../../api/connector.js';
import { ApiError, conflict, invalid, secretBindingMismatch } from '../../api/errors.js';
import { DEFAULT_NAMESPACE, type ObjectRef, refKey } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { explainPeerFields, PEER_CONNECTOR_FIELDS } from '../../api/peer-fields.js';
import type { McpServerSpec } from '../../api/worker-protocol.js';
import type { Logger } from '../../observability/logger.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { type Page, type PageQuery, readOne, readPage } from './paging.js';
import type { ConnectorAccess } from '../../connector/access.js';
import type { ConnectorChecker } from '../../connector/check.js';
import type { GatewayDecision } from '../../connector/gateway.js';
import { REST_OWNER } from '../../registry/registry.js';

export interface ConnectorServiceOptions {
  connectors: Registry<Connector>;
  agents: Registry<Agent>;
  /** The check code the connector controller runs; GET .../tools records its finding with it. */
  checker: ConnectorChecker;
  /** Asks the connector controller to check the connector again soon (task dispatch uses it). */
  recheck?: (ref: ObjectRef) => void;
  logger: Logger;
  /** Reads for get and list from the informer cache; storage without it. */
  reads?: ReadCache<Connector>;
}

export interface AdmitOptions {
  /** Check only: a secret is not bound by a dry run. */
  dryRun?: boolean;
  /** Prefix of field names in causes: "" for the REST body, "spec" for the aggregated API. */
  root?: string;
}

export class ConnectorService {
  private readonly log: Logger;
  private readonly access: ConnectorAccess;

  constructor(private readonly o: ConnectorServiceOptions) {
    this.log = o.logger;
    this.access = o.checker.access;
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
    // The connector controller checks it once its informer sees it, as any connector.
    const created = await this.o.connectors.create(obj, { owner: REST_OWNER });
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
        await this.o.agents.update(
          namespace,
          agent,
          (a) => {
            a.spec.connectors = a.spec.connectors.filter((n) => n !== name);
          },
          { owner: REST_OWNER },
        );
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
    const auth = await this.access.auth(c);
    if (!auth.ok) {
      await this.o.checker.recordRefusal(c, auth);
      const details = { kind: CONNECTOR_KIND, name, phase: auth.phase };
      if (auth.refused === 'binding') throw secretBindingMismatch(`connector "${name}": ${auth.message}`, { ...details, secret: c.spec.authSecretName });
      if (auth.refused === 'egress') throw conflict(`connector "${name}" cannot be used: ${auth.message}`, details);
      throw conflict(`connector "${name}" cannot authenticate: ${auth.message}`, details);
    }
    // Asked now in the request: what it found is the connector's newest status.
    const listing = await this.access.listTools(c, auth);
    await this.o.checker.recordListing(c, listing);
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
    for (const connectorName of agent.spec.connectors) {
      const log = { namespace, agent: agentName, connector: connectorName };
      try {
        const c = await this.o.connectors.get(namespace, connectorName);
        if (!c) {
          this.log.warn(log, 'connector not found; the task runs without it');
          continue;
        }
        // Whatever happens below, the status should say how the connector is now that it is used.
        this.o.recheck?.(c.metadata);
        const auth = await this.access.auth(c);
        if (!auth.ok) {
          this.log.warn({ ...log, reason: auth.message }, 'connector cannot authenticate; the task runs without it');
          continue;
        }
        // Names only: the engine reaches it through the gateway, which adds the secret.
        out.push({ name: connectorName, namespace, revision: `${c.metadata.uid}/${c.metadata.generation}` });
      } catch (err) {
        // A broken secret file or store must not keep the task from running.
        this.log.error({ ...log, err: err instanceof Error ? err.message : String(err) }, 'connector could not be resolved; the task runs without it');
      }
    }
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
    if (grant.ref.namespace !== namespace)
      return refuse('Forbidden', 403, `agent "${agentName}" may use connectors of its own namespace "${grant.ref.namespace}" only`);
    const agent = await this.o.agents.get(namespace, agentName);
    if (!agent || agent.metadata.uid !== grant.uid || agent.metadata.deletionTimestamp)
      return refuse('Forbidden', 403, `agent "${agentName}" no longer exists`);
    if (!agent.spec.connectors.includes(name)) return refuse('Forbidden', 403, `connector "${name}" is not attached to agent "${agentName}"`);
    const c = await this.o.connectors.get(namespace, name);
    if (!c) return refuse('NotFound', 404, `connector "${name}" not found in namespace "${namespace}"`);
    const auth = await this.access.auth(c);
    if (!auth.ok) {
      this.log.warn({ namespace, agent: agentName, connector: name, reason: auth.message }, 'connector gateway: refused to forward');
      if (auth.refused === 'binding') return refuse('SecretBindingMismatch', 422, `connector "${name}": ${auth.message}`);
      return refuse('Conflict', 409, `connector "${name}" cannot be used: ${auth.message}`);
    }
    return { ok: true, target: { url: c.spec.url, headers: auth.headers, ...(auth.token ? { token: auth.token } : {}) } };
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
