// Schedules in the dashboard, in Chromium against a real embedded server (scripted model, real
// workers): the Schedules page lists a schedule with its agent, cron and next run; Trigger runs
// it now (the agent gets the task, the last run shows it); Suspend and Resume flip it.

import { expect } from 'chai';
import { runTask, waitAgent } from '../support/agents.js';
import { eventually, shot, useDashboard } from '../support/browser.js';

describe('dashboard: schedules (integration)', function () {
  this.timeout(180_000);
  const d = useDashboard();

  it('lists a schedule with its next run; Trigger runs it now; Suspend and Resume', async () => {
    await runTask(d.h, 'clock', '@say ready');
    const made = await d.h.api('POST', '/api/v1/schedules', { name: 'hourly', agent: 'clock', cron: '0 * * * *', instructions: '@say ran from the dashboard' });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    await d.page.goto(`${d.h.url}/ui/#/schedules`);
    const card = d.page.locator('[data-schedule=hourly]');
    await card.waitFor({ timeout: 20_000 });
    expect(await card.textContent())
      .to.contain('0 * * * *')
      .and.to.contain('clock');
    expect(await card.locator('a[href="#/agents/default/clock"]').count()).to.equal(1);
    await eventually(async () => expect(await card.getByTestId('schedule-next').textContent()).to.not.contain('—'), { timeoutMs: 20_000 });
    await shot(d.page, 'schedule-01-list');

    await card.getByRole('button', { name: 'Trigger' }).click();
    await waitAgent(d.h, 'clock', (a) => a.taskStatus === 'Complete' && a.lastTaskMessage === 'ran from the dashboard', 'the triggered task');
    await eventually(async () => expect(await card.getByTestId('schedule-last').textContent()).to.match(/(Started|Complete) \(task 2\).*triggered/), {
      timeoutMs: 20_000,
    });

    await card.getByRole('button', { name: 'Suspend' }).click();
    await eventually(async () => expect(await card.getByTestId('schedule-state').textContent()).to.equal('Suspended'), { timeoutMs: 20_000 });
    expect((await d.h.api('GET', '/api/v1/schedules/hourly')).body.suspend).to.equal(true);
    await shot(d.page, 'schedule-02-suspended');
    await card.getByRole('button', { name: 'Resume' }).click();
    await eventually(async () => expect(await card.getByTestId('schedule-state').textContent()).to.equal('Active'), { timeoutMs: 20_000 });
    expect((await d.h.api('GET', '/api/v1/schedules/hourly')).body.suspend).to.equal(false);
    expect(d.errors).to.deep.equal([]);
  });
});
