// agentplane as an MCP server (/mcp), end to end: the MCP SDK's own client (Client +
// StreamableHTTPClientTransport) against a real server with a token file, real workers and the
// scripted model. An admin's client lists the tools, creates an agent, follows its task's events
// to task_completed, gives it a second task and decides a tool-call approval; a read-only token
// may list but is refused create_agent, run_task and decide_approval (tool errors naming the verb
// and the resource); no token is 401; a browser's cross-origin request is 403.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { tokenFileYaml } from '../support/tokens.js';

const TOKENS = { admin: 'mcp-admin-7d3e1a9c5b2f4860', reader: 'mcp-reader-2b4d6f8a0c1e3f57', approver: 'mcp-approver-9a8b7c6d5e4f3a21' };
const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
const run = promisify(execFile);
const MCP_ACCEPT = 'application/json, text/event-stream';

type Event = { seq: number; type: string; task: number; payload: Record<string, unknown> };

async function connect(h: Harness, token?: string): Promise<Client> {
  const client = new Client({ name: 'agentplane-mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers } }));
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await c.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** Follows get_events with `since` until `done` holds for what was read; returns all events read. */
async function follow(c: Client, name: string, namespace: string, since: number, done: (evs: Event[]) => boolean): Promise<Event[]> {
  const seen: Event[] = [];
  let cursor = since;
  await eventually(
    async () => {
      const r = await call(c, 'get_events', { name, namespace, since: cursor });
      expect(r.isError, text(r)).to.not.equal(true);
      const evs = (r.structuredContent as { events: Event[] }).events;
      seen.push(...evs);
      if (evs.length) cursor = evs.at(-1)!.seq;
      return done(seen);
    },
    60_000,
    `events of ${namespace}/${name}`,
  );
  return seen;
}

describe('MCP server at /mcp (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  let dir: string;
  let admin: Client;
  let reader: Client;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-mcp-'));
    const tokenFile = join(dir, 'tokens.yaml');
    writeFileSync(
      tokenFile,
      tokenFileYaml([
        { user: 'admin', token: TOKENS.admin },
        { user: 'reader', namespaces: ['team-a'], verbs: ['get', 'list', 'watch'], token: TOKENS.reader },
        { user: 'approver', namespaces: ['team-a'], verbs: ['get', 'list', 'approve'], token: TOKENS.approver },
      ]),
    );
    h = await startHarness({ host: '127.0.0.1', tokenFile });
    admin = await connect(h, TOKENS.admin);
    reader = await connect(h, TOKENS.reader);
  });
  after(async () => {
    await admin?.close();
    await reader?.close();
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists agentplane's tools, each with an input and an output schema", async () => {
    expect(admin.getServerVersion()?.name).to.equal('agentplane');
    const { tools } = await admin.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['list_agents', 'get_agent', 'create_agent', 'run_task', 'get_events', 'cancel_task', 'list_approvals', 'decide_approval', 'list_squads']) {
      expect(names, n).to.include(n);
    }
    const create = tools.find((t) => t.name === 'create_agent')!;
    expect(create.inputSchema.required).to.include.members(['name', 'instructions']);
    expect(create.outputSchema?.properties).to.have.property('agent');
    expect(tools.find((t) => t.name === 'list_agents')!.annotations?.readOnlyHint).to.equal(true);
  });

  it('creates an agent, reads its events until task_completed, and gives it a second task', async () => {
    const created = await call(admin, 'create_agent', { name: 'mcp-helper', namespace: 'team-a', instructions: '@say hello from mcp' });
    expect(created.isError, text(created)).to.not.equal(true);
    expect((created.structuredContent as { agent: { name: string; namespace: string } }).agent).to.include({ name: 'mcp-helper', namespace: 'team-a' });
    expect(text(created)).to.include('team-a/mcp-helper created');

    const first = await follow(admin, 'mcp-helper', 'team-a', 0, (evs) => evs.some((e) => e.type === 'task_completed'));
    expect(first[0].type).to.equal('task_started');
    expect(first.find((e) => e.type === 'task_completed')!.payload.result).to.equal('hello from mcp');

    // Creating it again is refused: create_agent never hands an existing agent a task.
    const again = await call(admin, 'create_agent', { name: 'mcp-helper', namespace: 'team-a', instructions: '@say twice' });
    expect(again.isError).to.equal(true);
    expect(text(again)).to.match(/^AlreadyExists \(409\): agent "mcp-helper" already exists in namespace "team-a"/);

    const last = first.at(-1)!.seq;
    const second = await call(admin, 'run_task', { name: 'mcp-helper', namespace: 'team-a', instructions: '@say second task done' });
    expect(second.isError, text(second)).to.not.equal(true);
    const next = await follow(admin, 'mcp-helper', 'team-a', last, (evs) => evs.some((e) => e.type === 'task_completed'));
    expect(next.every((e) => e.seq > last && e.task === 2)).to.equal(true);
    expect(next.find((e) => e.type === 'task_completed')!.payload.result).to.equal('second task done');

    const got = await call(admin, 'get_agent', { name: 'mcp-helper', namespace: 'team-a' });
    expect((got.structuredContent as { agent: { taskStatus: string } }).agent.taskStatus).to.equal('Complete');
    const listed = await call(admin, 'list_agents', {});
    expect((listed.structuredContent as { agents: { name: string }[] }).agents.map((a) => a.name)).to.include('mcp-helper');
  });

  it('gives a service refusal as a tool error with its reason: an unknown agent, a bad name', async () => {
    const missing = await call(admin, 'get_agent', { name: 'no-such-agent', namespace: 'team-a' });
    expect(missing.isError).to.equal(true);
    expect(text(missing)).to.match(/^NotFound \(404\)/);
    const bad = await call(admin, 'create_agent', { name: 'Not_A_Name', namespace: 'team-a', instructions: 'x' });
    expect(bad.isError).to.equal(true);
    expect(text(bad)).to.match(/^Invalid \(400\).*name/);
    const badNs = await call(admin, 'list_agents', { namespace: 'Bad Namespace' });
    expect(badNs.isError).to.equal(true);
    expect(text(badNs)).to.include('namespace');
  });

  it('lets a read-only token list and read, in its namespace only', async () => {
    const listed = await call(reader, 'list_agents', { namespace: 'team-a' });
    expect(listed.isError, text(listed)).to.not.equal(true);
    expect((listed.structuredContent as { agents: { name: string }[] }).agents.map((a) => a.name)).to.include('mcp-helper');
    const events = await call(reader, 'get_events', { name: 'mcp-helper', namespace: 'team-a', limit: 2 });
    expect(events.isError, text(events)).to.not.equal(true);
    expect((events.structuredContent as { events: unknown[] }).events).to.have.length(2);
    expect((await call(reader, 'list_squads', { namespace: 'team-a' })).isError).to.not.equal(true);
    expect((await call(reader, 'list_approvals', { name: 'mcp-helper', namespace: 'team-a' })).isError).to.not.equal(true);
    // Every namespace, or another one, is beyond its scope.
    const all = await call(reader, 'list_agents', {});
    expect(all.isError).to.equal(true);
    expect(text(all)).to.include('cannot list resource "agents" in API group "agentplane.io" at the cluster scope');
    const other = await call(reader, 'get_agent', { name: 'mcp-helper', namespace: 'default' });
    expect(text(other)).to.include('cannot get resource "agents" in API group "agentplane.io" in the namespace "default"');
  });

  it('refuses a read-only token create_agent, run_task, cancel_task and decide_approval, naming the verb and resource', async () => {
    const refusals: [string, Record<string, unknown>, string][] = [
      ['create_agent', { name: 'by-reader', namespace: 'team-a', instructions: '@say no' }, 'cannot create resource "agents"'],
      ['run_task', { name: 'mcp-helper', namespace: 'team-a', instructions: '@say no' }, 'cannot patch resource "agents"'],
      ['cancel_task', { name: 'mcp-helper', namespace: 'team-a' }, 'cannot create resource "agents/cancel"'],
      ['decide_approval', { name: 'mcp-helper', namespace: 'team-a', id: 'toolu_01', decision: 'allow' }, 'cannot create resource "agents/approvals"'],
    ];
    for (const [tool, args, why] of refusals) {
      const r = await call(reader, tool, args);
      expect(r.isError, tool).to.equal(true);
      expect(text(r), tool).to.match(/^Forbidden \(403\)/);
      expect(text(r), tool).to.include(`User "reader" ${why} in API group "agentplane.io" in the namespace "team-a"`);
    }
    // Nothing happened: no agent, no new task.
    expect((await h.api('GET', '/api/v1/agents/by-reader?namespace=team-a', undefined, { authorization: `Bearer ${TOKENS.admin}` })).status).to.equal(404);
    const helper = await h.api('GET', '/api/v1/agents/mcp-helper?namespace=team-a', undefined, { authorization: `Bearer ${TOKENS.admin}` });
    expect(helper.body.lastTaskMessage).to.equal('second task done');
  });

  it('lets a token with `approve` decide a waiting tool call, which then runs', async () => {
    const auth = { authorization: `Bearer ${TOKENS.admin}` };
    const r = await h.api(
      'POST',
      '/api/v1/agents',
      { name: 'gated', namespace: 'team-a', instructions: '@bash echo ran-after-approval\n@say gated done', approval: { tools: ['Bash'] } },
      auth,
    );
    expect(r.status, r.text).to.equal(201);
    const approver = await connect(h, TOKENS.approver);
    try {
      const pending = await eventually(
        async () => {
          const l = await call(approver, 'list_approvals', { name: 'gated', namespace: 'team-a' });
          expect(l.isError, text(l)).to.not.equal(true);
          return (l.structuredContent as { approvals: { id: string; tool: string }[] }).approvals[0];
        },
        60_000,
        'an approval request',
      );
      expect(pending.tool).to.equal('Bash');
      const decided = await call(approver, 'decide_approval', { name: 'gated', namespace: 'team-a', id: pending.id, decision: 'allow', reason: 'fine' });
      expect(decided.isError, text(decided)).to.not.equal(true);
      expect((decided.structuredContent as { approval: object }).approval).to.include({
        id: pending.id,
        decision: 'allow',
        reason: 'fine',
        decidedBy: 'approver',
      });
      const evs = await follow(approver, 'gated', 'team-a', 0, (e) => e.some((x) => x.type === 'task_completed'));
      expect(JSON.stringify(evs.filter((e) => e.type === 'tool_result'))).to.include('ran-after-approval');
    } finally {
      await approver.close();
    }
  });

  it('`agentplane mcp config` prints a configuration an MCP client connects with', async () => {
    const env = { ...process.env, AGENTPLANE_SERVER: h.url, AGENTPLANE_TOKEN: TOKENS.reader, AGENTPLANE_CLIENT_CONFIG: join(dir, 'none.yaml') };
    const { stdout } = await run(process.execPath, [MAIN, 'mcp', 'config'], { env });
    const entry = (JSON.parse(stdout) as { mcpServers: Record<string, { type: string; url: string; headers: Record<string, string> }> }).mcpServers.agentplane;
    expect(entry).to.deep.equal({ type: 'http', url: `${h.url}/mcp`, headers: { Authorization: `Bearer ${TOKENS.reader}` } });
    const client = new Client({ name: 'from-config', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).to.include('get_events');
    } finally {
      await client.close();
    }
    const claude = await run(process.execPath, [MAIN, 'mcp', 'config', '--format', 'claude'], { env });
    expect(claude.stdout.trim()).to.equal(`claude mcp add --transport http 'agentplane' '${h.url}/mcp' --header 'Authorization: Bearer ${TOKENS.reader}'`);
  });

  it('answers 401 without a token, and the SDK client cannot connect', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const res = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MCP_ACCEPT },
      body: JSON.stringify(init),
    });
    expect(res.status).to.equal(401);
    let err: Error | undefined;
    await connect(h).catch((e: Error) => (err = e));
    expect(err, 'connect without a token').to.be.instanceOf(Error);
  });

  it("refuses a browser's cross-origin request, whatever the method, and one a page sent cross-site", async () => {
    const headers = { authorization: `Bearer ${TOKENS.admin}`, 'content-type': 'application/json', accept: MCP_ACCEPT };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const post = await fetch(`${h.url}/mcp`, { method: 'POST', headers: { ...headers, origin: 'http://evil.example' }, body });
    expect(post.status).to.equal(403);
    expect(await post.text()).to.include('refused a request from the origin');
    const get = await fetch(`${h.url}/mcp`, { headers: { authorization: headers.authorization, accept: 'text/event-stream', origin: 'http://evil.example' } });
    expect(get.status).to.equal(403);
    const site = await fetch(`${h.url}/mcp`, { method: 'POST', headers: { ...headers, 'sec-fetch-site': 'cross-site' }, body });
    expect(site.status).to.equal(403);
    // The same request from no browser is answered.
    const ok = await fetch(`${h.url}/mcp`, { method: 'POST', headers, body });
    expect(ok.status).to.equal(200);
    expect(((await ok.json()) as { result: { tools: unknown[] } }).result.tools.length).to.be.greaterThan(5);
  });

  it('is stateless: no session id, GET and DELETE are 405; malformed messages are 4xx', async () => {
    const headers = { authorization: `Bearer ${TOKENS.admin}`, 'content-type': 'application/json', accept: MCP_ACCEPT };
    const ok = await fetch(`${h.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('mcp-session-id')).to.equal(null);
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${h.url}/mcp`, { method, headers: { authorization: headers.authorization, accept: 'text/event-stream' } });
      expect(r.status, method).to.equal(405);
      expect(r.headers.get('allow')).to.equal('POST');
    }
    for (const body of ['{"hello": "world"}', '42', '{"jsonrpc":"2.0"}', '[{"id":1}]']) {
      const r = await fetch(`${h.url}/mcp`, { method: 'POST', headers, body });
      expect(r.status, body).to.be.within(400, 499);
    }
    const notAccepting = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, accept: 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(notAccepting.status).to.equal(406);
  });
});
