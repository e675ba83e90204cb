// What clients of komputer-ai's API (the peer project) call that agentplane does not serve. A
// request for one gets the answer any unserved path gets (404, or 405 with `Allow` on a path
// served under other methods), with a message naming what is not supported and what agentplane
// does instead, so the client's author need not guess (docs/decisions.md "Clients of the peer
// project"). Nothing here is a route: the OpenAPI document lists only what is served.

interface Unsupported {
  /** Only this method (else any). */
  method?: string;
  path: RegExp;
  /** What is not supported, as the object of "agentplane does not support ...". */
  what: string;
  instead: string;
}

const AGENT = '/api/v1/agents/[^/]+';

const UNSUPPORTED: readonly Unsupported[] = [
  { path: /^\/api\/v1\/offices(\/|$)/, what: 'offices', instead: 'group agents in a squad (/api/v1/squads)' },
  { path: /^\/api\/v1\/connector-templates$/, what: 'connector templates', instead: 'create a connector with its URL and secret (POST /api/v1/connectors)' },
  {
    path: /^\/api\/v1\/templates$/,
    what: 'listing pod templates',
    instead: "name one in an agent's templateRef: the embedded home's --templates, or the cluster home's template ConfigMaps (kubectl get configmaps)",
  },
  { path: /^\/api\/v1\/namespaces$/, what: 'listing namespaces', instead: 'a list without ?namespace= covers every namespace' },
  {
    path: /^\/api\/v1\/config$/,
    what: "the platform settings endpoint (komputer-ai's S3 session store)",
    instead: "sessions are kept in each agent's workspace; nothing needs configuring",
  },
  {
    method: 'POST',
    path: new RegExp(`^${AGENT}/sleep$`),
    what: 'POST .../sleep',
    instead: 'PATCH /api/v1/agents/{name} with {"lifecycle": "Sleep"} (a busy agent sleeps when its task ends)',
  },
  {
    method: 'POST',
    path: new RegExp(`^${AGENT}/wake$`),
    what: 'POST .../wake',
    instead: 'PATCH /api/v1/agents/{name} with {"lifecycle": "Wake"} (awake, no task started)',
  },
  {
    method: 'POST',
    path: new RegExp(`^${AGENT}/archive$`),
    what: 'archiving agents',
    instead: 'DELETE /api/v1/agents/{name} removes the agent with its workspace',
  },
  {
    method: 'PATCH',
    path: /^\/api\/v1\/connectors\/[^/]+$/,
    what: 'updating a connector (its token, or disabling it)',
    instead: "change the token in the connector's secret (PATCH /api/v1/secrets/{name}); to stop agents using a connector, remove it from their connectors",
  },
];

/** Why `method path` is not served, when it is something the peer's clients call; else undefined. */
export function unsupportedMessage(method: string, path: string): string | undefined {
  const u = UNSUPPORTED.find((x) => (!x.method || x.method === method) && x.path.test(path));
  return u && `agentplane does not support ${u.what}: ${u.instead}`;
}
