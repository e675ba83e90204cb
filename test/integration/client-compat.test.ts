// Client compatibility: requests sent the way existing clients of this API send them (a Go CLI,
// Python, Go and TypeScript SDKs): `Content-Type: application/json` on every request, bodiless
// ones included; the namespace in the query; large page sizes; names with digits. Each point is
// checked through the REST mirror and, where the resource exists there, the aggregated API.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { NAME_RULE } from '../../pkg/api/meta.js';
import { getAgent, getSquad, runTask, sleepingAgent, waitAgent, waitSquad } from '../support/agents.js';
import { busyFor, EventClient, eventually, type Harness, type Reply, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const AGG_ALL = '/apis/agentplane.io/v1alpha1';
const AGG = `${AGG_ALL}/namespaces`;
const MERGE_CT = { 'content-type': 'application/merge-patch+json' };
const JSON_CT = { 'content-type': 'application/json' };

describe('client compatibility (integration)', function () {
  let h: Harness;
  let mcp: TestMcpServer;

  /** A request as such clients make it: JSON content type always, a body only when given. */
  async function client<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = JSON_CT): Promise<Reply<T>> {
    const res = await fetch(`${h.url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed as T, text };
  }

  before(async () => {
    mcp = createTestMcpServer({ token: 'compat-mcp-token' });
    await mcp.start();
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
  });

  describe('bodiless requests with Content-Type: application/json', () => {
    it('cancel, delete agent, break-up, remove member, delete squad and delete connector all succeed', async () => {
      await client('POST', '/api/v1/agents', { name: 'bodiless', instructions: `@bash ${busyFor(30)}\n@say never` });
      await waitAgent(h, 'bodiless', (a) => a.lastTaskMessage.startsWith('Bash'), 'busy');
      const cancel = await client('POST', '/api/v1/agents/bodiless/cancel');
      expect(cancel.status, cancel.text).to.be.oneOf([200, 202]);
      await waitAgent(h, 'bodiless', (a) => a.taskStatus === 'Cancelled', 'cancelled');

      for (const n of ['p-1', 'p-2', 'p-3']) await sleepingAgent(h, n);
      expect(
        (await client('POST', '/api/v1/squads', { name: 'bodiless-squad', members: ['p-1', 'p-2', 'p-3'].map((n) => ({ ref: { name: n } })) })).status,
      ).to.equal(201);
      const remove = await client('DELETE', '/api/v1/squads/bodiless-squad/members/p-3');
      expect(remove.status, remove.text).to.equal(200);
      const breakUp = await client('POST', '/api/v1/squads/bodiless-squad/break-up');
      expect(breakUp.status, breakUp.text).to.equal(200);
      expect(breakUp.body.breakUpRequested).to.equal(true);
      expect(
        (
          await client('POST', '/api/v1/squads', {
            name: 'gone-squad',
            members: [{ ref: { name: 'p-3' } }, { name: 'p-4', spec: { instructions: '@say hi' } }],
          })
        ).status,
      ).to.equal(201);
      const delSquad = await client('DELETE', '/api/v1/squads/gone-squad');
      expect(delSquad.status, delSquad.text).to.equal(200);

      expect((await client('POST', '/api/v1/connectors', { name: 'bodiless-conn', url: 'http://127.0.0.1:9/mcp' })).status).to.equal(201);
      const delConn = await client('DELETE', '/api/v1/connectors/bodiless-conn');
      expect(delConn.status, delConn.text).to.equal(200);

      const del = await client('DELETE', '/api/v1/agents/bodiless');
      expect(del.status, del.text).to.be.oneOf([200, 202]);
    });

    it('an empty body where one is required is a 400 naming the body', async () => {
      for (const [method, path] of [
        ['POST', '/api/v1/agents'],
        ['PATCH', '/api/v1/agents/bodiless'],
        ['POST', '/api/v1/squads'],
        ['POST', '/api/v1/connectors'],
        ['POST', '/api/v1/secrets'],
      ] as const) {
        const r = await client(method, path);
        expect(r.status, `${method} ${path}: ${r.text}`).to.equal(400);
        expect(r.body.details.causes).to.deep.include({ field: '(body)', message: 'is required: send a JSON object' });
      }
    });

    it('an unknown path is 404 whatever its body, and the aggregated API takes bodiless deletes too', async () => {
      expect((await client('POST', '/api/v1/nothing-here')).status).to.equal(404);
      expect((await client('POST', '/api/v1/nothing-here', '{not json')).status).to.equal(404);
      await runTask(h, 'agg-bodiless', '@say hi');
      const r = await client('DELETE', `${AGG}/default/agents/agg-bodiless`);
      expect(r.status, r.text).to.be.oneOf([200, 202]);
    });

    it('the aggregated API takes a bodiless cancel, and bodiless deletes of squads and connectors', async () => {
      await client('POST', '/api/v1/agents', { name: 'agg-cancel', instructions: `@bash ${busyFor(30)}\n@say never` });
      await waitAgent(h, 'agg-cancel', (a) => a.lastTaskMessage.startsWith('Bash'), 'busy');
      const cancel = await client('POST', `${AGG}/default/agents/agg-cancel/cancel`);
      expect(cancel.status, cancel.text).to.be.oneOf([200, 202]);
      await waitAgent(h, 'agg-cancel', (a) => a.taskStatus === 'Cancelled', 'cancelled');

      for (const n of ['k-1', 'k-2']) await sleepingAgent(h, n);
      expect((await client('POST', '/api/v1/squads', { name: 'agg-gone', members: [{ ref: { name: 'k-1' } }, { ref: { name: 'k-2' } }] })).status).to.equal(
        201,
      );
      const sq = await client('DELETE', `${AGG}/default/squads/agg-gone`);
      expect(sq.status, sq.text).to.equal(200);
      await waitSquad(h, 'agg-gone', (x) => x === undefined, 'deleted');
      expect((await client('POST', '/api/v1/connectors', { name: 'agg-conn', url: 'http://127.0.0.1:9/mcp' })).status).to.equal(201);
      const conn = await client('DELETE', `${AGG}/default/connectors/agg-conn`);
      expect(conn.status, conn.text).to.equal(200);
      expect((await client('GET', '/api/v1/connectors/agg-conn')).status).to.equal(404);
    });
  });

  describe('clear errors', () => {
    it('a wrong method on a known path is 405 with Allow', async () => {
      const r = await client('PUT', '/api/v1/agents/someone');
      expect(r.status).to.equal(405);
      expect(r.body.reason).to.equal('MethodNotAllowed');
      const allow = (await fetch(`${h.url}/api/v1/agents/someone`, { method: 'PUT' })).headers.get('allow');
      expect(allow?.split(', ')).to.include.members(['GET', 'PATCH', 'DELETE']);
      expect((await client('DELETE', '/api/v1/agents')).status).to.equal(405);
    });

    it('a wrong method on a known aggregated path is a 405 Status with Allow', async () => {
      for (const [method, path, allowed] of [
        ['PUT', `${AGG}/default/agents`, ['GET', 'POST', 'DELETE']],
        ['POST', `${AGG}/default/agents/someone`, ['GET', 'PUT', 'PATCH', 'DELETE']],
        ['POST', `${AGG_ALL}/squads`, ['GET']],
        ['GET', `${AGG}/default/agents/someone/cancel`, ['POST']],
        ['DELETE', `${AGG}/default/agents/someone/events`, ['GET']],
      ] as const) {
        const res = await fetch(`${h.url}${path}`, { method, headers: JSON_CT });
        const body = (await res.json()) as { kind: string; reason: string };
        expect(res.status, `${method} ${path}`).to.equal(405);
        expect(body).to.include({ kind: 'Status', reason: 'MethodNotAllowed' });
        expect(res.headers.get('allow')?.split(', '), `${method} ${path}`).to.deep.equal([...allowed]);
      }
    });

    it('an unsupported content type is 415, on REST and on the aggregated API', async () => {
      const r = await client('POST', '/api/v1/agents', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(r.status).to.equal(415);
      expect(r.body.reason).to.equal('UnsupportedMediaType');
      const k = await client('POST', `${AGG}/default/agents`, 'name: x', { 'content-type': 'text/plain' });
      expect(k.status).to.equal(415);
    });

    it('validation messages state the rule, and keep the field path in details.causes', async () => {
      const r = await client('POST', '/api/v1/agents', { name: 'Bad_Name', instructions: 'x' });
      expect(r.status).to.equal(400);
      expect(r.body.details.causes).to.deep.equal([
        { field: 'name', message: 'must be lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63 characters' },
      ]);
      expect(r.body.error).to.contain('name: must be lowercase letters, digits and hyphens');
      expect(r.body.error).to.not.contain('pattern');
    });

    it('the aggregated API states the same rule, with the field path in details.causes', async () => {
      const k = await client('POST', `${AGG}/default/agents`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Agent',
        metadata: { name: 'Bad_Name' },
        spec: { instructions: 'x' },
      });
      expect(k.status, k.text).to.equal(422);
      expect(k.body.message).to.contain(`metadata.name: `).and.contain(NAME_RULE);
      expect(k.body.message).to.not.match(/pattern|\^\[/);
      expect(k.body.details.causes).to.have.length(1);
      expect(k.body.details.causes[0]).to.include({ field: 'metadata.name', reason: 'FieldValueInvalid' });
      expect(k.body.details.causes[0].message).to.contain(NAME_RULE);
    });
  });

  describe('namespaces in the query', () => {
    it('a create takes ?namespace= when the body names none: agents, squads, connectors, secrets', async () => {
      const a = await client('POST', '/api/v1/agents?namespace=team-b', { name: 'qns', instructions: '@say in b' });
      expect(a.status, a.text).to.equal(201);
      expect(a.body.namespace).to.equal('team-b');
      expect(await getAgent(h, 'qns', 'team-b')).to.not.equal(undefined);
      expect(await getAgent(h, 'qns', 'default')).to.equal(undefined);

      const c = await client('POST', '/api/v1/connectors?namespace=team-b', { name: 'qconn', url: 'http://127.0.0.1:9/mcp' });
      expect(c.status, c.text).to.equal(201);
      expect(c.body.namespace).to.equal('team-b');
      const s = await client('POST', '/api/v1/secrets?namespace=team-b', { name: 'qsecret', data: { token: 'v' } });
      expect(s.status, s.text).to.equal(201);
      expect(s.body.namespace).to.equal('team-b');

      await waitAgent(h, 'qns', (x) => x.taskStatus === 'Complete', 'done', 'team-b');
      const r = await client('PATCH', '/api/v1/agents/qns?namespace=team-b', { lifecycle: 'Sleep' });
      expect(r.status).to.equal(200);
      await sleepingAgent(h, 'qmate', 'team-b');
      await waitAgent(h, 'qns', (x) => x.status === 'Sleeping', 'asleep', 'team-b');
      const sq = await client('POST', '/api/v1/squads?namespace=team-b', { name: 'qsquad', members: [{ ref: { name: 'qns' } }, { ref: { name: 'qmate' } }] });
      expect(sq.status, sq.text).to.equal(201);
      expect(sq.body.namespace).to.equal('team-b');
    });

    it('body and query both given and different is 400; the same is fine', async () => {
      for (const [path, body] of [
        ['/api/v1/agents?namespace=team-b', { name: 'clash', namespace: 'team-c', instructions: 'x' }],
        ['/api/v1/connectors?namespace=team-b', { name: 'clash', namespace: 'team-c', url: 'http://127.0.0.1:9/mcp' }],
        ['/api/v1/secrets?namespace=team-b', { name: 'clash', namespace: 'team-c', data: { k: 'v' } }],
        ['/api/v1/squads?namespace=team-b', { name: 'clash', namespace: 'team-c', members: [{ ref: { name: 'a' } }, { ref: { name: 'b' } }] }],
      ] as const) {
        const r = await client('POST', path, body);
        expect(r.status, `${path}: ${r.text}`).to.equal(400);
        expect(r.body.error).to.contain('differs');
      }
      expect(await getAgent(h, 'clash', 'team-b')).to.equal(undefined);
      expect(await getAgent(h, 'clash', 'team-c')).to.equal(undefined);
      const same = await client('POST', '/api/v1/agents?namespace=team-b', { name: 'agreed', namespace: 'team-b', instructions: '@say ok' });
      expect(same.status).to.equal(201);
    });

    it('a list without ?namespace= (or with an empty one) returns every namespace; with one, only it', async () => {
      await runTask(h, 'lister', '@say in default');
      for (const q of ['', '?namespace=']) {
        for (const [res, key] of [
          ['agents', 'agents'],
          ['connectors', 'connectors'],
          ['secrets', 'secrets'],
          ['squads', 'squads'],
        ] as const) {
          const r = await client('GET', `/api/v1/${res}${q}`);
          expect(r.status).to.equal(200);
          const namespaces = new Set((r.body[key] as { namespace: string }[]).map((x) => x.namespace));
          expect([...namespaces], `${res}${q}`).to.include('team-b');
          if (res === 'agents') expect([...namespaces]).to.include('default');
        }
      }
      const only = await client('GET', '/api/v1/agents?namespace=team-b');
      expect(new Set(only.body.agents.map((x: { namespace: string }) => x.namespace))).to.deep.equal(new Set(['team-b']));
    });

    it('the aggregated API lists every namespace at /apis/.../<resource>, one at /namespaces/<ns>/<resource>', async () => {
      for (const res of ['agents', 'connectors', 'squads']) {
        const r = await client('GET', `${AGG_ALL}/${res}`);
        expect(r.status, r.text).to.equal(200);
        const namespaces = new Set((r.body.items as { metadata: { namespace: string } }[]).map((x) => x.metadata.namespace));
        expect([...namespaces], res).to.include('team-b');
        if (res === 'agents') expect([...namespaces]).to.include('default');
      }
      const only = await client('GET', `${AGG}/team-b/agents`);
      expect(new Set(only.body.items.map((x: { metadata: { namespace: string } }) => x.metadata.namespace))).to.deep.equal(new Set(['team-b']));
    });

    it('the aggregated API takes the namespace from the path; a different metadata.namespace is 400', async () => {
      const agent = (ns?: string) => ({
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Agent',
        metadata: { name: 'k-ns', ...(ns ? { namespace: ns } : {}) },
        spec: { instructions: '@say in b' },
      });
      const clash = await client('POST', `${AGG}/team-b/agents`, agent('team-c'));
      expect(clash.status, clash.text).to.equal(400);
      expect(clash.body).to.include({ kind: 'Status', reason: 'BadRequest' });
      expect(await getAgent(h, 'k-ns', 'team-c')).to.equal(undefined);
      const ok = await client('POST', `${AGG}/team-b/agents`, agent());
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.metadata.namespace).to.equal('team-b');
      expect(await getAgent(h, 'k-ns', 'default')).to.equal(undefined);
      await waitAgent(h, 'k-ns', (a) => a.taskStatus === 'Complete', 'done', 'team-b');
    });
  });

  describe('what clients send, accepted where harmless', () => {
    it('events ?limit above 200 is clamped to 200; below 1 or not an integer stays 400', async () => {
      const r = await client('GET', '/api/v1/agents/lister/events?limit=1000');
      expect(r.status, r.text).to.equal(200);
      expect(r.body.events.length).to.be.within(1, 200);
      for (const bad of ['0', '-1', 'abc', '1.5']) {
        const b = await client('GET', `/api/v1/agents/lister/events?limit=${bad}`);
        expect(b.status, `limit=${bad}`).to.equal(400);
        expect(b.body.details.causes[0].field).to.equal('limit');
      }
    });

    it('the events subresource of the aggregated API clamps the same way', async () => {
      const all = await client('GET', '/api/v1/agents/lister/events?limit=200');
      const r = await client('GET', `${AGG}/default/agents/lister/events?limit=1000`);
      expect(r.status, r.text).to.equal(200);
      expect(r.body.kind).to.equal('AgentEventList');
      expect(r.body.items.length).to.be.within(1, 200);
      expect(r.body.items.map((e: { seq: number }) => e.seq)).to.deep.equal(all.body.events.map((e: { seq: number }) => e.seq));
      const two = await client('GET', `${AGG}/default/agents/lister/events?limit=2`);
      expect(two.body.items).to.have.length(2);
      for (const bad of ['0', '-1', 'abc', '1.5']) {
        const b = await client('GET', `${AGG}/default/agents/lister/events?limit=${bad}`);
        expect(b.status, `limit=${bad}`).to.equal(400);
        expect(b.body).to.include({ kind: 'Status', reason: 'BadRequest' });
        expect(b.body.message).to.contain('limit');
      }
    });

    it('secrets accept PATCH beside PUT: given keys set, null removes, others kept', async () => {
      expect((await client('POST', '/api/v1/secrets', { name: 'patched', data: { a: '1', b: '2' } })).status).to.equal(201);
      const r = await client('PATCH', '/api/v1/secrets/patched', { data: { b: null, c: '3' } });
      expect(r.status, r.text).to.equal(200);
      expect([...r.body.keys].sort()).to.deep.equal(['a', 'c']);
      const put = await client('PUT', '/api/v1/secrets/patched', { data: { z: '9' } });
      expect(put.status, put.text).to.equal(200);
      expect(put.body.keys).to.deep.equal(['z']);
      expect((await client('PATCH', '/api/v1/secrets/no-such-secret', { data: { a: '1' } })).status).to.equal(404);
    });

    it('connector authType "token" is the bearer form, on REST and on the aggregated API', async () => {
      expect((await client('POST', '/api/v1/secrets', { name: 'compat-mcp', data: { token: 'compat-mcp-token' } })).status).to.equal(201);
      const c = await client('POST', '/api/v1/connectors', {
        name: 'tokened',
        url: mcp.url,
        authType: 'token',
        authSecretName: 'compat-mcp',
        authSecretKey: 'token',
      });
      expect(c.status, c.text).to.equal(201);
      expect(c.body.authType).to.equal('bearer');
      const tools = await client('GET', '/api/v1/connectors/tokened/tools');
      expect(tools.status, tools.text).to.equal(200);
      expect(mcp.tokensSeen).to.include('compat-mcp-token');

      const k = await client('POST', `${AGG}/default/connectors`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Connector',
        metadata: { name: 'tokened-k' },
        spec: { url: mcp.url, authType: 'token', authSecretName: 'compat-mcp', authSecretKey: 'token' },
      });
      expect(k.status, k.text).to.equal(201);
      expect(k.body.spec.authType).to.equal('bearer');
    });

    it("a squad member ref may carry the squad's namespace; another is 400, on REST and the aggregated API", async () => {
      for (const n of ['ns-a', 'ns-b']) await sleepingAgent(h, n);
      const bad = await client('POST', '/api/v1/squads', { name: 'nsq', members: [{ ref: { name: 'ns-a', namespace: 'team-b' } }, { ref: { name: 'ns-b' } }] });
      expect(bad.status, bad.text).to.equal(400);
      expect(bad.body.details.causes).to.deep.include({
        field: 'members[0].ref.namespace',
        message: 'must be "default": a squad\'s members live in the squad\'s namespace',
      });
      const k = await client('POST', `${AGG}/default/squads`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Squad',
        metadata: { name: 'nsq' },
        spec: { members: [{ ref: { name: 'ns-a', namespace: 'team-b' } }, { ref: { name: 'ns-b' } }] },
      });
      expect(k.status, k.text).to.equal(422);
      expect(k.body.message).to.contain("a squad's members live in the squad's namespace");
      const ok = await client('POST', '/api/v1/squads', { name: 'nsq', members: [{ ref: { name: 'ns-a', namespace: 'default' } }, { ref: { name: 'ns-b' } }] });
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.members.map((m: { name: string }) => m.name)).to.deep.equal(['ns-a', 'ns-b']);
      const add = await client('POST', '/api/v1/squads/nsq/members?namespace=default', { ref: { name: 'ns-c', namespace: 'team-z' } });
      expect(add.status).to.equal(400);
    });

    it('agent names with digits work end to end (DNS-1123 labels), on REST and the aggregated API', async () => {
      const evs = await runTask(h, 'agent-1', '@bash echo hi > f.txt\n@say done');
      expect(evs.at(-1)!.type).to.equal('task_completed');
      const k = await client('POST', `${AGG}/default/agents`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Agent',
        metadata: { name: 'agent-2' },
        spec: { instructions: '@say hi' },
      });
      expect(k.status, k.text).to.equal(201);
      await waitAgent(h, 'agent-2', (a) => a.taskStatus === 'Complete', 'done');
    });

    it('names that are not DNS-1123 labels are refused with the rule, on REST (400) and the aggregated API (422)', async () => {
      const longest = `a${'-0'.repeat(31)}`; // 63 characters
      expect(longest).to.have.length(63);
      const ok = await client('POST', '/api/v1/agents', { name: longest, instructions: '@say long name' });
      expect(ok.status, ok.text).to.equal(201);
      for (const bad of ['Agent-1', 'agent_1', '-agent', 'agent-', `${longest}x`, 'agent.1']) {
        const r = await client('POST', '/api/v1/agents', { name: bad, instructions: 'x' });
        expect(r.status, bad).to.equal(400);
        expect(r.body.details.causes, bad).to.deep.equal([{ field: 'name', message: `must be ${NAME_RULE}` }]);
        const k = await client('POST', `${AGG}/default/agents`, {
          apiVersion: 'agentplane.io/v1alpha1',
          kind: 'Agent',
          metadata: { name: bad },
          spec: { instructions: 'x' },
        });
        expect(k.status, bad).to.equal(422);
        expect(k.body.details.causes[0].field, bad).to.equal('metadata.name');
      }
      await waitAgent(h, longest, (a) => a.taskStatus === 'Complete', 'done');
    });

    it('PATCH takes model and systemPrompt, on REST and by merge patch on the aggregated API', async () => {
      const r = await client('PATCH', '/api/v1/agents/agent-1', { model: 'claude-compat-next', systemPrompt: 'You are compat.' });
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ model: 'claude-compat-next', taskStatus: 'Complete' });
      await runTask(h, 'agent-1', '@say compat marker');
      const reqs = h.model.requests.filter((q) => q.hasTools && q.lastUserText.includes('compat marker'));
      expect(reqs).to.not.have.lengthOf(0);
      for (const q of reqs) {
        expect(q.model).to.equal('claude-compat-next');
        expect(q.system).to.contain('You are compat.');
      }
      const k = await client('PATCH', `${AGG}/default/agents/agent-1`, { spec: { model: 'claude-compat-k', systemPrompt: 'You are kubectl.' } }, MERGE_CT);
      expect(k.status, k.text).to.equal(200);
      expect(k.body.spec).to.include({ model: 'claude-compat-k', systemPrompt: 'You are kubectl.' });
      expect(k.body.status.taskStatus).to.equal('Complete'); // no task started by a settings change
      expect(await getAgent(h, 'agent-1')).to.include({ model: 'claude-compat-k' });
    });

    it('steering: POST to a busy agent is 409, the same words by PATCH reach the running task as a user_message', async () => {
      const first = await client('POST', '/api/v1/agents', { name: 'steer-me', instructions: `@bash ${busyFor(4)}\n@say first plan` });
      expect(first.status).to.equal(201);
      const ws = new EventClient(`${h.url}/api/v1/agents/steer-me/ws`);
      try {
        await ws.until((evs) => evs.some((e) => e.type === 'tool_call'));
        const followUp = 'Also mention the mangoes\n@echo';
        const refused = await client('POST', '/api/v1/agents', { name: 'steer-me', instructions: followUp });
        expect(refused.status).to.equal(409);
        const patched = await client('PATCH', '/api/v1/agents/steer-me', { instructions: followUp });
        expect(patched.status, patched.text).to.equal(200);
        expect(patched.body).to.include({ taskStatus: 'InProgress' });
        const evs = await ws.untilTaskEnd(1);
        expect(evs.filter((e) => e.type === 'user_message').map((e) => e.payload)).to.deep.equal([{ content: followUp }]);
        expect(evs.filter((e) => e.type === 'task_completed')).to.have.length(1);
        expect((evs.find((e) => e.type === 'task_completed')!.payload as { result: string }).result).to.contain('mangoes');
      } finally {
        ws.close();
      }
    });
  });

  describe('sleeping agents, as the spec words it', () => {
    it('member Sleeping + a task sent: Phase cleared of Sleeping; the task is forwarded and runs', async () => {
      await sleepingAgent(h, 'drowsy');
      const r = await client('POST', '/api/v1/agents', { name: 'drowsy', instructions: '@say awake now' });
      expect(r.status).to.equal(200);
      expect(r.body.status).to.not.equal('Sleeping');
      expect(r.body.taskStatus).to.equal('InProgress');
      const a = await waitAgent(h, 'drowsy', (x) => x.taskStatus === 'Complete', 'task ran');
      expect(a.status).to.equal('Running');
      expect(a.lastTaskMessage).to.equal('awake now');
    });

    it('the same through the aggregated API: new instructions wake a sleeping agent', async () => {
      await sleepingAgent(h, 'dozy');
      const r = await client(
        'PATCH',
        `${AGG}/default/agents/dozy`,
        { spec: { instructions: '@say woken by kubectl' } },
        { 'content-type': 'application/merge-patch+json' },
      );
      expect(r.status, r.text).to.equal(200);
      expect(r.body.status.status).to.not.equal('Sleeping');
      expect(r.body.spec.lifecycle).to.equal('');
      const a = await waitAgent(h, 'dozy', (x) => x.taskStatus === 'Complete', 'task ran');
      expect(a.status).to.equal('Running');
    });

    it('through the aggregated API: a squad of sleeping agents; a member woken by a task runs it; PATCH Sleep puts it back; an awake agent cannot join', async () => {
      for (const n of ['kn-a', 'kn-b']) await sleepingAgent(h, n);
      const sq = await client('POST', `${AGG}/default/squads`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Squad',
        metadata: { name: 'k-nap' },
        spec: { members: [{ ref: { name: 'kn-a' } }, { ref: { name: 'kn-b' } }] },
      });
      expect(sq.status, sq.text).to.equal(201);
      await waitSquad(h, 'k-nap', (x) => x?.phase === 'Sleeping', 'Sleeping');

      // member Sleeping + a task sent: Phase cleared of Sleeping; the task is forwarded and runs
      const woken = await client('PATCH', `${AGG}/default/agents/kn-a`, { spec: { instructions: '@say squad member woken by kubectl' } }, MERGE_CT);
      expect(woken.status, woken.text).to.equal(200);
      expect(woken.body.status.status).to.not.equal('Sleeping');
      const done = await waitAgent(h, 'kn-a', (x) => x.taskStatus === 'Complete', 'task ran');
      expect(done).to.include({ status: 'Running', lastTaskMessage: 'squad member woken by kubectl' });
      expect((await getAgent(h, 'kn-b'))!.status).to.equal('Sleeping');

      // an agent not asleep cannot team up
      await runTask(h, 'kn-awake', '@say awake');
      const add = await client(
        'PATCH',
        `${AGG}/default/squads/k-nap`,
        { spec: { members: [{ ref: { name: 'kn-a' } }, { ref: { name: 'kn-b' } }, { ref: { name: 'kn-awake' } }] } },
        MERGE_CT,
      );
      expect(add.status, add.text).to.equal(409);
      expect(add.body.message).to.contain('must be asleep in order to team up');
      expect((await getSquad(h, 'k-nap'))!.members.map((m) => m.name)).to.deep.equal(['kn-a', 'kn-b']);

      // squad member + PATCH lifecycle Sleep: Phase Sleeping; all asleep, so the squad sleeps
      const slept = await client('PATCH', `${AGG}/default/agents/kn-a`, { spec: { lifecycle: 'Sleep' } }, MERGE_CT);
      expect(slept.status, slept.text).to.equal(200);
      await waitAgent(h, 'kn-a', (x) => x.status === 'Sleeping', 'asleep');
      await waitSquad(h, 'k-nap', (x) => x?.phase === 'Sleeping', 'Sleeping again');
    });
  });
});

describe('make run, stopped with Ctrl-C (integration)', function () {
  it('shuts down quietly: exit 0 and no error-level log line, with a task running', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-ctrlc-'));
    const main = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
    const child = spawn(process.execPath, [main, 'serve', '--demo', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const collect = (chunk: Buffer): void => void lines.push(...String(chunk).split('\n').filter(Boolean));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await eventually(
        async () => {
          for (const l of lines) {
            try {
              const o = JSON.parse(l) as { msg?: string; url?: string };
              if (o.msg === 'agentplane is serving' && o.url) return o.url;
            } catch {
              // not JSON
            }
          }
          return undefined;
        },
        30_000,
        'server up',
      );
      const post = await fetch(`${url}/api/v1/agents`, {
        method: 'POST',
        headers: JSON_CT,
        body: JSON.stringify({ name: 'stopper', instructions: `@bash ${busyFor(30)}\n@say never` }),
      });
      expect(post.status).to.equal(201);
      await eventually(
        async () => {
          const a = (await (await fetch(`${url}/api/v1/agents/stopper`)).json()) as { lastTaskMessage: string };
          return a.lastTaskMessage.startsWith('Bash');
        },
        45_000,
        'task running its tool',
      );
      child.kill('SIGINT');
      expect(await exited).to.equal(0);
      const errors = lines.filter((l) => /"level":(50|60)/.test(l));
      expect(errors, errors.join('\n')).to.deep.equal([]);
      expect(lines.some((l) => l.includes('shutting down'))).to.equal(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
