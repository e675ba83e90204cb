// Connectors end to end: a real MCP server (official SDK) that checks a bearer token, the real
// server, real worker processes and the real engine; only the model's words are scripted.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { EventClient, eventually, type Harness, type Reply, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const GOOD_TOKEN = 'mcp-tok-7c1e9a5f3b2d4e60';
const WRONG_TOKEN = 'mcp-wrong-0d9f8e7c6b5a4';
const HEADER_TOKEN = 'mcp-hdr-5a4b3c2d1e0f9a8b';
const SECRET_VALUES = [GOOD_TOKEN, WRONG_TOKEN, HEADER_TOKEN];

describe('connectors (integration)', function () {
  let h: Harness;
  let mcp: TestMcpServer;
  let keyed: TestMcpServer;
  /** Every response body the tests received, to prove no secret value is in any. */
  const texts: string[] = [];
  const api = async <T = any>(method: string, path: string, body?: unknown): Promise<Reply<T>> => {
    const r = await h.api<T>(method, path, body);
    texts.push(r.text);
    return r;
  };
  const wsUrl = (name: string, query = ''): string => `${h.url}/api/v1/agents/${name}/ws${query}`;

  /** Sends a task and returns its events (from the WebSocket) once it ended. */
  async function runTask(name: string, instructions: string, extra: Record<string, unknown> = {}): Promise<AgentEvent[]> {
    const exists = (await api('GET', `/api/v1/agents/${name}`)).status === 200;
    let last = 0;
    let ws: EventClient | undefined;
    if (exists) {
      last = (await api('GET', `/api/v1/agents/${name}/events?limit=1`)).body.events.at(-1)?.seq ?? 0;
      ws = new EventClient(wsUrl(name, `?since=${last}`));
      await ws.opened();
    }
    const sent = await api('POST', '/api/v1/agents', { name, instructions, ...extra });
    expect(sent.status, sent.text).to.equal(exists ? 200 : 201);
    ws ??= new EventClient(wsUrl(name));
    const evs = await ws.until((all) => all.some((e) => e.seq > last && ['task_completed', 'task_cancelled', 'error'].includes(e.type)));
    ws.close();
    texts.push(...ws.raw);
    return evs.filter((e) => e.seq > last);
  }

  before(async () => {
    mcp = createTestMcpServer({ token: GOOD_TOKEN });
    keyed = createTestMcpServer({ token: HEADER_TOKEN, headerName: 'X-Api-Key' });
    await mcp.start();
    await keyed.start();
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
    await keyed?.close();
  });

  describe('secrets', () => {
    it('creates a secret (201) with names and keys only; 409 when it exists', async () => {
      const r = await api('POST', '/api/v1/secrets', { name: 'echo-token', data: { token: GOOD_TOKEN } });
      expect(r.status).to.equal(201);
      expect(r.body).to.deep.equal({ name: 'echo-token', namespace: 'default', keys: ['token'], allowedUrls: [], createdAt: r.body.createdAt });
      expect(Date.parse(r.body.createdAt)).to.be.closeTo(Date.now(), 60_000);
      const again = await api('POST', '/api/v1/secrets', { name: 'echo-token', data: { token: 'other' } });
      expect(again.status).to.equal(409);
      expect(again.body.reason).to.equal('AlreadyExists');
    });

    it('stores it as a 0600 file in a 0700 directory', () => {
      const dir = join(h.dataDir, 'secrets', 'default');
      expect(statSync(join(dir, 'echo-token.json')).mode & 0o777).to.equal(0o600);
      expect(statSync(dir).mode & 0o777).to.equal(0o700);
      expect(statSync(join(h.dataDir, 'secrets')).mode & 0o777).to.equal(0o700);
    });

    it('lists and gets names and keys, never values', async () => {
      await api('POST', '/api/v1/secrets', { name: 'wrong-token', data: { token: WRONG_TOKEN } });
      await api('POST', '/api/v1/secrets', { name: 'api-key', data: { key: HEADER_TOKEN } });
      const list = await api('GET', '/api/v1/secrets');
      expect(list.status).to.equal(200);
      const names = list.body.secrets.map((s: { name: string }) => s.name);
      expect(names).to.include.members(['echo-token', 'wrong-token', 'api-key']);
      for (const s of list.body.secrets) expect(Object.keys(s).sort()).to.deep.equal(['allowedUrls', 'createdAt', 'keys', 'name', 'namespace']);
      const one = await api('GET', '/api/v1/secrets/echo-token');
      expect(one.body).to.deep.include({ name: 'echo-token', namespace: 'default', keys: ['token'] });
      expect((await api('GET', '/api/v1/secrets?namespace=elsewhere')).body.secrets).to.deep.equal([]);
      expect((await api('GET', '/api/v1/secrets/ghost')).status).to.equal(404);
    });

    it('replaces with PUT (200), creates with PUT (201), deletes (200)', async () => {
      const created = await api('PUT', '/api/v1/secrets/scratch', { data: { a: 'first-value' } });
      expect(created.status).to.equal(201);
      const replaced = await api('PUT', '/api/v1/secrets/scratch', { data: { b: 'second-value' } });
      expect(replaced.status).to.equal(200);
      expect(replaced.body.keys).to.deep.equal(['b']);
      expect(replaced.body.createdAt).to.equal(created.body.createdAt);
      const del = await api('DELETE', '/api/v1/secrets/scratch');
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.include({ name: 'scratch', keys: ['b'] });
      expect((await api('GET', '/api/v1/secrets/scratch')).status).to.equal(404);
      expect((await api('DELETE', '/api/v1/secrets/scratch')).status).to.equal(404);
      expect(JSON.stringify([created.body, replaced.body, del.body])).to.not.match(/first-value|second-value/);
    });

    it('merges keys with PATCH: sets given keys, null removes, others kept; 404 when absent', async () => {
      await api('PUT', '/api/v1/secrets/merge-me', { data: { a: 'value-a', b: 'value-b' } });
      const patched = await api('PATCH', '/api/v1/secrets/merge-me', { data: { b: 'value-b2', c: 'value-c', a: null } });
      expect(patched.status).to.equal(200);
      expect(patched.body.keys).to.deep.equal(['b', 'c']);
      expect(JSON.stringify(patched.body)).to.not.match(/value-/);
      expect((await api('GET', '/api/v1/secrets/merge-me')).body.keys).to.deep.equal(['b', 'c']);
      expect((await api('PATCH', '/api/v1/secrets/ghost', { data: { k: 'v' } })).status).to.equal(404);
      const bad = await api('PATCH', '/api/v1/secrets/merge-me', { data: { k: 1 } });
      expect(bad.status).to.equal(400);
      expect((await api('PATCH', '/api/v1/secrets/merge-me', { data: { b: null, c: null } })).status).to.equal(400);
      await api('DELETE', '/api/v1/secrets/merge-me');
    });

    it('refuses bad input with 400 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ name: 'Bad1', data: { k: 'v' } }, 'name'],
        [{ name: 'ok', data: {} }, 'data'],
        [{ name: 'ok', data: { 'bad key': 'v' } }, 'data["bad key"]'],
        [{ name: 'ok', data: { k: 1 } }, 'data.k'],
        [{ name: 'ok', data: { k: 'x'.repeat(65537) } }, 'data.k'],
        [{ name: 'ok' }, 'data'],
      ];
      for (const [body, field] of cases) {
        const r = await api('POST', '/api/v1/secrets', body);
        expect(r.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
        expect(r.body.reason).to.equal('Invalid');
        expect(r.body.details.causes.map((c: { field: string }) => c.field)).to.include(field);
      }
      const mismatch = await api('PUT', '/api/v1/secrets/one', { name: 'two', data: { k: 'v' } });
      expect(mismatch.status).to.equal(400);
    });
  });

  describe('connector CRUD and validation', () => {
    it('creates a connector: 201 with the connector response', async () => {
      const r = await api('POST', '/api/v1/connectors', {
        name: 'echo',
        service: 'echo',
        displayName: 'Echo server',
        url: mcp.url,
        authSecretName: 'echo-token',
        authSecretKey: 'token',
      });
      expect(r.status, r.text).to.equal(201);
      expect(r.body).to.deep.include({
        name: 'echo',
        namespace: 'default',
        service: 'echo',
        displayName: 'Echo server',
        url: mcp.url,
        authSecretName: 'echo-token',
        authSecretKey: 'token',
        authType: 'bearer',
        attachedAgents: 0,
      });
      expect(r.body.agentNames).to.deep.equal([]);
      expect(r.body.status.phase).to.be.a('string');
      expect(Date.parse(r.body.createdAt)).to.be.closeTo(Date.now(), 60_000);
    });

    it('answers 409 AlreadyExists to a duplicate and 404 to an unknown name', async () => {
      const dup = await api('POST', '/api/v1/connectors', { name: 'echo', url: mcp.url });
      expect(dup.status).to.equal(409);
      expect(dup.body.reason).to.equal('AlreadyExists');
      const missing = await api('GET', '/api/v1/connectors/nothing');
      expect(missing.status).to.equal(404);
      expect(missing.body.reason).to.equal('NotFound');
      expect((await api('DELETE', '/api/v1/connectors/nothing')).status).to.equal(404);
      expect((await api('GET', '/api/v1/connectors/nothing/tools')).status).to.equal(404);
    });

    it('refuses bad input with 400 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: 'bad-url', url: 'ftp://127.0.0.1/mcp' }, 'url'],
        [{ name: 'bad-url', url: 'not a url' }, 'url'],
        [{ name: 'bad-url', url: 'https://user:pw@example.com/mcp' }, 'url'],
        [{ name: 'Bad_Name1', url: mcp.url }, 'name'],
        [{ name: 'hdr', url: mcp.url, authSecretName: 'api-key', authSecretKey: 'key', authType: 'header' }, 'headerName'],
        [{ name: 'hdr', url: mcp.url, authSecretName: 'api-key' }, 'authSecretKey'],
        [{ name: 'hdr', url: mcp.url, authType: 'oauth' }, 'authType'],
        [{ name: 'hdr', url: mcp.url, token: 'x' }, 'token'],
      ];
      for (const [body, field] of cases) {
        const r = await api('POST', '/api/v1/connectors', body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body).to.include({ reason: 'Invalid', code: 400 });
        expect(
          r.body.details.causes.map((c: { field: string }) => c.field),
          JSON.stringify(body),
        ).to.include(field);
      }
    });

    it('lists connectors per namespace', async () => {
      const o = await api('POST', '/api/v1/connectors', { name: 'echo', namespace: 'other', url: 'http://127.0.0.1:9/mcp' });
      expect(o.status).to.equal(201);
      const all = await api('GET', '/api/v1/connectors');
      expect(all.body.connectors.map((c: { namespace: string; name: string }) => `${c.namespace}/${c.name}`)).to.include.members([
        'default/echo',
        'other/echo',
      ]);
      const other = await api('GET', '/api/v1/connectors?namespace=other');
      expect(other.body.connectors.map((c: { name: string }) => c.name)).to.deep.equal(['echo']);
      expect((await api('DELETE', '/api/v1/connectors/echo?namespace=other')).status).to.equal(200);
    });
  });

  describe('tools', () => {
    it('lists the MCP server tools with the token from the secret, and marks the connector Ready', async () => {
      const r = await api('GET', '/api/v1/connectors/echo/tools');
      expect(r.status, r.text).to.equal(200);
      expect(r.body.connector).to.equal('echo');
      expect(r.body.tools).to.deep.equal([{ name: 'echo', description: 'Echoes the text back.' }]);
      expect(mcp.tokensSeen).to.include(GOOD_TOKEN);
      const c = await api('GET', '/api/v1/connectors/echo');
      expect(c.body.status).to.include({ phase: 'Ready', toolCount: 1 });
      expect(Date.parse(c.body.status.lastCheckedAt)).to.be.closeTo(Date.now(), 60_000);
    });

    it('sends the token in a named header with authType header', async () => {
      const created = await api('POST', '/api/v1/connectors', {
        name: 'keyed',
        url: keyed.url,
        authSecretName: 'api-key',
        authSecretKey: 'key',
        authType: 'header',
        headerName: 'X-Api-Key',
      });
      expect(created.status, created.text).to.equal(201);
      expect(created.body.headerName).to.equal('X-Api-Key');
      const r = await api('GET', '/api/v1/connectors/keyed/tools');
      expect(r.status, r.text).to.equal(200);
      expect(r.body.tools.map((t: { name: string }) => t.name)).to.deep.equal(['echo']);
      expect(keyed.tokensSeen).to.include(HEADER_TOKEN);
    });

    it('answers 409 and marks SecretMissing when the secret is not there', async () => {
      await api('POST', '/api/v1/connectors', { name: 'orphan', url: mcp.url, authSecretName: 'ghost', authSecretKey: 'token' });
      const r = await api('GET', '/api/v1/connectors/orphan/tools');
      expect(r.status).to.equal(409);
      expect(r.body.error).to.contain('secret "ghost" not found');
      expect((await api('GET', '/api/v1/connectors/orphan')).body.status.phase).to.equal('SecretMissing');
    });
  });

  describe('an agent with the connector', () => {
    let events: AgentEvent[];
    let firstRequest: number;

    before(async () => {
      firstRequest = h.model.requests.length;
      events = await runTask('user', '@tool mcp__echo__echo {"text":"hi"}\n@say done', { connectors: ['echo'] });
    });

    it('offers the MCP tool to the model', () => {
      const offered = h.model.requests.slice(firstRequest).filter((r) => r.hasTools);
      expect(offered.length).to.be.greaterThan(0);
      for (const r of offered) expect(r.tools).to.include('mcp__echo__echo');
    });

    it('calls the tool: tool_call, then tool_result "echo: hi" without error, then task_completed', () => {
      const call = events.find((e) => e.type === 'tool_call')!;
      expect(call.payload).to.deep.include({ tool: 'mcp__echo__echo', input: { text: 'hi' } });
      const result = events.find((e) => e.type === 'tool_result')!;
      expect(result.payload).to.include({ tool: 'mcp__echo__echo', isError: false });
      expect((result.payload as { output: string }).output).to.contain('echo: hi');
      expect(events.at(-1)!.type).to.equal('task_completed');
      expect(mcp.calls).to.include('hi');
    });

    it('gave the MCP server the right token and no other', () => {
      expect(mcp.tokensSeen.length).to.be.greaterThan(0);
      expect(new Set(mcp.tokensSeen)).to.deep.equal(new Set([GOOD_TOKEN]));
    });

    it('counts the agent on the connector', async () => {
      const c = await api('GET', '/api/v1/connectors/echo');
      expect(c.body).to.deep.include({ attachedAgents: 1, agentNames: ['user'] });
      const listed = (await api('GET', '/api/v1/connectors')).body.connectors.find((x: { name: string }) => x.name === 'echo');
      expect(listed).to.deep.include({ attachedAgents: 1, agentNames: ['user'] });
    });

    it('refuses an unknown connector on create and on PATCH (400 connectors[i])', async () => {
      const created = await api('POST', '/api/v1/agents', { name: 'nobody', instructions: '@say hi', connectors: ['echo', 'nope'] });
      expect(created.status).to.equal(400);
      expect(created.body.reason).to.equal('Invalid');
      expect(created.body.details.causes).to.deep.equal([{ field: 'connectors[1]', message: 'connector "nope" not found in namespace "default"' }]);
      expect((await api('GET', '/api/v1/agents/nobody')).status).to.equal(404);
      const patched = await api('PATCH', '/api/v1/agents/user', { connectors: ['nope'] });
      expect(patched.status).to.equal(400);
      expect(patched.body.details.causes).to.deep.equal([{ field: 'connectors[0]', message: 'connector "nope" not found in namespace "default"' }]);
      // Connectors are per namespace.
      const elsewhere = await api('POST', '/api/v1/agents', { name: 'nobody', namespace: 'other', instructions: '@say hi', connectors: ['echo'] });
      expect(elsewhere.status).to.equal(400);
      expect(elsewhere.body.details.causes[0].message).to.equal('connector "echo" not found in namespace "other"');
    });

    it('after PATCH connectors: [] the next task runs without the server: the call fails as a tool error', async () => {
      const p = await api('PATCH', '/api/v1/agents/user', { connectors: [] });
      expect(p.status).to.equal(200);
      expect(p.body.connectors).to.deep.equal([]);
      const contacts = mcp.tokensSeen.length;
      const evs = await runTask('user', '@tool mcp__echo__echo {"text":"again"}\n@say done');
      // The server is not attached: not contacted at all, so no token is sent.
      expect(mcp.tokensSeen.length).to.equal(contacts);
      expect(mcp.calls).to.not.include('again');
      const result = evs.find((e) => e.type === 'tool_result')!;
      expect(result.payload).to.include({ tool: 'mcp__echo__echo', isError: true });
      expect((result.payload as { output: string }).output).to.not.contain('echo: again');
      expect(evs.at(-1)!.type).to.equal('task_completed');
      expect((await api('GET', '/api/v1/connectors/echo')).body).to.deep.include({ attachedAgents: 0, agentNames: [] });
      // The engine resumes the session and keeps its declared tool list stable (a withdrawn tool
      // stays listed as a stub that answers with an error), so the request may still name it;
      // what detaching guarantees is that the server is never reached (docs/connectors.md).
    });

    it('after PATCH connectors: [echo] the next task of an agent can call the tool', async () => {
      const from = h.model.requests.length;
      const first = await runTask('later', '@say nothing attached yet');
      expect(first.at(-1)!.type).to.equal('task_completed');
      const before = h.model.requests.slice(from).filter((r) => r.hasTools);
      expect(before.length).to.be.greaterThan(0);
      // No connector's tools (a manager's own agentplane tools are not a connector's).
      for (const r of before) expect(r.tools.filter((t) => t.startsWith('mcp__') && !t.startsWith('mcp__agentplane__'))).to.deep.equal([]);

      const p = await api('PATCH', '/api/v1/agents/later', { connectors: ['echo'] });
      expect(p.status).to.equal(200);
      // The resumed session keeps its declared tool list; the new server's tool is reachable.
      const evs = await runTask('later', '@tool mcp__echo__echo {"text":"attached"}\n@say done');
      expect(evs.find((e) => e.type === 'tool_result')!.payload).to.include({ isError: false, output: 'echo: attached' });
      expect(mcp.calls).to.include('attached');
      // Detach again so the delete tests below see only the agents they set up.
      expect((await api('PATCH', '/api/v1/agents/later', { connectors: [] })).status).to.equal(200);
    });
  });

  describe('a connector whose secret holds a wrong token', () => {
    let events: AgentEvent[];

    before(async () => {
      const c = await api('POST', '/api/v1/connectors', { name: 'badecho', url: mcp.url, authSecretName: 'wrong-token', authSecretKey: 'token' });
      expect(c.status).to.equal(201);
      events = await runTask('victim', '@tool mcp__badecho__echo {"text":"hi"}\n@say done anyway', { connectors: ['badecho'] });
    });

    it('fails the tool call, not the task', () => {
      const types = events.map((e) => e.type);
      expect(types).to.not.include('error');
      expect(types.at(-1)).to.equal('task_completed');
      const call = events.find((e) => e.type === 'tool_call')!;
      expect(call.payload).to.deep.include({ tool: 'mcp__badecho__echo' });
      const result = events.find((e) => e.type === 'tool_result')!;
      expect(result.payload).to.include({ isError: true });
    });

    it('shows Unauthorized in the connector status', async () => {
      const status = await eventually(
        async () => {
          const r = await api('GET', '/api/v1/connectors/badecho');
          return r.body.status.phase === 'Unauthorized' && r.body.status;
        },
        20_000,
        'status Unauthorized',
      );
      expect(status.message).to.contain('refused the credential');
      expect(mcp.tokensSeen).to.include(WRONG_TOKEN);
    });

    it('answers 502 BadGateway on tools', async () => {
      const r = await api('GET', '/api/v1/connectors/badecho/tools');
      expect(r.status).to.equal(502);
      expect(r.body.reason).to.equal('BadGateway');
      expect(r.body.error).to.contain('refused the credential');
    });
  });

  describe('a connector whose secret is missing', () => {
    it('runs the task without it and marks the connector SecretMissing', async () => {
      const evs = await runTask('lonely', '@tool mcp__orphan__echo {"text":"hi"}\n@say ok', { connectors: ['orphan'] });
      expect(evs.at(-1)!.type).to.equal('task_completed');
      expect(evs.find((e) => e.type === 'tool_result')!.payload).to.include({ isError: true });
      expect((await api('GET', '/api/v1/connectors/orphan')).body.status.phase).to.equal('SecretMissing');
      expect(h.logs.some((l) => l.includes('"connector":"orphan"') && l.includes('"agent":"lonely"'))).to.equal(true);
    });
  });

  describe('delete', () => {
    it('refuses (409) while agents use it, naming them; ?force=true detaches and deletes', async () => {
      const refused = await api('DELETE', '/api/v1/connectors/badecho');
      expect(refused.status).to.equal(409);
      expect(refused.body.reason).to.equal('Conflict');
      expect(refused.body.error).to.contain('"victim"');
      expect((await api('GET', '/api/v1/connectors/badecho')).status).to.equal(200);

      const forced = await api('DELETE', '/api/v1/connectors/badecho?force=true');
      expect(forced.status).to.equal(200);
      expect(forced.body).to.deep.include({ name: 'badecho', agentNames: ['victim'] });
      expect((await api('GET', '/api/v1/connectors/badecho')).status).to.equal(404);
      const agent = await api('GET', '/api/v1/agents/victim');
      expect(agent.body.connectors).to.deep.equal([]);
    });

    it('deletes an unused connector (200)', async () => {
      const r = await api('DELETE', '/api/v1/connectors/keyed');
      expect(r.status).to.equal(200);
      expect(r.body.name).to.equal('keyed');
    });
  });

  describe('with the MCP server stopped', () => {
    it('answers 502 on tools and marks the connector Unreachable', async () => {
      await mcp.close();
      const r = await api('GET', '/api/v1/connectors/echo/tools');
      expect(r.status).to.equal(502);
      expect(r.body.reason).to.equal('BadGateway');
      expect(r.body.error).to.contain(mcp.url);
      const c = await api('GET', '/api/v1/connectors/echo');
      expect(c.body.status.phase).to.equal('Unreachable');
    });
  });

  describe('secret values', () => {
    it('never appear in a response, an event, the metrics or a log line', async () => {
      texts.push((await api('GET', '/metrics')).text);
      for (const agent of ['user', 'victim', 'lonely']) texts.push((await api('GET', `/api/v1/agents/${agent}/events?limit=200`)).text);
      const all = texts.join('\n');
      const logs = h.logs.join('\n');
      expect(logs.length).to.be.greaterThan(0);
      for (const v of SECRET_VALUES) {
        expect(all, 'responses').to.not.contain(v);
        expect(logs, 'logs').to.not.contain(v);
      }
    });
  });
});
