// Limits with clear errors (docs/decisions.md "Limits"): each limit is hit through a real server
// with real HTTP and WebSocket clients, and each refusal is checked in the project's own error
// formats: the REST body on /api/v1, metav1.Status on /apis.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { expect } from 'chai';
import { INSTRUCTIONS_MAX_LENGTH, SYSTEM_PROMPT_MAX_LENGTH } from '../../pkg/api/agent.js';
import { MAX_HEADER_SIZE, MAX_URL_LENGTH } from '../../pkg/server/app.js';
import { tokenFileYaml } from '../support/tokens.js';
import { runTask } from '../support/agents.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

const GV = 'agentplane.io/v1alpha1';
const AGG_NS = `/apis/${GV}/namespaces/default`;

describe('limits (integration)', function () {
  this.timeout(60_000);
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  describe('instructions and systemPrompt length', () => {
    it('REST: one character over the limit is 400 Invalid naming the field and the limit; nothing is created', async () => {
      const r = await h.api('POST', '/api/v1/agents', { name: 'too-long', instructions: 'x'.repeat(INSTRUCTIONS_MAX_LENGTH + 1) });
      expect(r.status, r.text.slice(0, 300)).to.equal(400);
      expect(r.body).to.include({ reason: 'Invalid', code: 400 });
      expect(r.body.details.causes).to.deep.equal([{ field: 'instructions', message: `must be at most ${INSTRUCTIONS_MAX_LENGTH} characters` }]);
      expect(r.body.error).to.contain(`instructions: must be at most ${INSTRUCTIONS_MAX_LENGTH} characters`);
      expect((await h.api('GET', '/api/v1/agents/too-long')).status).to.equal(404);

      const sp = await h.api('POST', '/api/v1/agents', { name: 'too-long', instructions: 'x', systemPrompt: 'y'.repeat(SYSTEM_PROMPT_MAX_LENGTH + 1) });
      expect(sp.status).to.equal(400);
      expect(sp.body.details.causes).to.deep.equal([{ field: 'systemPrompt', message: `must be at most ${SYSTEM_PROMPT_MAX_LENGTH} characters` }]);
    });

    it('REST PATCH: an over-long follow-up or systemPrompt is refused the same way', async () => {
      const created = await h.api('POST', '/api/v1/agents', { name: 'patch-limit', instructions: '@say hi' });
      expect(created.status, created.text).to.be.oneOf([200, 201]);
      const r = await h.api('PATCH', '/api/v1/agents/patch-limit', { instructions: 'x'.repeat(INSTRUCTIONS_MAX_LENGTH + 1) });
      expect(r.status).to.equal(400);
      expect(r.body.details.causes).to.deep.equal([{ field: 'instructions', message: `must be at most ${INSTRUCTIONS_MAX_LENGTH} characters` }]);
      const sp = await h.api('PATCH', '/api/v1/agents/patch-limit', { systemPrompt: 'y'.repeat(SYSTEM_PROMPT_MAX_LENGTH + 1) });
      expect(sp.status).to.equal(400);
      expect(sp.body.details.causes[0]).to.include({ field: 'systemPrompt' });
    });

    it('aggregated API: 422 Invalid with the cause on spec.instructions; exactly the limit is accepted', async () => {
      const agent = (name: string, instructions: string) => ({ apiVersion: GV, kind: 'Agent', metadata: { name }, spec: { instructions } });
      const r = await h.api('POST', `${AGG_NS}/agents`, agent('agg-too-long', 'x'.repeat(INSTRUCTIONS_MAX_LENGTH + 1)));
      expect(r.status).to.equal(422);
      expect(r.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
      expect(r.body.details.causes).to.deep.include({
        reason: 'FieldValueInvalid',
        message: `must be at most ${INSTRUCTIONS_MAX_LENGTH} characters`,
        field: 'spec.instructions',
      });
      const ok = await h.api('POST', `${AGG_NS}/agents`, agent('agg-at-limit', `@say ok\n${'x'.repeat(INSTRUCTIONS_MAX_LENGTH - 8)}`));
      expect(ok.status, ok.text.slice(0, 300)).to.equal(201);
    });
  });

  describe('URL and path parameter length', () => {
    /** A raw GET whose URL is `path` (fetch would not show a connection Node closes early). */
    const rawGet = (path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: any }> =>
      new Promise((resolve, reject) => {
        const u = new URL(h.url);
        const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'GET', headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end();
      });

    it('a URL over the limit is 414 URITooLong: the REST body on /api/v1, metav1.Status on /apis', async () => {
      const pad = 'a'.repeat(MAX_URL_LENGTH);
      const rest = await rawGet(`/api/v1/agents?namespace=${pad}`);
      expect(rest.status).to.equal(414);
      expect(rest.body).to.deep.equal({
        error: `request URL is longer than the limit of ${MAX_URL_LENGTH} bytes`,
        reason: 'URITooLong',
        code: 414,
        details: {},
      });
      const agg = await rawGet(`${AGG_NS}/agents?labelSelector=${pad}`);
      expect(agg.status).to.equal(414);
      expect(agg.body).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'URITooLong', code: 414 });
      // Just under the limit is served.
      const under = await rawGet(`/api/v1/agents?x=${'a'.repeat(MAX_URL_LENGTH - 40)}`);
      expect(under.status).to.equal(200);
    });

    it("a request line past what Node reads at all is still 414 in the path's format, not fastify's 431", async () => {
      const pad = 'a'.repeat(MAX_HEADER_SIZE + 100);
      const rest = await rawGet(`/api/v1/agents?namespace=${pad}`);
      expect(rest.status).to.equal(414);
      expect(rest.body).to.include({ reason: 'URITooLong', code: 414 });
      const agg = await rawGet(`${AGG_NS}/agents?x=${pad}`);
      expect(agg.status).to.equal(414);
      expect(agg.body).to.include({ kind: 'Status', reason: 'URITooLong', code: 414 });
    });

    it("headers past the limit with a short URL are 431 RequestHeaderFieldsTooLarge in the path's format", async () => {
      const big = { 'x-padding': 'p'.repeat(MAX_HEADER_SIZE + 100) };
      const rest = await rawGet('/api/v1/agents', big);
      expect(rest.status).to.equal(431);
      expect(rest.body).to.include({ reason: 'RequestHeaderFieldsTooLarge', code: 431 });
      const agg = await rawGet(`${AGG_NS}/agents`, big);
      expect(agg.status).to.equal(431);
      expect(agg.body).to.include({ kind: 'Status', reason: 'RequestHeaderFieldsTooLarge', code: 431 });
    });

    it("an over-long name in the path gets the same answer as any unknown name, in the project's format", async () => {
      const long = 'n'.repeat(300);
      const rest = await h.api('GET', `/api/v1/agents/${long}`);
      expect(rest.status, rest.text.slice(0, 300)).to.be.oneOf([400, 404]);
      expect(rest.body.reason).to.be.oneOf(['NotFound', 'BadRequest', 'Invalid']);
      expect(rest.body).to.not.have.property('statusCode');
      const agg = await h.api('GET', `${AGG_NS}/agents/${long}`);
      expect(agg.status, agg.text.slice(0, 300)).to.be.oneOf([400, 404]);
      expect(agg.body).to.include({ kind: 'Status', status: 'Failure' });
      const ws = await h.api('GET', `/api/v1/agents/${long}/events`);
      expect(ws.status).to.be.oneOf([400, 404]);
      expect(ws.body.reason).to.be.a('string');
    });
  });

  describe('rate limit default on the open loopback home', () => {
    it('is off: 300 requests at once from one client all succeed', async () => {
      const replies = await Promise.all(Array.from({ length: 300 }, () => h.api('GET', '/api/v1/agents')));
      expect(replies.map((r) => r.status).filter((s) => s !== 200)).to.deep.equal([]);
    });
  });
});

