// The Connector resource (spec 2.4): a named reference to an external MCP tool server, attached to
// agents by name. Its credential lives in a Secret (authSecretName/authSecretKey) and is read at
// task time; the connector itself never holds it.

import type { Cause } from './errors.js';
import { nameSchema, namespaceSchema } from './agent.js';
import type { Resource } from './meta.js';

export const CONNECTOR_KIND = 'Connector';

export type ConnectorAuthType = 'bearer' | 'header';
export const CONNECTOR_AUTH_TYPES: readonly ConnectorAuthType[] = ['bearer', 'header'];
/** What clients of this API also send for the bearer form; stored as "bearer". */
export const BEARER_ALIAS = 'token';
export const authTypeOf = (t: string | undefined): ConnectorAuthType | undefined => (t === BEARER_ALIAS ? 'bearer' : (t as ConnectorAuthType | undefined));

export type ConnectorPhase = 'Unknown' | 'Ready' | 'Unreachable' | 'Unauthorized' | 'SecretMissing' | 'Error';
export const CONNECTOR_PHASES: readonly ConnectorPhase[] = ['Unknown', 'Ready', 'Unreachable', 'Unauthorized', 'SecretMissing', 'Error'];

/**
 * Secret keys (and so authSecretKey): Kubernetes' Secret key rule, "." and ".." and a leading
 * ".." included (a key can become a file name in a mounted Secret; the cluster home's Secrets
 * would refuse them).
 */
export const SECRET_KEY_PATTERN = '^(?!\\.\\.)(?!\\.$)[-._a-zA-Z0-9]+$';
/** An HTTP header field name (RFC 9110 token). */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
export const URL_PATTERN = '^https?://';

/** Headers the MCP transport sets itself; a connector may not put its token in them. */
export const RESERVED_HEADER_NAMES: readonly string[] = [
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'mcp-protocol-version',
  'mcp-session-id',
  'transfer-encoding',
];

export interface ConnectorSpec {
  service: string;
  displayName: string;
  url: string;
  /** Both set or both absent. */
  authSecretName?: string;
  authSecretKey?: string;
  authType: ConnectorAuthType;
  /** Required when authType is "header". */
  headerName?: string;
}

export interface ConnectorStatus {
  phase: ConnectorPhase;
  message: string;
  /** Tools the server listed at the last successful check. */
  toolCount?: number;
  lastCheckedAt?: string;
}

export type Connector = Resource<ConnectorSpec, ConnectorStatus>;

/** POST /api/v1/connectors body. */
export interface ConnectorCreateRequest {
  name: string;
  namespace?: string;
  service?: string;
  displayName?: string;
  url: string;
  authSecretName?: string;
  authSecretKey?: string;
  authType?: ConnectorAuthType;
  headerName?: string;
}

/** The connector as the REST mirror returns it (list, get, create, delete). */
export interface ConnectorResponse {
  name: string;
  namespace: string;
  service: string;
  displayName: string;
  url: string;
  authSecretName: string;
  authSecretKey: string;
  authType: ConnectorAuthType;
  headerName?: string;
  attachedAgents: number;
  agentNames: string[];
  status: ConnectorStatus;
  createdAt: string;
}

export interface ConnectorTool {
  name: string;
  description: string;
}

const secretKeySchema = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  pattern: SECRET_KEY_PATTERN,
  description: 'a key of the secret: letters, digits, "-", "_" and "."',
} as const;

const connectorFields = {
  service: { type: 'string', maxLength: 63, description: 'service kind label, e.g. "github"' },
  displayName: { type: 'string', maxLength: 253, description: 'human-readable name; default the connector name' },
  url: {
    type: 'string',
    minLength: 1,
    maxLength: 2048,
    format: 'uri',
    pattern: URL_PATTERN,
    description: 'http(s) address of the MCP server (Streamable HTTP transport), without credentials',
  },
  authSecretName: { ...nameSchema, description: 'name of the secret (same namespace) holding the token; with authSecretKey' },
  authSecretKey: { ...secretKeySchema, description: 'key inside that secret; with authSecretName' },
  authType: {
    type: 'string',
    enum: [...CONNECTOR_AUTH_TYPES, BEARER_ALIAS],
    description:
      '"bearer" (Authorization: Bearer <token>, the default; "token", as komputer-ai clients send it, is the same) or "header" (<headerName>: <token>, as komputer-ai\'s "header"); "oauth" is refused: not supported yet',
  },
  headerName: {
    type: 'string',
    minLength: 1,
    maxLength: 128,
    pattern: HEADER_NAME_PATTERN,
    description: 'an HTTP header name; required with authType "header"',
  },
} as const;

export const connectorCreateRequestSchema = {
  $id: 'ConnectorCreateRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url'],
  properties: { name: nameSchema, namespace: namespaceSchema, ...connectorFields },
} as const;

export const connectorSpecSchema = {
  $id: 'ConnectorSpec',
  type: 'object',
  additionalProperties: false,
  required: ['service', 'displayName', 'url', 'authType'],
  properties: connectorFields,
} as const;

