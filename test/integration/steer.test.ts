// PATCH instructions end to end: a follow-up into a running task (steering) reaches the model and
// the task still ends once; on an idle agent the same PATCH starts a task as POST does.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { busyFor, EventClient, type Harness, startHarness } from '../support/harness.js';

const wsUrl = (h: Harness, name: string, query = ''): string => `${h.url}/api/v1/agents/${name}/ws${query}`;
const ofType = (evs: AgentEvent[], type: string): AgentEvent[] => evs.filter((e) => e.type === type);
const resultOf = (evs: AgentEvent[]): string => (ofType(evs, 'task_completed')[0]?.payload as { result: string }).result;

describe('steering (integration)', function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  describe('a busy agent', () => {
    const followUp = 'Also mention the pineapples\n@echo';
    let ws: EventClient;
    let patched: { status: number; body: any };
    let refused: { status: number; body: any };

    before(async () => {
      const first = await h.api('POST', '/api/v1/agents', { name: 'steered', instructions: `@bash ${busyFor(4)}\n@say first plan` });
      expect(first.status).to.equal(201);
      ws = new EventClient(wsUrl(h, 'steered'));
      await ws.until((evs) => evs.some((e) => e.type === 'tool_call'));
      // What a third-party client does: POST, and on 409 send the same words by PATCH.
      refused = await h.api('POST', '/api/v1/agents', { name: 'steered', instructions: followUp });
      patched = await h.api('PATCH', '/api/v1/agents/steered', { instructions: followUp });
      await ws.untilTaskEnd(1);
    });
    after(() => ws.close());

    it('answers 409 to POST and 200 to PATCH, with the task still in progress', () => {
      expect(refused.status).to.equal(409);
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body).to.include({ name: 'steered', taskStatus: 'InProgress' });
    });

    it('records the follow-up as a user_message event of the running task', () => {
      const msgs = ofType(ws.events, 'user_message');
      expect(msgs).to.have.length(1);
      expect(msgs[0]).to.deep.include({ task: 1, payload: { content: followUp } });
      const types = ws.events.map((e) => e.type);
      expect(types.indexOf('user_message')).to.be.greaterThan(types.indexOf('task_started'));
      expect(types.indexOf('user_message')).to.be.lessThan(types.indexOf('task_completed'));
    });

    it('reached the model, which answered it, and the task completed once', () => {
      expect(resultOf(ws.events)).to.contain('Also mention the pineapples');
      expect(ofType(ws.events, 'task_completed')).to.have.length(1);
      expect(ws.events.every((e) => e.task === 1)).to.equal(true);
      expect(h.model.requests.some((r) => r.lastUserText.includes('Also mention the pineapples'))).to.equal(true);
    });

    it('keeps the follow-up in history', async () => {
      const r = await h.api('GET', '/api/v1/agents/steered/events?limit=200');
      expect(ofType(r.body.events, 'user_message').map((e) => e.payload)).to.deep.equal([{ content: followUp }]);
    });

    it('runs a follow-up that misses the last turn as a turn of its own, still one task', async () => {
      const since = ws.events.at(-1)!.seq;
      const next = new EventClient(wsUrl(h, 'steered', `?since=${since}`));
      const sent = await h.api('POST', '/api/v1/agents', { name: 'steered', instructions: `@bash ${busyFor(1)}\n@delay 3000\n@say second plan` });
      expect(sent.status).to.equal(200);
      // The final answer is being written (delayed) when the follow-up comes.
      await next.until((evs) => evs.some((e) => e.type === 'tool_result'));
      const r = await h.api('PATCH', '/api/v1/agents/steered', { instructions: 'late pineapples\n@echo' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const evs = await next.untilTaskEnd(2);
      next.close();
      expect(resultOf(evs)).to.contain('late pineapples');
      expect(ofType(evs, 'task_completed')).to.have.length(1);
      expect(ofType(evs, 'user_message')).to.have.length(1);
      const after = await h.api('GET', '/api/v1/agents/steered');
      expect(after.body.taskStatus).to.equal('Complete');
    });
  });

  describe('an idle agent', () => {
    it('starts a task as POST does', async () => {
      const first = await h.api('POST', '/api/v1/agents', { name: 'idler', instructions: '@say hello' });
      expect(first.status).to.equal(201);
      const ws = new EventClient(wsUrl(h, 'idler'));
      await ws.untilTaskEnd(1);

      const r = await h.api('PATCH', '/api/v1/agents/idler', { instructions: '@bash echo patched > p.txt\n@say started by patch' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.taskStatus).to.equal('InProgress');
      const evs = (await ws.untilTaskEnd(2)).filter((e) => e.task === 2);
      ws.close();
      expect(evs[0]).to.deep.include({ type: 'task_started', payload: { instructions: '@bash echo patched > p.txt\n@say started by patch' } });
      expect(evs.at(-1)!.type).to.equal('task_completed');
      expect(resultOf(evs)).to.equal('started by patch');
      expect(ofType(evs, 'user_message')).to.have.length(0);
    });

    it('takes model and systemPrompt from the next task on', async () => {
      const r = await h.api('PATCH', '/api/v1/agents/idler', { model: 'claude-test-next', systemPrompt: 'You are the patched bot.' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ model: 'claude-test-next', taskStatus: 'Complete' });

      const ws = new EventClient(wsUrl(h, 'idler', '?since=0'));
      const sent = await h.api('PATCH', '/api/v1/agents/idler', { instructions: '@say model marker 3' });
      expect(sent.status).to.equal(200);
      await ws.untilTaskEnd(3);
      ws.close();
      const reqs = h.model.requests.filter((q) => q.hasTools && q.lastUserText.includes('model marker 3'));
      expect(reqs).to.not.have.lengthOf(0);
      for (const q of reqs) {
        expect(q.model).to.equal('claude-test-next');
        expect(q.system, q.system.slice(0, 2000)).to.contain('You are the patched bot.');
      }
    });
  });

  describe('errors', () => {
    it('bad bodies -> 400 naming the field', async () => {
      for (const [body, field] of [
        [{ instructions: '' }, 'instructions'],
        [{ instructions: 5 }, 'instructions'],
        [{ model: '' }, 'model'],
        [{ systemPrompt: 7 }, 'systemPrompt'],
        [{ instructions: 'x', task: 2 }, 'task'],
      ] as const) {
        const r = await h.api('PATCH', '/api/v1/agents/idler', body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body).to.include({ reason: 'Invalid', code: 400 });
        expect(
          r.body.details.causes.map((c: { field: string }) => c.field),
          JSON.stringify(body),
        ).to.include(field);
      }
    });

    it('unknown agent -> 404, and no agent is created', async () => {
      const r = await h.api('PATCH', '/api/v1/agents/nobody', { instructions: '@say hi' });
      expect(r.status).to.equal(404);
      expect((await h.api('GET', '/api/v1/agents/nobody')).status).to.equal(404);
    });
  });
});
