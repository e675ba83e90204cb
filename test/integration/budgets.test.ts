// Budgets enforced by the model proxy in the middle of a task (docs/budgets.md), with real
// workers and the scripted model. Each agent first runs a warm-up task without a budget, which
// puts a known spend in its status; the budget set after it leaves room for one more model
// request: the second task's first request goes (after a budget_warning, at 85%), the next
// one does not reach the model.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { getAgent, runTask, waitAgent } from '../support/agents.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';
import { cliFor } from '../support/cli.js';

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

  it('a namespace Budget covers every agent of the namespace: one agent’s spend stops the other too', async () => {
    const ns = 'team-shared';
    const run = (name: string, instructions: string) => runTask(h, name, instructions, ns);
    await run('ada', '@say warmed up');
    await run('bob', '@say warmed up');
    const spent = async (name: string) =>
      eventually(async () => ((await getAgent(h, name, ns)) as unknown as { spend?: Spend })?.spend ?? false, 10_000, `${name}: spend`);
    const both = (await spent('ada')).tokens + (await spent('bob')).tokens;
    const maxTokens = Math.ceil(both / 0.85);

    const bad = await h.api('POST', '/api/v1/budgets', { name: 'team', namespace: ns, period: 'week', onExceed: 'Stop' });
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body)).to.contain('period');
    const noLimit = await h.api('POST', '/api/v1/budgets', { name: 'team', namespace: ns, period: 'day', onExceed: 'Stop' });
    expect(noLimit.status).to.equal(400);
    expect(JSON.stringify(noLimit.body)).to.contain('must set maxTokens or maxCostUsd');
    const made = await h.api('POST', '/api/v1/budgets', { name: 'team', namespace: ns, period: 'day', maxTokens, onExceed: 'Stop' });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const listed = await h.api('GET', `/api/v1/budgets?namespace=${ns}`);
    const team = (listed.body as { budgets: { name: string; spent: Spend; used: number; periodStart: string; agents: { name: string }[] }[] }).budgets[0];
    expect(team.name).to.equal('team');
    expect(team.spent.tokens).to.equal(both);
    expect(team.periodStart).to.equal(new Date().toISOString().slice(0, 10));
    expect(team.used).to.be.within(0.8, 1);
    expect(team.agents.map((a) => a.name).sort()).to.deep.equal(['ada', 'bob']);

    // ada's next task warns (namespace scope), then is stopped in the middle.
    const evs = (await run('ada', TWO_STEPS('ada'))).filter((e) => e.task === 2);
    const trace = JSON.stringify(evs.map((e) => [e.type, e.payload]));
    expect(evs.find((e) => e.type === 'budget_warning')?.payload, trace).to.deep.include({ scope: 'namespace', name: 'team', max: maxTokens });
    expect(evs.at(-1)!.type, trace).to.equal('error');
    expect(evs.at(-1)!.payload).to.deep.include({ reason: 'BudgetExceeded' });
    expect((evs.at(-1)!.payload as { message: string }).message).to.match(/^namespace Budget "team" is spent/);
    expect(modelSawStep('ada-step-one-ran')).to.equal(false);

    // bob spent nothing more, and still his first request is refused: the budget is the namespace's.
    const before = h.model.requests.length;
    const bobs = (await run('bob', '@say bob-second-task')).filter((e) => e.task === 2);
    expect(bobs.at(-1)!.type, JSON.stringify(bobs)).to.equal('error');
    expect((bobs.at(-1)!.payload as { reason: string }).reason).to.equal('BudgetExceeded');
    expect(
      h.model.requests.slice(before).some((r) => r.lastUserText.includes('bob-second-task')),
      'bob’s task reached the model',
    ).to.equal(false);

    // Raised: bob works again. The aggregated API shows the Budget with its spend.
    const raised = await h.api('PATCH', `/api/v1/budgets/team?namespace=${ns}`, { maxTokens: maxTokens * 100 });
    expect(raised.status, JSON.stringify(raised.body)).to.equal(200);
    expect((await run('bob', '@say bob-third-task')).at(-1)!.type).to.equal('task_completed');
    const agg = await h.api('GET', `/apis/agentplane.io/v1alpha1/namespaces/${ns}/budgets/team`);
    expect(agg.status).to.equal(200);
    expect(agg.body).to.deep.include({ kind: 'Budget', apiVersion: 'agentplane.io/v1alpha1' });
    expect(agg.body.spec).to.deep.equal({ period: 'day', maxTokens: maxTokens * 100, onExceed: 'Stop' });
    expect(agg.body.status.spent.tokens).to.be.above(both);
    const metrics = await h.api('GET', '/metrics');
    expect(metrics.text).to.match(new RegExp(`agentplane_budget_spent_tokens\\{namespace="${ns}",scope="namespace",name="team",period="day"\\} \\d+`));
    expect((await h.api('DELETE', `/api/v1/budgets/team?namespace=${ns}`)).status).to.equal(200);
    expect((await h.api('GET', `/api/v1/budgets/team?namespace=${ns}`)).status).to.equal(404);
  });

  it('the aggregated API serves Budgets and agents’ spec.budget: discovery, OpenAPI (kubectl explain), validation', async () => {
    const disc = await h.api('GET', '/apis/agentplane.io/v1alpha1');
    const budgets = (disc.body as { resources: { name: string; kind: string; namespaced: boolean }[] }).resources.find((r) => r.name === 'budgets');
    expect(budgets).to.deep.include({ kind: 'Budget', namespaced: true });
    const doc = (await h.api('GET', '/openapi/v3/apis/agentplane.io/v1alpha1')).body as { components: { schemas: Record<string, any> } };
    const specOf = (kind: string): string => {
      const spec = doc.components.schemas[`io.agentplane.v1alpha1.${kind}`].properties.spec as { $ref?: string };
      return JSON.stringify(spec.$ref ? doc.components.schemas[spec.$ref.split('/').at(-1)!] : spec);
    };
    expect(specOf('Budget')).to.contain('period').and.to.contain('onExceed');
    expect(specOf('Agent')).to.contain('maxTokens').and.to.contain('perTask');
    const bad = await h.api('POST', '/apis/agentplane.io/v1alpha1/namespaces/default/budgets', {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Budget',
      metadata: { name: 'monthly' },
      spec: { period: 'month', onExceed: 'Pause' },
    });
    expect(bad.status).to.equal(422);
    expect(JSON.stringify(bad.body)).to.contain('must set maxTokens or maxCostUsd');
    const made = await h.api('POST', '/apis/agentplane.io/v1alpha1/namespaces/default/budgets', {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Budget',
      metadata: { name: 'monthly' },
      spec: { period: 'month', maxCostUsd: 1000, onExceed: 'Pause' },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect((await h.api('DELETE', '/apis/agentplane.io/v1alpha1/namespaces/default/budgets/monthly')).status).to.equal(200);
  });

  it('the CLI sets an agent’s budget, shows budget and spend (describe), and manages namespace Budgets', async () => {
    const cli = cliFor({ configDir: h.dataDir, server: h.url });
    const set = await cli('budget', 'agent', 'stopper', '--max-tokens', '900000', '--on-exceed', 'Pause', '--per-task');
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.contain('Budget: 900000 tokens per task; on exceed Pause');
    expect(set.stdout).to.match(/Spend: {2}\d+ tokens, \$\d+\.\d{4} in all; today \d+ tokens/);
    expect((await h.api('GET', '/api/v1/agents/stopper')).body.budget).to.deep.equal({ maxTokens: 900000, onExceed: 'Pause', perTask: true });
    const described = await cli('describe', 'stopper');
    expect(described.stdout).to.match(/^Budget: +900000 tokens per task; on exceed Pause$/m);
    expect(described.stdout).to.match(/^Spend: +\d+ tokens/m);
    const bad = await cli('budget', 'agent', 'stopper', '--max-tokens', 'lots');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--max-tokens must be a number');

    const add = await cli('budget', 'add', 'daily', '--period', 'day', '--max-cost-usd', '50', '--on-exceed', 'Pause');
    expect(add.code, add.stderr).to.equal(0);
    const ls = await cli('budget', 'ls');
    expect(ls.stdout).to.match(/^NAME\s+PERIOD\s+LIMIT\s+USED\s+ONEXCEED\s+AGE/m);
    expect(ls.stdout).to.match(/^daily\s+day\s+\$50\s+\d+%\s+Pause/m);
    expect((await cli('budget', 'set', 'daily', '--max-cost-usd', '75')).code).to.equal(0);
    expect((await h.api('GET', '/api/v1/budgets/daily')).body.maxCostUsd).to.equal(75);
    expect((await cli('budget', 'rm', 'daily')).stdout).to.contain('budget/daily deleted');
    expect((await cli('budget', 'agent', 'stopper', '--clear')).stdout).to.contain('Budget: <none>');
  });

  it('Pause, then cancel: the held task ends cancelled and the agent is no longer Paused', async () => {
    const spend = await warmUp('waiter');
    const maxTokens = Math.ceil(spend.tokens / 0.85);
    expect((await h.api('PATCH', '/api/v1/agents/waiter', { budget: { maxTokens, onExceed: 'Pause' } })).status).to.equal(200);
    expect((await h.api('POST', '/api/v1/agents', { name: 'waiter', instructions: TWO_STEPS('waiter') })).status).to.equal(200);
    await waitAgent(h, 'waiter', (a) => a.status === 'Paused', 'paused');
    const cancel = await h.api('POST', '/api/v1/agents/waiter/cancel');
    expect([200, 202], cancel.text).to.include(cancel.status);
    const after = await waitAgent(h, 'waiter', (a) => a.taskStatus === 'Cancelled', 'cancelled');
    await waitAgent(h, 'waiter', (a) => a.status === 'Running', 'not paused');
    expect(after.taskStatus).to.equal('Cancelled');
    expect(modelSawStep('waiter-step-one-ran')).to.equal(false);
  });

  it('PATCH budget null removes it', async () => {
    const r = await h.api('PATCH', '/api/v1/agents/pauser', { budget: null });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.budget).to.equal(undefined);
  });
});
