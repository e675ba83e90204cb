// Tool-call approvals end to end, with real workers and the scripted model: a Bash call the
// agent's policy holds waits for a person; allow runs it, deny hands the model a refusal and the
// task goes on, the timeout applies the policy's default; a restart of the server while a call
// waits keeps the request, which is then decided and reaches the worker.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

const wsUrl = (h: Harness, name: string): string => `${h.url}/api/v1/agents/${name}/ws`;
const ofType = <T = any>(evs: AgentEvent[], type: string): (AgentEvent & { payload: T })[] => evs.filter((e) => e.type === type) as never;
const resultOf = (evs: AgentEvent[]): string => (ofType(evs, 'task_completed')[0]?.payload as { result: string }).result;

/** Starts an agent whose Bash calls need approval and waits for its first request. */
async function gated(h: Harness, name: string, script: string, approval: object = { tools: ['Bash'] }): Promise<{ ws: EventClient; id: string }> {
  const r = await h.api('POST', '/api/v1/agents', { name, instructions: script, approval });
  expect(r.status, JSON.stringify(r.body)).to.equal(201);
  const ws = new EventClient(wsUrl(h, name));
  const evs = await ws.until((e) => e.some((x) => x.type === 'approval_requested'));
  return { ws, id: ofType<{ id: string }>(evs, 'approval_requested')[0].payload.id };
}

