// The dashboard's approval banner in Chromium against a real embedded server (scripted model, real
// workers): a Bash call that waits shows its input with Allow and Deny; Allow runs it and the
// banner goes; Deny with a reason hands the model the refusal and the task goes on.

import { expect } from 'chai';

import { shot, useDashboard } from '../support/browser.js';

describe('dashboard in Chromium: tool-call approvals (integration)', function () {
  this.timeout(180_000);
  const d = useDashboard();

  it('shows the waiting call with its input; Allow runs it and the banner goes', async () => {
    const sent = await d.h.api('POST', '/api/v1/agents', {
      name: 'ui-gate',
      instructions: '@bash echo allowed-from-the-dashboard\n@say dashboard approved',
      approval: { tools: ['Bash'] },
    });
    expect(sent.status, sent.text).to.equal(201);
    await d.page.goto(`${d.h.url}/ui/#/agents/default/ui-gate`);
    const banner = d.page.getByTestId('approval');
    await banner.waitFor({ timeout: 60_000 });
    expect(await banner.textContent()).to.contain('Bash waits for approval');
    expect(await banner.locator('pre').textContent()).to.contain('"command": "echo allowed-from-the-dashboard"');
    await shot(d.page, '31-approval-banner');
    await banner.getByRole('button', { name: 'Allow' }).click();
    await d.page.locator('[data-testid=events] [data-type=task_completed]').waitFor({ timeout: 60_000 });
    expect(await d.page.getByTestId('approvals').count()).to.equal(0);
    const events = (await d.h.api('GET', '/api/v1/agents/ui-gate/events?limit=200')).body.events as { type: string; payload: any }[];
    expect(events.find((e) => e.type === 'approval_decided')!.payload).to.include({ decision: 'allow', decidedBy: 'system:anonymous' });
    expect(events.find((e) => e.type === 'tool_result')!.payload.output).to.contain('allowed-from-the-dashboard');
  });

  it('Deny with a reason: the model reads the refusal and the task goes on', async () => {
    const sent = await d.h.api('PATCH', '/api/v1/agents/ui-gate', { instructions: '@bash echo never-from-the-dashboard\n@say went on' });
    expect(sent.status, sent.text).to.equal(200);
    const banner = d.page.getByTestId('approval');
    await banner.waitFor({ timeout: 60_000 });
    await banner.getByRole('textbox').fill('not from here');
    await banner.getByRole('button', { name: 'Deny' }).click();
    await d.page.locator('[data-testid=events] [data-type=task_completed]').nth(1).waitFor({ timeout: 60_000 });
    expect(await d.page.getByTestId('approvals').count()).to.equal(0);
    const events = (await d.h.api('GET', '/api/v1/agents/ui-gate/events?limit=200')).body.events as { type: string; task: number; payload: any }[];
    const result = events.find((e) => e.type === 'tool_result' && e.task === 2)!;
    expect(result.payload.isError).to.equal(true);
    expect(result.payload.output).to.contain('not from here');
    expect(events.filter((e) => e.type === 'task_completed').at(-1)!.payload.result).to.equal('went on');
  });
});
