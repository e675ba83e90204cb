// Budgets enforced by the model proxy in the middle of a task (docs/budgets.md), with real
// workers and the scripted model. Each agent first runs a warm-up task without a budget, which
// puts a known spend in its status; the budget set after it leaves room for one more model
// request: the second task's first request goes (after a budget_warning, at 85%), the next
// one does not reach the model.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { getAgent, runTask, waitAgent } from '../support/agents.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

interface Spend {
  tokens: number;
  costUsd: number;
  day?: { start: string; tokens: number };
  month?: { start: string; tokens: number };
}

const TWO_STEPS = (tag: string): string => `@bash echo ${tag}-step-one-ran\n@bash echo ${tag}-step-two-ran\n@say ${tag} done`;

describe('budgets (integration)', function () {
  this.timeout(240_000);
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  const spendOf = async (name: string): Promise<Spend> => ((await getAgent(h, name)) as unknown as { spend: Spend }).spend;

  /** Runs a warm-up task and returns the agent's spend after it. */
  async function warmUp(name: string): Promise<Spend> {
    const evs = await runTask(h, name, '@say warmed up');
    expect(evs.at(-1)!.type).to.equal('task_completed');
    const spend = await eventually(async () => (await spendOf(name)) ?? false, 10_000, `${name}: spend in status`);
    expect(spend.tokens).to.be.above(0);
    expect(spend.costUsd).to.be.above(0);
    expect(spend.day?.start).to.equal(new Date().toISOString().slice(0, 10));
    expect(spend.month?.tokens).to.equal(spend.tokens);
    return spend;
  }

  /** The model saw the output of the step with `tag`: a request after it reached the model. */
  const modelSawStep = (tag: string): boolean => h.model.requests.some((r) => (r.lastToolResult ?? '').includes(tag));

  it('rejects a budget without a limit, or with a wrong onExceed, with 400 naming the field', async () => {
    const none = await h.api('POST', '/api/v1/agents', { name: 'no-limit', instructions: '@say hi', budget: { onExceed: 'Stop' } });
    expect(none.status).to.equal(400);
    expect(JSON.stringify(none.body)).to.contain('must set maxTokens or maxCostUsd');
    const wrong = await h.api('POST', '/api/v1/agents', { name: 'no-limit', instructions: '@say hi', budget: { maxTokens: 5, onExceed: 'Explode' } });
    expect(wrong.status).to.equal(400);
    expect(JSON.stringify(wrong.body)).to.contain('budget.onExceed');
    const negative = await h.api('POST', '/api/v1/agents', { name: 'no-limit', instructions: '@say hi', budget: { maxTokens: -1, onExceed: 'Stop' } });
    expect(negative.status).to.equal(400);
    expect(JSON.stringify(negative.body)).to.contain('budget.maxTokens');
  });

  it('maxTokens with Stop: a warning at 80%, then the task ends in the middle with error BudgetExceeded', async () => {
    const spend = await warmUp('stopper');
    const maxTokens = Math.ceil(spend.tokens / 0.85);
    const set = await h.api('PATCH', '/api/v1/agents/stopper', { budget: { maxTokens, onExceed: 'Stop' } });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body.budget).to.deep.equal({ maxTokens, onExceed: 'Stop' });

    const r = await h.api('POST', '/api/v1/agents', { name: 'stopper', instructions: TWO_STEPS('stopper') });
    expect(r.status).to.equal(200);
    const ws = new EventClient(`${h.url}/api/v1/agents/stopper/ws`);
    let evs: AgentEvent[];
    try {
      evs = (await ws.untilTaskEnd(2)).filter((e) => e.task === 2);
    } finally {
      ws.close();
    }
    const types = evs.map((e) => e.type);
    const trace = JSON.stringify(evs.map((e) => [e.type, e.payload]));
    expect(types.indexOf('budget_warning'), trace).to.be.within(0, types.indexOf('tool_call'));
    const warning = evs.find((e) => e.type === 'budget_warning')!.payload as { scope: string; limit: string; max: number };
    expect(warning).to.include({ scope: 'agent', limit: 'maxTokens', max: maxTokens });
    // The first step ran; the request after it was refused before the model saw it.
    expect(evs.filter((e) => e.type === 'tool_call').length, trace).to.equal(1);
    const end = evs.at(-1)!;
    expect(end.type, trace).to.equal('error');
    expect((end.payload as { reason: string }).reason).to.equal('BudgetExceeded');
    expect((end.payload as { message: string }).message).to.match(/^the agent's budget is spent \(\d+ of \d+ tokens\): the task is stopped$/);
    expect(modelSawStep('stopper-step-one-ran'), 'the step after the limit reached the model').to.equal(false);
    const after = await waitAgent(h, 'stopper', (a) => a.taskStatus === 'Error', 'task in error');
    expect(after.status).to.equal('Running');
    expect((await spendOf('stopper')).tokens).to.be.above(maxTokens);

    const metrics = await h.api('GET', '/metrics');
    expect(metrics.text).to.match(/agentplane_budget_spent_tokens\{namespace="default",scope="agent",name="stopper",period="total"\} \d+/);
    expect(metrics.text).to.match(/agentplane_budget_actions_total\{namespace="default",scope="agent",action="stop"\} 1/);
    expect(metrics.text).to.match(/agentplane_budget_actions_total\{namespace="default",scope="agent",action="warning"\} [1-9]/);
  });

  it('maxTokens with Pause: the task waits, Paused, until PATCH raises the budget; then it completes', async () => {
    const spend = await warmUp('pauser');
    const maxTokens = Math.ceil(spend.tokens / 0.85);
    expect((await h.api('PATCH', '/api/v1/agents/pauser', { budget: { maxTokens, onExceed: 'Pause' } })).status).to.equal(200);
    const r = await h.api('POST', '/api/v1/agents', { name: 'pauser', instructions: TWO_STEPS('pauser') });
    expect(r.status).to.equal(200);
    const ws = new EventClient(`${h.url}/api/v1/agents/pauser/ws`);
    try {
      await ws.until((evs) => evs.some((e) => e.task === 2 && e.type === 'budget_exceeded'));
      const held = await waitAgent(h, 'pauser', (a) => a.status === 'Paused', 'paused');
      expect(held.taskStatus).to.equal('InProgress');
      const exceeded = ws.events.find((e) => e.task === 2 && e.type === 'budget_exceeded')!.payload as { onExceed: string; message: string };
      expect(exceeded.onExceed).to.equal('Pause');
      expect(exceeded.message).to.match(/the task is paused until the budget is raised/);
      // Held, not ended: a while later the model still has not seen the first step's output.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(modelSawStep('pauser-step-one-ran')).to.equal(false);
      expect(ws.events.some((e) => e.task === 2 && ['error', 'task_completed', 'task_cancelled'].includes(e.type))).to.equal(false);

      const raised = await h.api('PATCH', '/api/v1/agents/pauser', { budget: { maxTokens: maxTokens * 100, onExceed: 'Pause' } });
      expect(raised.status).to.equal(200);
      const evs = (await ws.untilTaskEnd(2)).filter((e) => e.task === 2);
      const trace = JSON.stringify(evs.map((e) => [e.type, e.payload]));
      expect(evs.at(-1)!.type, trace).to.equal('task_completed');
      expect(evs.filter((e) => e.type === 'tool_call').length, trace).to.equal(2);
      expect(modelSawStep('pauser-step-two-ran')).to.equal(true);
    } finally {
      ws.close();
    }
    const done = await waitAgent(h, 'pauser', (a) => a.taskStatus === 'Complete', 'complete');
    expect(done.status).to.equal('Running');
  });

  it('PATCH budget null removes it', async () => {
    const r = await h.api('PATCH', '/api/v1/agents/pauser', { budget: null });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.budget).to.equal(undefined);
  });
});
