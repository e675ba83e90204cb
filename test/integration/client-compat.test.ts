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
import { getAgent, runTask, sleepingAgent, waitAgent } from '../support/agents.js';
import { busyFor, eventually, type Harness, type Reply, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces';
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
      expect((await client('POST', '/api/v1/squads', { name: 'bodiless-squad', members: ['p-1', 'p-2', 'p-3'].map((n) => ({ ref: { name: n } })) })).status).to.equal(201);
      const remove = await client('DELETE', '/api/v1/squads/bodiless-squad/members/p-3');
      expect(remove.status, remove.text).to.equal(200);
      const breakUp = await client('POST', '/api/v1/squads/bodiless-squad/break-up');
      expect(breakUp.status, breakUp.text).to.equal(200);
      expect(breakUp.body.breakUpRequested).to.equal(true);
      expect((await client('POST', '/api/v1/squads', { name: 'gone-squad', members: [{ ref: { name: 'p-3' } }, { name: 'p-4', spec: { instructions: '@say hi' } }] })).status).to.equal(201);
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
      const r = await client('PATCH', `${AGG}/default/agents/dozy`, { spec: { instructions: '@say woken by kubectl' } }, { 'content-type': 'application/merge-patch+json' });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.status.status).to.not.equal('Sleeping');
      expect(r.body.spec.lifecycle).to.equal('');
      const a = await waitAgent(h, 'dozy', (x) => x.taskStatus === 'Complete', 'task ran');
      expect(a.status).to.equal('Running');
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
      const url = await eventually(async () => {
        for (const l of lines) {
          try {
            const o = JSON.parse(l) as { msg?: string; url?: string };
            if (o.msg === 'agentplane is serving' && o.url) return o.url;
          } catch {
            // not JSON
          }
        }
        return undefined;
      }, 30_000, 'server up');
      const post = await fetch(`${url}/api/v1/agents`, {
        method: 'POST',
        headers: JSON_CT,
        body: JSON.stringify({ name: 'stopper', instructions: `@bash ${busyFor(30)}\n@say never` }),
      });
      expect(post.status).to.equal(201);
      await eventually(async () => {
        const a = (await (await fetch(`${url}/api/v1/agents/stopper`)).json()) as { lastTaskMessage: string };
        return a.lastTaskMessage.startsWith('Bash');
      }, 45_000, 'task running its tool');
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