/** Opens a WebSocket: the refusal's HTTP status and body, or the open socket. */
function connect(url: string): Promise<{ status: number; body: any } | { opened: WebSocket }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'));
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += String(d)));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        ws.terminate();
      });
    });
    ws.on('open', () => resolve({ opened: ws }));
    ws.on('error', reject);
  });
}

describe('limits with small settings (integration)', function () {
  this.timeout(90_000);
  let h: Harness;

  before(async () => {
    h = await startHarness({ wsClientsPerAgent: 2, eventsPerAgent: 5 });
  });
  after(async () => {
    await h?.close();
  });

  it('WebSocket subscribers per agent: one over the cap is HTTP 429 before the upgrade; a freed place is taken again', async () => {
    await runTask(h, 'watched', '@say one');
    await runTask(h, 'other', '@say two');
    const url = `${h.url}/api/v1/agents/watched/ws`;
    const a = new EventClient(url);
    const b = new EventClient(url);
    await Promise.all([a.opened(), b.opened()]);
    const third = await connect(url);
    expect(third).to.have.property('status', 429);
    const refused = third as { status: number; body: any };
    expect(refused.body).to.include({ reason: 'TooManyRequests', code: 429 });
    expect(refused.body.error).to.contain('already has 2 event subscribers');
    // Another agent has its own count.
    const elsewhere = await connect(`${h.url}/api/v1/agents/other/ws`);
    expect(elsewhere).to.have.property('opened');
    (elsewhere as { opened: WebSocket }).opened.close();
    // Once one leaves, a new subscriber gets in.
    a.close();
    const again = await eventually(
      async () => {
        const c = await connect(url);
        return 'opened' in c ? c.opened : undefined;
      },
      10_000,
      'a free place',
    );
    again.close();
    b.close();
  });

  it('events per agent: only the newest are kept; history and since=<older than kept> get what is left', async () => {
    const events = await runTask(h, 'chatty', '@bash echo one\n@bash echo two\n@bash echo three\n@say done');
    const last = events[events.length - 1];
    expect(last.type, events.map((e) => e.type).join()).to.equal('task_completed');
    expect(last.seq, 'the task made more events than the cap').to.be.greaterThan(5);
    const history = await h.api('GET', '/api/v1/agents/chatty/events?limit=200');
    expect(history.status).to.equal(200);
    const seqs = (history.body.events as { seq: number }[]).map((e) => e.seq);
    expect(seqs).to.deep.equal([last.seq - 4, last.seq - 3, last.seq - 2, last.seq - 1, last.seq]);
    expect(history.body.events[4].type).to.equal(last.type);
    const replay = new EventClient(`${h.url}/api/v1/agents/chatty/ws?since=1`);
    try {
      const got = await replay.until((evs) => evs.some((e) => e.seq === last.seq));
      expect(got.map((e) => e.seq)).to.deep.equal(seqs);
    } finally {
      replay.close();
    }
  });
});

