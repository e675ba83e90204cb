// Limits with clear errors (docs/decisions.md "Limits"): each limit is hit through a real server
// with real HTTP and WebSocket clients, and each refusal is checked in the project's own error
// formats: the REST body on /api/v1, metav1.Status on /apis.

import { expect } from 'chai';
import { INSTRUCTIONS_MAX_LENGTH, SYSTEM_PROMPT_MAX_LENGTH } from '../../pkg/api/agent.js';
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
});
