// Budgets in the dashboard, in Chromium against a real embedded server (scripted model, real
// workers): an agent's page shows its budget and spend, a task a budget holds shows Paused with
// a notice whose "Raise the budget" lets it complete, the budget events are in the stream, and
// the Budgets page shows a namespace Budget with its agents' spend.

import { expect } from 'chai';
import { runTask } from '../support/agents.js';
import { eventually, shot, useDashboard } from '../support/browser.js';
import { eventually as poll } from '../support/harness.js';

describe('dashboard: budgets (integration)', function () {
  this.timeout(180_000);
  const d = useDashboard();

  it('a paused task: status Paused, the notice, the budget events; "Raise the budget" lets it complete', async () => {
    await runTask(d.h, 'thrifty', '@say warmed up');
    const spend = await poll(async () => ((await d.h.api('GET', '/api/v1/agents/thrifty')).body as { spend?: { tokens: number } }).spend ?? false, 10_000);
    const maxTokens = Math.ceil(spend.tokens / 0.85);
    expect((await d.h.api('PATCH', '/api/v1/agents/thrifty', { budget: { maxTokens, onExceed: 'Pause' } })).status).to.equal(200);
    expect(
      (await d.h.api('POST', '/api/v1/agents', { name: 'thrifty', instructions: '@bash echo thrifty-one\n@bash echo thrifty-two\n@say thrifty done' })).status,
    ).to.equal(200);
    await d.page.goto(`${d.h.url}/ui/#/agents/default/thrifty`);
    await d.page.getByTestId('agent-paused').waitFor({ timeout: 60_000 });
    await eventually(async () => expect(await d.page.getByTestId('agent-status').textContent()).to.equal('Paused'), { timeoutMs: 20_000 });
    expect(await d.page.getByTestId('budget').textContent()).to.equal(`${maxTokens.toLocaleString('en-US')} tokens in all; on exceed Pause`);
    expect(await d.page.getByTestId('spend').textContent()).to.match(/tokens, \$\d/);
    const events = d.page.getByTestId('events');
    expect(await events.locator('[data-type=budget_warning]').count()).to.equal(1);
    expect(await events.locator('[data-type=budget_exceeded]').textContent()).to.contain('the task is paused until the budget is raised');
    await shot(d.page, 'budget-01-paused');
    await d.page.getByTestId('raise-tokens').fill(String(maxTokens * 100));
    await d.page.getByTestId('raise-budget').click();
    await events.locator('[data-type=task_completed]').waitFor({ timeout: 60_000 });
    await eventually(async () => expect(await d.page.getByTestId('agent-status').textContent()).to.equal('Running'), { timeoutMs: 20_000 });
    expect((await d.h.api('GET', '/api/v1/agents/thrifty')).body.budget).to.deep.equal({ maxTokens: maxTokens * 100, onExceed: 'Pause' });
    expect(await d.page.getByTestId('agent-paused').count()).to.equal(0);
  });

  it('the Budgets page: a namespace Budget with its limit, use and the agents that spent it', async () => {
    expect((await d.h.api('POST', '/api/v1/budgets', { name: 'daily', period: 'day', maxTokens: 100_000_000, onExceed: 'Stop' })).status).to.equal(201);
    await d.page.goto(`${d.h.url}/ui/#/budgets`);
    const card = d.page.locator('[data-budget=daily]');
    await card.waitFor({ timeout: 20_000 });
    expect(await card.textContent())
      .to.contain('100,000,000 tokens per day')
      .and.to.contain('on exceed Stop');
    expect(await card.getByTestId('budget-used').textContent()).to.match(/^\d+% used$/);
    expect(await card.locator('a[href="#/agents/default/thrifty"]').count()).to.equal(1);
    await shot(d.page, 'budget-02-budgets');
    expect(d.errors).to.deep.equal([]);
  });
});