/** What the last check of the server found (read-only; written by the service). */
export const connectorStatusSchema = {
  $id: 'ConnectorStatus',
  type: 'object',
  required: ['phase', 'message'],
  properties: {
    phase: { type: 'string', enum: CONNECTOR_PHASES },
    message: { type: 'string' },
    toolCount: { type: 'integer', minimum: 0 },
    lastCheckedAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const connectorResponseSchema = {
  $id: 'ConnectorResponse',
  type: 'object',
  required: ['name', 'namespace', 'service', 'displayName', 'url', 'attachedAgents', 'agentNames', 'status', 'createdAt'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    service: { type: 'string' },
    displayName: { type: 'string' },
    url: { type: 'string' },
    authSecretName: { type: 'string', description: '"" when the connector sends no credential' },
    authSecretKey: { type: 'string' },
    authType: { type: 'string', enum: CONNECTOR_AUTH_TYPES },
    headerName: { type: 'string' },
    attachedAgents: { type: 'integer', minimum: 0, description: 'number of agents using it' },
    agentNames: { type: 'array', items: { type: 'string' } },
    status: withoutId(connectorStatusSchema),
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const connectorToolsResponseSchema = {
  $id: 'ConnectorToolsResponse',
  type: 'object',
  required: ['connector', 'tools'],
  properties: {
    connector: { type: 'string' },
    namespace: { type: 'string' },
    tools: {
      type: 'array',
      items: { type: 'object', required: ['name', 'description'], properties: { name: { type: 'string' }, description: { type: 'string' } } },
    },
  },
} as const;

/**
 * Rules across fields, which the JSON Schema does not say: the secret reference is both-or-neither,
 * headerName goes with authType "header" only, and the URL carries no credentials.
 * `root` prefixes field names ("" for a request body, "spec" for the stored object).
 */
export function connectorRuleCauses(spec: Partial<ConnectorSpec>, root = ''): Cause[] {
  const f = (name: string): string => (root ? `${root}.${name}` : name);
  const causes: Cause[] = [];
  const hasName = spec.authSecretName !== undefined && spec.authSecretName !== '';
  const hasKey = spec.authSecretKey !== undefined && spec.authSecretKey !== '';
  if (hasName && !hasKey) causes.push({ field: f('authSecretKey'), message: 'is required when authSecretName is set' });
  if (hasKey && !hasName) causes.push({ field: f('authSecretName'), message: 'is required when authSecretKey is set' });
  const authType = spec.authType ?? 'bearer';
  if (authType === 'header') {
    if (!spec.headerName) causes.push({ field: f('headerName'), message: 'is required when authType is "header"' });
    else if (RESERVED_HEADER_NAMES.includes(spec.headerName.toLowerCase())) {
      causes.push({ field: f('headerName'), message: `"${spec.headerName}" is set by the MCP transport itself; choose another header` });
    }
    if (!hasName) causes.push({ field: f('authSecretName'), message: 'is required when authType is "header"' });
  } else if (spec.headerName !== undefined) {
    causes.push({ field: f('headerName'), message: 'is only allowed with authType "header"' });
  }
  if (typeof spec.url === 'string' && /^https?:\/\//i.test(spec.url)) {
    try {
      const u = new URL(spec.url);
      if (u.username || u.password) {
        causes.push({ field: f('url'), message: 'must not carry credentials; put the token in a secret (authSecretName)' });
      }
      if (u.hash) causes.push({ field: f('url'), message: 'must not have a fragment' });
    } catch {
      causes.push({ field: f('url'), message: 'must be a valid http(s) URL' });
    }
  }
  return causes;
}

/** What clients of komputer-ai's API send for a connector whose token comes from an OAuth flow. */
export const OAUTH_AUTH_TYPE = 'oauth';

/**
 * `causes` with the schema's "must be one of" for authType "oauth" replaced by why it is refused:
 * agentplane runs no OAuth flow for connectors (yet), and what to do instead. `root` as for
 * connectorRuleCauses.
 */
export function refineAuthTypeCauses(causes: Cause[], authType: unknown, root = ''): Cause[] {
  if (authType !== OAUTH_AUTH_TYPE) return causes;
  const field = root ? `${root}.authType` : 'authType';
  return causes.map((c) =>
    c.field === field
      ? {
          field,
          message:
            'is "oauth", which agentplane does not support yet (it runs no OAuth flow for connectors): store an access token in a secret and use authType "bearer" ("token") with authSecretName and authSecretKey',
        }
      : c,
  );
}

/** A schema embedded in another: ajv allows one schema per $id. */
function withoutId<S extends { $id?: string }>(schema: S): Omit<S, '$id'> {
  const { $id: _id, ...rest } = schema;
  return rest;
}

/** The REST shape; `agentNames` are the agents in the connector's namespace that list it. */
export function toConnectorResponse(c: Connector, agentNames: string[]): ConnectorResponse {
  return {
    name: c.metadata.name,
    namespace: c.metadata.namespace,
    service: c.spec.service,
    displayName: c.spec.displayName,
    url: c.spec.url,
    authSecretName: c.spec.authSecretName ?? '',
    authSecretKey: c.spec.authSecretKey ?? '',
    authType: c.spec.authType,
    ...(c.spec.headerName !== undefined ? { headerName: c.spec.headerName } : {}),
    attachedAgents: agentNames.length,
    agentNames,
    status: c.status,
    createdAt: c.metadata.creationTimestamp,
  };
}
