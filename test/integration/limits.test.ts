// Limits with clear errors (docs/decisions.md "Limits"): each limit is hit through a real server
// with real HTTP and WebSocket clients, and each refusal is checked in the project's own error
// formats: the REST body on /api/v1, metav1.Status on /apis.

import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import { INSTRUCTIONS_MAX_LENGTH, SYSTEM_PROMPT_MAX_LENGTH } from '../../pkg/api/agent.js';
import { MAX_HEADER_SIZE, MAX_URL_LENGTH } from '../../pkg/server/app.js';
import { type Harness, startHarness } from '../support/harness.js';

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
    const rawGet = (path: string): Promise<{ status: number; headers: Record<string, unknown>; body: any }> =>
      new Promise((resolve, reject) => {
        const u = new URL(h.url);
        const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
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

    it('a request line past what Node reads at all is still 414 in the path\'s format, not fastify\'s 431', async () => {
      const pad = 'a'.repeat(MAX_HEADER_SIZE + 100);
      const rest = await rawGet(`/api/v1/agents?namespace=${pad}`);
      expect(rest.status).to.equal(414);
      expect(rest.body).to.include({ reason: 'URITooLong', code: 414 });
      const agg = await rawGet(`${AGG_NS}/agents?x=${pad}`);
      expect(agg.status).to.equal(414);
      expect(agg.body).to.include({ kind: 'Status', reason: 'URITooLong', code: 414 });
    });

    it('an over-long name in the path gets the same answer as any unknown name, in the project\'s format', async () => {
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
});
