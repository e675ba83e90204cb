// Request fields that clients of komputer-ai's API send and agentplane does not have. Each is
// refused (400, the field named) like any unknown field, but with what agentplane does instead,
// so a peer client's author learns it from the answer (docs/decisions.md "Clients of the peer
// project").

import type { Cause } from './errors.js';

const TEMPLATE = "pod settings come from the agent's templateRef (a pod template the server is configured with)";
const LIMITS = 'agentplane has no per-agent limits of this kind; the server caps tasks with --max-workers, each template with its model task deadline';

/** Agent create, patch and squad member fields. */
export const PEER_AGENT_FIELDS: Readonly<Record<string, string>> = {
  secretRefs: "agents are given no secrets: a secret reaches an MCP server through a connector (authSecretName), never the agent's tools",
  podSpec: TEMPLATE,
  storage: `${TEMPLATE}; the workspace persists until the agent is deleted`,
  effort: "the engine uses the model's own default effort",
  allowedTools: "every agent has the engine's built-in tools and its connectors' tools",
  disallowedTools: "every agent has the engine's built-in tools and its connectors' tools",
  budgetUSD: 'set budget: {maxCostUsd, onExceed: "Stop" | "Pause"} (docs/budgets.md)',
  taskBudgetUSD: 'set budget: {maxCostUsd, perTask: true, onExceed: "Stop" | "Pause"} (docs/budgets.md)',
  taskTimeout: LIMITS,
  sleepTTL: 'an idle agent\'s worker is released after --idle-timeout (or its agentplane.io/idle-timeout annotation); put it to sleep with lifecycle "Sleep"',
  archiveTTL: 'agentplane does not archive agents: DELETE removes one with its workspace',
  deleteTTL: 'use lifecycle "AutoDelete" to delete the agent after its task',
  officeManager: 'agentplane has no offices: a manager agent works with the agents of its squad',
  labels: 'set labels through the aggregated API (kubectl label agents.agentplane.io/<name>)',
  removeLabels: 'set labels through the aggregated API (kubectl label agents.agentplane.io/<name>)',
  templateRef: 'the pod template is chosen at create (POST /api/v1/agents) and stays',
};

/** Connector create fields. */
export const PEER_CONNECTOR_FIELDS: Readonly<Record<string, string>> = {
  type: 'every connector is a remote MCP server (Streamable HTTP): leave type out',
  oauthClientId: 'OAuth connectors are not supported yet: store an access token in a secret and use authType "bearer"',
  oauthClientSecret: 'OAuth connectors are not supported yet: store an access token in a secret and use authType "bearer"',
};

/**
 * `causes` with each unknown field that `hints` names explained: "is not supported by
 * agentplane: <what to do instead>". Other causes stay as they are.
 */
export function explainPeerFields(causes: Cause[], hints: Readonly<Record<string, string>>): Cause[] {
  return causes.map((c) => {
    if (c.message !== 'is not a known field') return c;
    const field = c.field.split('.').at(-1)!;
    return Object.hasOwn(hints, field) ? { ...c, message: `is not supported by agentplane: ${hints[field]}` } : c;
  });
}
