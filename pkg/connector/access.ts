// What may be sent to a connector, and the one way the server asks a connector for its tools.
// Every sender (the connector controller's checks, GET .../tools, task dispatch, the connector
// gateway) goes through `auth` at the moment of sending, so a later change of the URL, the secret
// or its binding cannot leak a token: the URL must be one the server may reach, and the secret,
// read from the connector's own namespace, must be bound to a prefix covering the URL. An unbound
// secret is sent nowhere: only a connector write binds it (the ConnectorSecretBinding admission plugin).

import type { Connector, ConnectorPhase } from '../api/connector.js';
import { urlAllowedBy } from '../api/url-prefix.js';
import type { SecretStore } from '../registry/secrets.js';
import { type EgressPolicy, fetchOnlyTo, guardedFetch, urlEgressRefusal } from './egress.js';
import { DEFAULT_PROBE_TIMEOUT_MS, listMcpTools, type ToolListing } from './mcp-tools.js';

/**
 * What may be sent to a connector now. `refused` tells why not: the secret is missing or unusable
 * (`secret`), its binding does not cover the URL (`binding`), or the server may not connect
 * there (`egress`).
 */
export type ConnectorAuth =
  | { ok: true; headers: Record<string, string>; token?: string }
  | { ok: false; phase: Extract<ConnectorPhase, 'SecretMissing' | 'Error'>; message: string; refused: 'secret' | 'binding' | 'egress' };

export interface ConnectorAccessOptions {
  secrets: SecretStore;
  /** Allow connector URLs at loopback and private addresses (--allow-private-connector-urls); default false. */
  allowPrivateUrls?: boolean;
  /** Deadline of one tools/list, default 5 s. */
  probeTimeoutMs?: number;
}

export class ConnectorAccess {
  /** Where the server may connect for connectors (the gateway connects under it too). */
  readonly egress: EgressPolicy;
  /** The fetch of every connection the server makes to a connector: refuses what the policy refuses, after DNS. */
  readonly fetch: ReturnType<typeof guardedFetch>;
  private readonly timeoutMs: number;

  constructor(private readonly o: ConnectorAccessOptions) {
    this.egress = { allowPrivate: o.allowPrivateUrls === true };
    this.fetch = guardedFetch(this.egress);
    this.timeoutMs = o.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  }

  /** Whether anything may be sent to the connector now, and its auth header with the token read now. */
  async auth(c: Connector): Promise<ConnectorAuth> {
    const { authSecretName: secretName, authSecretKey: key, authType, headerName, url } = c.spec;
    const why = urlEgressRefusal(url, this.egress);
    if (why) return { ok: false, phase: 'Error', refused: 'egress', message: `the server does not connect to ${url}: ${why}` };
    if (!secretName || !key) return { ok: true, headers: {} };
    const ns = c.metadata.namespace;
    const secret = await this.o.secrets.get(ns, secretName);
    const missing = (message: string): ConnectorAuth => ({ ok: false, phase: 'SecretMissing', refused: 'secret', message });
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

  /** tools/list against the connector with what `auth` allowed; `signal` aborts it (shutdown). */
  listTools(c: Connector, auth: Extract<ConnectorAuth, { ok: true }>, signal?: AbortSignal): Promise<ToolListing> {
    return listMcpTools(c.spec.url, auth.headers, {
      // The credential goes to the connector's URL only: a redirect, even within its origin, is not followed.
      fetch: fetchOnlyTo(c.spec.url, this.fetch),
      timeoutMs: this.timeoutMs,
      ...(signal ? { signal } : {}),
      ...(auth.token ? { secrets: [auth.token] } : {}),
    });
  }
}
