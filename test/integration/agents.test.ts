// The embedded service end to end: real server, real worker processes, the real engine with its
// real Bash tool, and the scripted model server for the model's words.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { repeatedKeys } from '../support/json-keys.js';
import { busyFor, EventClient, eventually, type Harness, startHarness, TEST_API_KEY } from '../support/harness.js';

const wsUrl = (h: Harness, name: string, query = ''): string => `${h.url}/api/v1/agents/${name}/ws${query}`;

describe('agents (integration)', function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  describe('a task on a new agent', () => {
    let ws: EventClient;
    let created: { status: number; body: any };

    before(async () => {
      created = await h.api('POST', '/api/v1/agents', {
        name: 'builder',
        instructions: '@bash echo "built by builder" > artifact.txt && cat artifact.txt\n@say artifact written',
        systemPrompt: 'You are the build bot.',
        role: 'worker',
      });
      // Opened right after create: the replay must still deliver the whole task.
      ws = new EventClient(wsUrl(h, 'builder'));
      await ws.opened();
      await ws.untilTaskEnd();
    });
    after(() => ws.close());

    it('answers 201 with the create subset of AgentResponse', () => {
      expect(created.status).to.equal(201);
      expect(created.body).to.include({ name: 'builder', namespace: 'default', model: 'claude-sonnet-4-5', status: 'Pending' });
      expect(Date.parse(created.body.createdAt)).to.be.closeTo(Date.now(), 120_000);
    });

    it('streams task_started, a real Bash tool_call and tool_result, then task_completed', () => {
      const types = ws.events.map((e) => e.type);
      expect(types[0]).to.equal('task_started');
      expect(types).to.include.members(['tool_call', 'tool_result', 'task_completed']);
      expect(types.at(-1)).to.equal('task_completed');
      const call = ws.events.find((e) => e.type === 'tool_call')!;
      expect(call.payload).to.deep.include({ tool: 'Bash' });
      const result = ws.events.find((e) => e.type === 'tool_result')!;
      expect(result.payload).to.include({ tool: 'Bash', isError: false });
      expect((result.payload as { output: string }).output).to.contain('built by builder');
      const seqs = ws.events.map((e) => e.seq);
      expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).to.equal(seqs.length);
      for (const e of ws.events) expect(e).to.include({ agentName: 'builder', namespace: 'default', task: 1 });
    });

    it('task_completed carries result, cost_usd, duration_ms, turns, stop_reason, session_id', () => {
      const done = ws.events.find((e) => e.type === 'task_completed')!.payload as Record<string, unknown>;
      expect(done.result).to.equal('artifact written');
      expect(done.cost_usd).to.be.a('number').and.greaterThan(0);
      expect(done.duration_ms).to.be.a('number').and.greaterThan(0);
      expect(done.turns).to.equal(2);
      expect(done.stop_reason).to.equal('end_turn');
      expect(done.session_id).to.match(/^[0-9a-f-]{36}$/);
    });

    it('wrote the file in the agent workspace', () => {
      const file = join(h.dataDir, 'workspaces', 'default', 'builder', 'artifact.txt');
      expect(readFileSync(file, 'utf8')).to.equal('built by builder\n');
    });

    it('shows the outcome in get and list', async () => {
      const got = await h.api('GET', '/api/v1/agents/builder');
      expect(got.status).to.equal(200);
      expect(got.body).to.include({ status: 'Running', taskStatus: 'Complete', lastTaskMessage: 'artifact written', role: 'worker' });
      const list = await h.api('GET', '/api/v1/agents');
      expect(list.body.agents.find((a: { name: string }) => a.name === 'builder')).to.deep.equal(got.body);
    });

    it('placed the systemPrompt before the worker role prompt', () => {
      const req = h.model.requests.find((r) => r.lastUserText.includes('built by builder') && r.hasTools)!;
      const custom = req.system.indexOf('You are the build bot.');
      const role = req.system.indexOf('You are a worker agent run by agentplane.');
      expect(custom).to.be.greaterThan(-1);
      expect(role).to.be.greaterThan(custom);
      expect(req.apiKey).to.equal(TEST_API_KEY);
    });

    it('keeps the workspace and resumes the session on the next task (200)', async () => {
      const first = ws.events.find((e) => e.type === 'task_completed')!.payload as { session_id: string };
      const last = ws.events.at(-1)!.seq;
      const next = new EventClient(wsUrl(h, 'builder', `?since=${last}`));
      await next.opened();
      const sent = await h.api('POST', '/api/v1/agents', { name: 'builder', instructions: '@bash cat artifact.txt\n@say still here' });
      expect(sent.status).to.equal(200);
      const evs = await next.untilTaskEnd(2);
      next.close();
      const out = evs.find((e) => e.type === 'tool_result')!.payload as { output: string };
      expect(out.output).to.contain('built by builder');
      const done = evs.find((e) => e.type === 'task_completed')!.payload as { session_id: string };
      expect(done.session_id).to.equal(first.session_id);
      expect(evs.every((e) => e.task === 2 && e.seq > last)).to.equal(true);
    });

    it('serves history with limit and before', async () => {
      const all = await h.api('GET', '/api/v1/agents/builder/events?limit=200');
      expect(all.status).to.equal(200);
      expect(all.body.agent).to.equal('builder');
      const seqs = all.body.events.map((e: { seq: number }) => e.seq);
      expect(seqs[0]).to.equal(1);
      const page = await h.api('GET', `/api/v1/agents/builder/events?limit=2&before=${seqs.at(-1)}`);
      expect(page.body.events.map((e: { seq: number }) => e.seq)).to.deep.equal(seqs.slice(-3, -1));
    });

    it('replays from since=0 to a late WebSocket client', async () => {
      const late = new EventClient(wsUrl(h, 'builder', '?since=0'));
      await late.untilTaskEnd(2);
      late.close();
      expect(late.events[0].seq).to.equal(1);
      expect(late.events.filter((e) => e.type === 'task_completed')).to.have.length(2);
    });
  });

  describe('busy and cancel', () => {
    it('answers 409 to a task for a busy agent, cancels mid-task, and stays alive', async () => {
      const first = await h.api('POST', '/api/v1/agents', { name: 'sleeper', instructions: `@bash ${busyFor(60)}\n@say woke` });
      expect(first.status).to.equal(201);
      const ws = new EventClient(wsUrl(h, 'sleeper'));
      await ws.until((evs) => evs.some((e) => e.type === 'tool_call'));

      const busy = await h.api('POST', '/api/v1/agents', { name: 'sleeper', instructions: 'another' });
      expect(busy.status).to.equal(409);
      expect(busy.body).to.include({ reason: 'Conflict', code: 409 });
      expect(busy.body.error).to.contain('busy');

      const cancelled = await h.api('POST', '/api/v1/agents/sleeper/cancel');
      expect(cancelled.status).to.equal(200);
      expect(cancelled.body).to.include({ taskStatus: 'Cancelled', cancelled: true });
      const evs = await ws.untilTaskEnd();
      expect(evs.at(-1)!.type).to.equal('task_cancelled');
      expect(evs.at(-1)!.payload).to.have.property('reason').that.is.a('string');
      ws.close();

      // Nothing running any more: a cancel is idempotent, and says so.
      const again = await h.api('POST', '/api/v1/agents/sleeper/cancel');
      expect(again.status).to.equal(200);
      expect(again.body).to.include({ cancelled: false, taskStatus: 'Cancelled', message: 'nothing was running: agent "sleeper" has no task in progress' });

      const next = await h.api('POST', '/api/v1/agents', { name: 'sleeper', instructions: '@say back to work' });
      expect(next.status).to.equal(200);
      const ws2 = new EventClient(wsUrl(h, 'sleeper'));
      const evs2 = await ws2.untilTaskEnd(2);
      ws2.close();
      expect(evs2.at(-1)!.type).to.equal('task_completed');
      expect(evs2[0].type).to.equal('task_started');
    });
  });

  describe('namespaces', () => {
    it('keeps the same name in two namespaces as two agents with two workspaces', async () => {
      const a = await h.api('POST', '/api/v1/agents', { name: 'twin', namespace: 'team-a', instructions: '@bash echo a > who.txt\n@say a' });
      const b = await h.api('POST', '/api/v1/agents', { name: 'twin', namespace: 'team-b', instructions: '@bash echo b > who.txt\n@say b' });
      expect([a.status, b.status]).to.deep.equal([201, 201]);
      for (const ns of ['team-a', 'team-b']) {
        const ws = new EventClient(wsUrl(h, 'twin', `?namespace=${ns}`));
        await ws.untilTaskEnd();
        ws.close();
        expect(ws.events.every((e) => e.namespace === ns)).to.equal(true);
      }
      const read = (ns: string): string => readFileSync(join(h.dataDir, 'workspaces', ns, 'twin', 'who.txt'), 'utf8');
      expect(read('team-a')).to.equal('a\n');
      expect(read('team-b')).to.equal('b\n');
      const listA = await h.api('GET', '/api/v1/agents?namespace=team-a');
      expect(listA.body.agents.map((x: { name: string }) => x.name)).to.deep.equal(['twin']);
      expect((await h.api('GET', '/api/v1/agents/twin?namespace=team-c')).status).to.equal(404);
    });
  });

  describe('bad input', () => {
    const cases: [string, unknown, number, string][] = [
      ['uppercase name', { name: 'Bad', instructions: 'x' }, 400, 'name'],
      ['underscore name', { name: 'bad_name', instructions: 'x' }, 400, 'name'],
      ['name over 63', { name: 'a'.repeat(64), instructions: 'x' }, 400, 'name'],
      ['missing instructions', { name: 'fine' }, 400, 'instructions'],
      ['missing name', { instructions: 'x' }, 400, 'name'],
      ['wrong type', { name: 'fine', instructions: 42 }, 400, 'instructions'],
      ['unknown role', { name: 'fine', instructions: 'x', role: 'boss' }, 400, 'role'],
      ['connectors not an array', { name: 'fine', instructions: 'x', connectors: 'a' }, 400, 'connectors'],
      ['bad namespace', { name: 'fine', instructions: 'x', namespace: 'Team A' }, 400, 'namespace'],
      ['unknown field', { name: 'fine', instructions: 'x', colour: 'red' }, 400, 'colour'],
      ['array body', [1, 2], 400, '(body)'],
    ];
    for (const [what, body, status, field] of cases) {
      it(`${what} -> ${status} naming ${field}`, async () => {
        const r = await h.api('POST', '/api/v1/agents', body);
        expect(r.status).to.equal(status);
        expect(r.body).to.include({ reason: 'Invalid', code: 400 });
        expect(r.body.details.causes.map((c: { field: string }) => c.field)).to.include(field);
      });
    }

    it('malformed JSON -> 400', async () => {
      const r = await h.api('POST', '/api/v1/agents', '{"name": "x",');
      expect(r.status).to.equal(400);
      expect(r.body.reason).to.equal('BadRequest');
    });

    it('wrong content type -> 415', async () => {
      const r = await h.api('POST', '/api/v1/agents', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(r.status).to.equal(415);
      expect(r.body.reason).to.equal('UnsupportedMediaType');
    });

    it('body over 1 MiB -> 413', async () => {
      const r = await h.api('POST', '/api/v1/agents', { name: 'big', instructions: 'x'.repeat(1024 * 1024) });
      expect(r.status).to.equal(413);
      expect(r.body.reason).to.equal('RequestEntityTooLarge');
      expect((await h.api('GET', '/api/v1/agents/big')).status).to.equal(404);
    });

    it('unknown agent -> 404 on every verb', async () => {
      const paths: [string, string, unknown?][] = [
        ['GET', '/api/v1/agents/ghost'],
        ['DELETE', '/api/v1/agents/ghost'],
        ['POST', '/api/v1/agents/ghost/cancel'],
        ['GET', '/api/v1/agents/ghost/events'],
        ['PATCH', '/api/v1/agents/ghost', { lifecycle: 'Sleep' }],
      ];
      for (const [m, p, b] of paths) {
        const r = await h.api(m, p, b);
        expect(r.status, `${m} ${p}`).to.equal(404);
        expect(r.body.reason).to.equal('NotFound');
      }
    });

    it('bad events limit -> 400; a limit above 200 is clamped', async () => {
      for (const q of ['limit=0', 'limit=abc', 'limit=1.5', 'before=-1']) {
        const r = await h.api('GET', `/api/v1/agents/builder/events?${q}`);
        expect(r.status, q).to.equal(400);
      }
      expect((await h.api('GET', '/api/v1/agents/builder/events?limit=201')).status).to.equal(200);
    });

    it('bad PATCH bodies -> 400 naming the field', async () => {
      for (const [body, field] of [
        [{ lifecycle: 'Nap' }, 'lifecycle'],
        [{ connectors: [1] }, 'connectors[0]'],
        [{}, '(body)'],
        [{ model: '' }, 'model'],
        [{ instructions: 'x', task: 2 }, 'task'],
      ] as const) {
        const r = await h.api('PATCH', '/api/v1/agents/builder', body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.details.causes.map((c: { field: string }) => c.field)).to.include(field);
      }
    });

    it('a WebSocket for an unknown agent is refused with 404 before the upgrade', async () => {
      const ws = new EventClient(wsUrl(h, 'ghost'));
      await ws.opened().then(
        () => expect.fail('upgrade should be refused'),
        (err: Error) => expect(err.message).to.contain('404'),
      );
    });
  });

  describe('patch', () => {
    it('stores connectors and lifecycle', async () => {
      // An agent may only list connectors that exist in its namespace.
      for (const name of ['github', 'jira']) {
        const c = await h.api('POST', '/api/v1/connectors', { name, url: 'http://127.0.0.1:9/mcp' });
        expect(c.status).to.equal(201);
      }
      const r = await h.api('PATCH', '/api/v1/agents/builder', { connectors: ['github', 'jira'], lifecycle: 'AutoDelete' });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ lifecycle: 'AutoDelete' });
      expect(r.body.connectors).to.deep.equal(['github', 'jira']);
      const cleared = await h.api('PATCH', '/api/v1/agents/builder', { connectors: [], lifecycle: '' });
      expect(cleared.body.connectors).to.deep.equal([]);
    });
  });

  describe('delete', () => {
    it('removes the agent, its worker and its workspace', async () => {
      await h.api('POST', '/api/v1/agents', { name: 'doomed', instructions: '@bash touch keep.txt\n@say ok' });
      const ws = new EventClient(wsUrl(h, 'doomed'));
      await ws.untilTaskEnd();
      ws.close();
      const oldLast = ws.events.at(-1)!.seq;
      const dir = join(h.dataDir, 'workspaces', 'default', 'doomed');
      expect(existsSync(join(dir, 'keep.txt'))).to.equal(true);
      const del = await h.api('DELETE', '/api/v1/agents/doomed');
      expect(del.status).to.equal(200);
      expect(del.body.name).to.equal('doomed');
      expect(existsSync(dir)).to.equal(false);
      expect(h.server.local!.isRunning({ namespace: 'default', name: 'doomed' })).to.equal(false);
      expect((await h.api('GET', '/api/v1/agents/doomed')).status).to.equal(404);
      // A new agent of the same name starts a stream of its own, its seqs above the old ones.
      await h.api('POST', '/api/v1/agents', { name: 'doomed', instructions: '@say reborn' });
      const hist = await eventually(async () => {
        const r = await h.api('GET', '/api/v1/agents/doomed/events');
        return r.body.events.length > 0 && r.body.events;
      });
      expect(hist[0].seq).to.equal(oldLast + 1);
      expect(hist[0]).to.include({ type: 'task_started', task: 1 });
    });
  });

  describe('the model credential', () => {
    it('never appears in responses, events, metrics or logs', async () => {
      const bodies = [
        (await h.api('GET', '/api/v1/agents')).text,
        (await h.api('GET', '/api/v1/agents/builder/events?limit=200')).text,
        (await h.api('GET', '/metrics')).text,
        (await h.api('GET', '/openapi.json')).text,
      ];
      for (const b of bodies) expect(b).not.to.contain(TEST_API_KEY);
      expect(h.logs.some((l) => l.includes('"component":"worker"'))).to.equal(true);
      expect(h.logs.join('\n')).not.to.contain(TEST_API_KEY);
    });
  });

  describe('metrics and openapi', () => {
    it('logs JSON lines (server and workers) that name each key once', () => {
      const lines = h.logs.filter((l) => l.startsWith('{'));
      expect(lines.length).to.be.greaterThan(10);
      const repeats = lines.map((l) => ({ l, keys: repeatedKeys(l) })).filter((r) => r.keys.length);
      expect(repeats.slice(0, 3), 'lines with a key twice').to.deep.equal([]);
    });

    it('exposes Prometheus metrics', async () => {
      const r = await h.api('GET', '/metrics');
      expect(r.status).to.equal(200);
      for (const name of [
        'agentplane_http_requests_total{route="/api/v1/agents",method="POST",status="201"}',
        'agentplane_http_request_duration_seconds_bucket',
        'agentplane_agents{status="Running"}',
        'agentplane_tasks_total{outcome="completed"}',
        'agentplane_tasks_total{outcome="cancelled"}',
        'agentplane_task_duration_seconds_count',
        'agentplane_task_cost_usd_total',
        'agentplane_events_appended_total{type="tool_call"}',
        'agentplane_websocket_clients',
      ]) {
        expect(r.text, name).to.contain(name);
      }
    });

    it('serves the OpenAPI document', async () => {
      const r = await h.api('GET', '/openapi.json');
      expect(r.status).to.equal(200);
      expect(r.body.openapi).to.match(/^3\./);
      expect(r.body.paths).to.have.property('/api/v1/agents/{name}/events');
    });
  });
});