describe('rate limit per user (integration)', function () {
  this.timeout(60_000);
  let h: Harness;
  let dir: string;
  const TOKENS = { alice: 'alice-rate-0a1b2c3d4e5f', bob: 'bob-rate-6a7b8c9d0e1f' };
  const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-rate-'));
    const tokenFile = join(dir, 'tokens.yaml');
    writeFileSync(tokenFile, tokenFileYaml(Object.entries(TOKENS).map(([user, token]) => ({ user, token }))));
    h = await startHarness({ tokenFile, rateLimit: 2, rateLimitBurst: 3 });
  });
  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('over the burst is 429 TooManyRequests with Retry-After, in both formats; another user and the probes are not held back', async () => {
    for (let i = 0; i < 3; i++) expect((await h.api('GET', '/api/v1/agents', undefined, auth(TOKENS.alice))).status).to.equal(200);
    const res = await fetch(`${h.url}/api/v1/agents`, { headers: auth(TOKENS.alice) });
    expect(res.status).to.equal(429);
    expect(res.headers.get('retry-after')).to.equal('1');
    const body = await res.json();
    expect(body).to.include({ reason: 'TooManyRequests', code: 429 });
    expect(body.details).to.deep.equal({ retryAfterSeconds: 1 });
    expect(body.error).to.contain('user "alice"');

    const agg = await fetch(`${h.url}${AGG_NS}/agents`, { headers: auth(TOKENS.alice) });
    expect(agg.status).to.equal(429);
    expect(agg.headers.get('retry-after')).to.equal('1');
    expect(await agg.json()).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });

    expect((await h.api('GET', '/api/v1/agents', undefined, auth(TOKENS.bob))).status).to.equal(200);
    for (let i = 0; i < 10; i++) expect((await h.api('GET', '/healthz')).status).to.equal(200);

    // The bucket refills at the configured rate.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await h.api('GET', '/api/v1/agents', undefined, auth(TOKENS.alice))).status).to.equal(200);
  });
});
