// The dashboard's messages in Chromium against a real embedded server (scripted model, real
// workers): the agent page's "Send message" form delivers a message (here, a new task on the idle
// agent) and says how; the event list shows `message` events as "from → to", on the receiver and,
// marked sent, on a sending agent (docs/messages.md).

import { expect } from 'chai';

import { shot, useDashboard } from '../support/browser.js';
import { eventually } from '../support/harness.js';

describe('dashboard in Chromium: messages (integration)', function () {
  this.timeout(180_000);
  const d = useDashboard();

  it('sends a message from the agent page, says how it went, and shows the message event', async () => {
    expect((await d.h.api('POST', '/api/v1/agents', { name: 'ui-inbox', role: 'worker', instructions: '@say ready' })).status).to.equal(201);
    await d.page.goto(`${d.h.url}/ui/#/agents/default/ui-inbox`);
    await d.page.locator('[data-testid=events] [data-type=task_completed]').waitFor({ timeout: 60_000 });
    const box = d.page.getByTestId('message-box');
    await box.locator('textarea').fill('hello from the page\n@say got the page message');
    await box.locator('input[name=from]').fill('ops');
    await box.getByRole('button', { name: 'Send message' }).click();
    await eventually(async () => (await d.page.getByTestId('message-result').textContent()) === 'Delivered as task 2.', 30_000, 'the answer shown');
    const row = d.page.locator('[data-testid=events] [data-type=message]');
    await row.waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('message-route').textContent()).to.equal('ops → ui-inbox');
    expect(await row.textContent()).to.contain('hello from the page');
    await d.page.locator('[data-testid=events] [data-type=task_completed]').nth(1).waitFor({ timeout: 60_000 });
    await shot(d.page, '40-message-sent');
    const events = (await d.h.api('GET', '/api/v1/agents/ui-inbox/events?limit=200')).body.events as { type: string; task: number; payload: any }[];
    expect(events.find((e) => e.type === 'message')!.payload).to.deep.equal({
      from: 'ops',
      to: 'ui-inbox',
      text: 'hello from the page\n@say got the page message',
      direction: 'received',
      delivery: 'task',
    });
    expect(events.filter((e) => e.type === 'task_completed').at(-1)!.payload.result).to.equal('got the page message');
  });

  it("shows a sending agent's message as sent, on its own page", async () => {
    expect((await d.h.api('POST', '/api/v1/agents', { name: 'ui-sender', role: 'worker', instructions: '@say ready' })).status).to.equal(201);
    await eventually(
      async () => {
        const evs = (await d.h.api('GET', '/api/v1/agents/ui-sender/events')).body.events as { type: string }[];
        return evs.some((e) => e.type === 'task_completed');
      },
      60_000,
      'ui-sender ready',
    );
    const sent = await d.h.api('POST', '/api/v1/agents/ui-inbox/messages', { from: 'ui-sender', text: 'a word from a peer' });
    expect(sent.status, sent.text).to.equal(200);
    await d.page.goto(`${d.h.url}/ui/#/agents/default/ui-sender`);
    const row = d.page.locator('[data-testid=events] [data-type=message]');
    await row.waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('message-route').textContent()).to.equal('ui-sender → ui-inbox');
    expect(await row.textContent()).to.contain('(sent)');
  });
});