describe('tool-call approvals (integration)', function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  describe('a Bash call allowed by a person', () => {
    let ws: EventClient;
    let id: string;
    let decided: { status: number; body: any };
    before(async () => {
      ({ ws, id } = await gated(h, 'gate-allow', '@bash echo approved-and-ran\n@say all done'));
    });
    after(() => ws?.close());

    it('waits: the request names the tool, its input and who may decide, and the tool has not run', async () => {
      const req = ofType(ws.events, 'approval_requested')[0];
      expect(req.payload).to.include({ id, tool: 'Bash', onTimeout: 'deny' });
      expect(req.payload.input).to.include({ command: 'echo approved-and-ran' });
      expect(req.payload.deciders).to.contain('agents/approvals');
      expect(Date.parse(req.payload.expiresAt) - Date.parse(req.timestamp)).to.be.closeTo(600_000, 5_000);
      // The tool_call event carries the same id.
      expect(ofType(ws.events, 'tool_call').map((e) => e.payload.id)).to.include(id);
      await new Promise((r) => setTimeout(r, 1500));
      expect(ofType(ws.events, 'tool_result')).to.have.length(0);
      const agent = await h.api('GET', '/api/v1/agents/gate-allow');
      expect(agent.body.taskStatus).to.equal('InProgress');
      expect(agent.body.lastTaskMessage).to.match(/^Waiting for approval: Bash/);
      expect(agent.body.approvals).to.have.length(1);
      expect(agent.body.approvals[0]).to.include({ id, tool: 'Bash', task: 1 });
      expect(agent.body.approvals[0]).to.not.have.property('decision');
      const list = await h.api('GET', '/api/v1/agents/gate-allow/approvals');
      expect(list.status).to.equal(200);
      expect(list.body.approvals.map((a: { id: string }) => a.id)).to.deep.equal([id]);
    });

    it('refuses a bad decision (400) and an unknown id (404), and the call still waits', async () => {
      const bad = await h.api('POST', `/api/v1/agents/gate-allow/approvals/${id}`, { decision: 'maybe' });
      expect(bad.status, JSON.stringify(bad.body)).to.equal(400);
      expect(JSON.stringify(bad.body)).to.contain('decision');
      const unknown = await h.api('POST', '/api/v1/agents/gate-allow/approvals/toolu_nope', { decision: 'allow' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error).to.contain('has no approval "toolu_nope"');
      const noAgent = await h.api('POST', `/api/v1/agents/no-such-agent/approvals/${id}`, { decision: 'allow' });
      expect(noAgent.status).to.equal(404);
      expect(ofType(ws.events, 'tool_result')).to.have.length(0);
    });

    it('runs the tool once allowed, and the task completes', async () => {
      decided = await h.api('POST', `/api/v1/agents/gate-allow/approvals/${id}`, { decision: 'allow', reason: 'looks fine' });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      expect(decided.body).to.include({ id, decision: 'allow', reason: 'looks fine', decidedBy: 'system:anonymous' });
      const evs = await ws.untilTaskEnd(1);
      expect(resultOf(evs)).to.equal('all done');
      const result = ofType(evs, 'tool_result').find((e) => e.payload.id === id)!;
      expect(result.payload.isError).to.equal(false);
      expect(result.payload.output).to.contain('approved-and-ran');
      const d = ofType(evs, 'approval_decided');
      expect(d).to.have.length(1);
      expect(d[0].payload).to.deep.equal({ id, tool: 'Bash', decision: 'allow', reason: 'looks fine', decidedBy: 'system:anonymous' });
      const types = evs.map((e) => e.type);
      expect(types.indexOf('approval_decided')).to.be.lessThan(types.indexOf('tool_result'));
    });

    it('answers a second decision with 409, naming the first', async () => {
      const again = await h.api('POST', `/api/v1/agents/gate-allow/approvals/${id}`, { decision: 'deny' });
      // The task ended, so its approvals went with it: 404; while it runs a second decision is 409 (below).
      expect(again.status).to.be.oneOf([404, 409]);
      const agent = await h.api('GET', '/api/v1/agents/gate-allow');
      expect(agent.body).to.not.have.property('approvals');
    });
  });

  describe('a Bash call denied by a person', () => {
    let ws: EventClient;
    let id: string;
    before(async () => {
      ({ ws, id } = await gated(h, 'gate-deny', '@bash echo should-not-run > denied.txt\n@bash ls\n@say went on without it'));
    });
    after(() => ws?.close());

    it('gives the model the refusal with the reason, and the task goes on', async () => {
      const r = await h.api('POST', `/api/v1/agents/gate-deny/approvals/${id}`, { decision: 'deny', reason: 'not on a Friday' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const twice = await h.api('POST', `/api/v1/agents/gate-deny/approvals/${id}`, { decision: 'allow' });
      expect(twice.status).to.equal(409);
      expect(twice.body.error).to.contain('already decided: deny by system:anonymous');
      // The next Bash call (ls) waits too: allow it.
      const second = await ws.until((e) => ofType(e, 'approval_requested').length === 2);
      const next = ofType<{ id: string }>(second, 'approval_requested')[1].payload.id;
      expect((await h.api('POST', `/api/v1/agents/gate-deny/approvals/${next}`, { decision: 'allow' })).status).to.equal(200);
      const evs = await ws.untilTaskEnd(1);
      expect(resultOf(evs)).to.equal('went on without it');
      const refused = ofType(evs, 'tool_result').find((e) => e.payload.id === id)!;
      expect(refused.payload.isError).to.equal(true);
      expect(refused.payload.output).to.contain('not on a Friday');
      // The model read the refusal as the tool's result, and the listing shows no file written.
      const listing = ofType(evs, 'tool_result').find((e) => e.payload.id === next)!;
      expect(listing.payload.output).to.not.contain('denied.txt');
      expect(h.model.requests.some((q) => (q.lastToolResult ?? '').includes('not on a Friday'))).to.equal(true);
    });
  });

  describe('the timeout', () => {
    it("applies the policy's default when nobody decides", async () => {
      const { ws, id } = await gated(h, 'gate-timeout', '@bash echo ran-after-timeout\n@say timed', { tools: ['Ba*'], timeoutSeconds: 2, onTimeout: 'allow' });
      try {
        const evs = await ws.untilTaskEnd(1);
        const d = ofType(evs, 'approval_decided')[0];
        expect(d.payload).to.include({ id, decision: 'allow', decidedBy: 'system:agentplane:approval-timeout' });
        expect(d.payload.reason).to.contain('nobody decided within 2 s');
        const req = ofType(evs, 'approval_requested')[0];
        expect(Date.parse(d.timestamp) - Date.parse(req.timestamp)).to.be.at.least(1900);
        expect(ofType(evs, 'tool_result')[0].payload.output).to.contain('ran-after-timeout');
        expect(resultOf(evs)).to.equal('timed');
      } finally {
        ws.close();
      }
    });

    it('denies by default', async () => {
      const { ws, id } = await gated(h, 'gate-timeout-deny', '@bash echo never\n@say refused', { tools: ['Bash'], timeoutSeconds: 1 });
      try {
        const evs = await ws.untilTaskEnd(1);
        expect(ofType(evs, 'approval_decided')[0].payload).to.include({ id, decision: 'deny', decidedBy: 'system:agentplane:approval-timeout' });
        const result = ofType(evs, 'tool_result')[0].payload;
        expect(result.isError).to.equal(true);
        expect(result.output).to.contain('the approval timed out');
        expect(resultOf(evs)).to.equal('refused');
      } finally {
        ws.close();
      }
    });
  });

  describe('the policy', () => {
    it('lets allowed commands and other tools through without asking', async () => {
      const r = await h.api('POST', '/api/v1/agents', {
        name: 'gate-free',
        instructions: '@bash echo free-to-run\n@write notes.txt hello\n@say free',
        approval: { tools: ['Bash'], allowedCommands: ['echo free*'] },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.approval).to.deep.equal({ tools: ['Bash'], allowedCommands: ['echo free*'] });
      const ws = new EventClient(wsUrl(h, 'gate-free'));
      const evs = await ws.untilTaskEnd(1);
      ws.close();
      expect(ofType(evs, 'approval_requested')).to.have.length(0);
      expect(ofType(evs, 'tool_result')[0].payload.output).to.contain('free-to-run');
    });

    it('is refused with a 400 naming the field when malformed, and removed by PATCH null', async () => {
      const bad = await h.api('POST', '/api/v1/agents', { name: 'gate-bad', instructions: 'x', approval: { tools: ['no spaces allowed'] } });
      expect(bad.status).to.equal(400);
      expect(JSON.stringify(bad.body)).to.contain('approval.tools');
      const badTimeout = await h.api('PATCH', '/api/v1/agents/gate-free', { approval: { tools: ['Bash'], timeoutSeconds: 0 } });
      expect(badTimeout.status).to.equal(400);
      expect(JSON.stringify(badTimeout.body)).to.contain('timeoutSeconds');
      const set = await h.api('PATCH', '/api/v1/agents/gate-free', { approval: { tools: ['Write'], onTimeout: 'allow' } });
      expect(set.status, JSON.stringify(set.body)).to.equal(200);
      expect(set.body.approval).to.deep.equal({ tools: ['Write'], onTimeout: 'allow' });
      const removed = await h.api('PATCH', '/api/v1/agents/gate-free', { approval: null });
      expect(removed.status).to.equal(200);
      expect(removed.body).to.not.have.property('approval');
    });
  });

  describe('a server restart while a call waits', () => {
    it('keeps the request pending; deciding it afterwards runs the tool', async () => {
      const { ws, id } = await gated(h, 'gate-restart', '@bash echo survived-restart\n@say restarted fine');
      ws.close();
      await h.restart();
      const list = await eventually(async () => {
        const r = await h.api('GET', '/api/v1/agents/gate-restart/approvals');
        return r.status === 200 && r.body.approvals.length === 1 ? r.body.approvals : undefined;
      });
      expect(list[0]).to.include({ id, tool: 'Bash' });
      expect(list[0]).to.not.have.property('decision');
      const r = await h.api('POST', `/api/v1/agents/gate-restart/approvals/${id}`, { decision: 'allow' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const after = await eventually(
        async () => {
          const a = await h.api('GET', '/api/v1/agents/gate-restart');
          return a.body.taskStatus !== 'InProgress' ? a.body : undefined;
        },
        60_000,
        'the task to end',
      );
      expect(after.taskStatus).to.equal('Complete');
      expect(after.lastTaskMessage).to.equal('restarted fine');
      const history = await h.api('GET', '/api/v1/agents/gate-restart/events?limit=200');
      const evs = history.body.events as AgentEvent[];
      // The task ran again on a new worker; its repeated call took the approval it had: asked once, run once.
      expect(ofType(evs, 'task_started')).to.have.length(2);
      expect(ofType(evs, 'approval_requested').map((e) => e.payload.id)).to.deep.equal([id]);
      expect(ofType(evs, 'approval_decided').map((e) => e.payload)).to.deep.equal([{ id, tool: 'Bash', decision: 'allow', decidedBy: 'system:anonymous' }]);
      const results = ofType(evs, 'tool_result');
      expect(results).to.have.length(1);
      expect(results[0].payload.output).to.contain('survived-restart');
      expect(evs.every((e) => e.task === 1)).to.equal(true);
      expect(evs.some((e) => e.type === 'error')).to.equal(false);
    });
  });
});
