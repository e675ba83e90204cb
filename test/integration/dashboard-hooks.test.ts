// Triggers and webhooks in the dashboard, in Chromium against a real embedded server (scripted
// model, real workers): the Hooks page shows a trigger's hook path, agent and the result of a real
// signed delivery, and a webhook's counts with the failures of a receiver on loopback that
// answers 500.

import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { runTask, waitAgent } from '../support/agents.js';
import { eventually, shot, useDashboard } from '../support/browser.js';

describe('dashboard: triggers and webhooks (integration)', function () {
  this.timeout(180_000);
  const d = useDashboard();
  let receiver: Server;
  before(async () => {
    receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(500).end()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('the Hooks page: a trigger with its last delivery, a webhook with its failures', async () => {
    expect((await d.h.api('POST', '/api/v1/secrets', { name: 'hook-key', data: { secret: 'dashboard-secret' } })).status).to.equal(201);
    await runTask(d.h, 'dash', '@say ready');
    const t = await d.h.api('POST', '/api/v1/triggers', { name: 'gh', agent: 'dash', secretRef: { name: 'hook-key' }, instructions: '@say PR {{number}}' });
    expect(t.status, t.text).to.equal(201);
    const body = JSON.stringify({ number: 5 });
    const sig = `sha256=${createHmac('sha256', 'dashboard-secret').update(body).digest('hex')}`;
    const delivered = await d.h.api('POST', '/api/v1/triggers/gh/hook', body, { 'x-hub-signature-256': sig, 'x-github-delivery': 'd-1' });
    expect(delivered.status, delivered.text).to.equal(202);
    await waitAgent(d.h, 'dash', (a) => a.taskStatus === 'Complete' && a.lastTaskMessage === 'PR 5', 'the triggered task');
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
    const w = await d.h.api('POST', '/api/v1/webhooks', {
      name: 'down',
      url,
      eventTypes: ['task_completed'],
      agents: ['dash'],
      secretRef: { name: 'hook-key' },
    });
    expect(w.status, w.text).to.equal(201);
    await runTask(d.h, 'dash', '@say again');

    await d.page.goto(`${d.h.url}/ui/#/hooks`);
    const card = d.page.locator('[data-trigger=gh]');
    await card.waitFor({ timeout: 20_000 });
    expect(await card.textContent())
      .to.contain('POST /api/v1/triggers/gh/hook?namespace=default')
      .and.to.contain('X-Hub-Signature-256');
    expect(await card.getByTestId('trigger-last').textContent()).to.equal('Started');
    expect(await card.getByTestId('trigger-counts').textContent()).to.contain('Started 1');
    expect(await card.locator('a[href="#/agents/default/dash"]').count()).to.equal(1);
    const hook = d.page.locator('[data-webhook=down]');
    await eventually(async () => expect(await hook.getByTestId('webhook-failures').textContent()).to.contain('HTTP 500'), { timeoutMs: 30_000 });
    expect(await hook.textContent())
      .to.contain(url)
      .and.to.contain('task_completed of dash');
    expect(await hook.getByTestId('webhook-counts').textContent()).to.match(/^0 delivered, [1-9]\d* failed attempts\./);
    await shot(d.page, 'hooks-01-page');
    expect(d.errors).to.deep.equal([]);
  });
});
