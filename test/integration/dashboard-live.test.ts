// The dashboard in Chromium against a real embedded server (scripted model, real workers), for
// what issue 29 found in it: tool rows that name what they run; the status header and the
// workspace following the event stream instead of a poll; a missing or deleted agent's page;
// no sideways scrolling at 390 px; and the icon. dashboard.test.ts has the main tour (and the
// cancelled task's tool row).

import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';

import { eventually, launchChromium, shot, watchErrors } from '../support/browser.js';
import { busyFor, type Harness, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const MCP_TOKEN = 'mcp-dashboard-live-2e4f6a8c';

/** The agent page's action buttons, which a gone agent's page disables. */
const ACTIONS = ['Cancel task', 'Sleep', 'Wake'];

describe('dashboard in Chromium: live status, tool rows, gone agents, narrow screens (integration)', function () {
  this.timeout(180_000);
  let browser: Browser;
  let h: Harness;
  let mcp: TestMcpServer;
  let page: Page;
  let errors: string[];
  /** Every WebSocket the page opened, by URL. */
  const sockets: string[] = [];

  before(async () => {
    browser = await launchChromium();
    mcp = createTestMcpServer({ token: MCP_TOKEN });
    await mcp.start();
    h = await startHarness();
    expect((await h.api('POST', '/api/v1/secrets', { name: 'echo-token', data: { token: MCP_TOKEN } })).status).to.equal(201);
    const conn = await h.api('POST', '/api/v1/connectors', { name: 'echo', url: mcp.url, authSecretName: 'echo-token', authSecretKey: 'token' });
    expect(conn.status, conn.text).to.equal(201);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    errors = watchErrors(page);
    page.on('websocket', (ws) => sockets.push(ws.url()));
  });
  after(async () => {
    await page?.close();
    await browser?.close();
    await h?.close();
    await mcp?.close();
  });
  afterEach(() => expect(errors, 'errors thrown in the page').to.deep.equal([]));

  it('serves an icon: /favicon.ico and the icon the page names are images, and loading the page fails no request', async () => {
    const failed: string[] = [];
    const consoleErrors: string[] = [];
    const onResponse = (r: { status(): number; url(): string }): void => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    };
    const onConsole = (m: { type(): string; text(): string }): void => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    };
    page.on('response', onResponse);
    page.on('console', onConsole);
    try {
      await page.goto(`${h.url}/ui/`);
      await page.getByText('No agents yet').waitFor();
      // Headless Chromium fetches no icon by itself (a desktop one does, and logged the 404): ask
      // for the one the page names, as it would.
      const icon = await page.evaluate(async () => {
        const link = document.querySelector<HTMLLinkElement>('link[rel~=icon]');
        const res = await fetch(link?.href ?? '/favicon.ico');
        return { status: res.status, type: res.headers.get('content-type'), named: !!link };
      });
      expect(icon).to.deep.include({ status: 200, named: true });
      expect(icon.type).to.match(/^image\//);
      expect(failed, 'responses >= 400 while loading the page').to.deep.equal([]);
      expect(consoleErrors, 'console errors while loading the page').to.deep.equal([]);
    } finally {
      page.off('response', onResponse);
      page.off('console', onConsole);
    }
    // Browsers that look for it at the root (and other pages of the server) find it too.
    const direct = await fetch(`${h.url}/favicon.ico`);
    expect(direct.status).to.equal(200);
    expect(direct.headers.get('content-type')).to.match(/^image\//);
    expect((await direct.arrayBuffer()).byteLength).to.be.greaterThan(0);
  });

  it("names what each tool runs, and follows the task's end in the header and the workspace at once", async () => {
    const sent = await h.api('POST', '/api/v1/agents', {
      name: 'writer',
      connectors: ['echo'],
      instructions: `@bash ${busyFor(8)}\n@tool mcp__echo__echo {"text":"hello mcp"}\n@write out.txt written by the task\n@say wrote it`,
    });
    expect(sent.status, sent.text).to.equal(201);
    await page.goto(`${h.url}/ui/#/agents/default/writer`);
    const events = page.getByTestId('events');
    const files = page.getByTestId('files');
    const tools = events.locator('[data-type=tool_call]');
    await tools.first().waitFor({ timeout: 60_000 });
    // The Bash row names its command. The workspace was read (at load) before the task wrote.
    expect(await tools.first().locator('summary').textContent()).to.contain('node -e');
    await files.locator('ul.entries, p.muted').first().waitFor();
    expect(await files.getByRole('button', { name: 'out.txt' }).count()).to.equal(0);
    await shot(page, '21-tool-running');

    // The header changes in the same update that shows the task's end (no wait for a poll).
    const atEnd = await textWhenShown('[data-testid=events] [data-type=task_completed]', 1, '[data-testid=task-status]');
    expect(atEnd, 'task status when task_completed is shown').to.equal('Complete');
    // The workspace is read again when the task ends: the file is listed without Refresh.
    await files.getByRole('button', { name: 'out.txt' }).waitFor({ timeout: 10_000 });

    // The MCP tool's row names the tool and its input; Write names its file; outputs fold out.
    expect(await tools.count()).to.equal(3);
    const mcpRow = tools.nth(1);
    const mcpSummary = await mcpRow.locator('summary').textContent();
    expect(mcpSummary).to.contain('echo').and.to.contain('hello mcp');
    expect(await tools.nth(2).locator('summary').textContent()).to.contain('out.txt');
    await mcpRow.locator('summary').click();
    expect(await mcpRow.locator('.tool-body').textContent()).to.contain('echo: hello mcp');
    await shot(page, '22-tools-named');

    // A task sent by another client: the header says InProgress as its task_started shows.
    expect((await h.api('PATCH', '/api/v1/agents/writer', { instructions: `@bash ${busyFor(3)}\n@say again` })).status).to.equal(200);
    const atStart = await textWhenShown('[data-testid=events] [data-type=task_started]', 2, '[data-testid=task-status]');
    expect(atStart, 'task status when the second task_started is shown').to.equal('InProgress');
    await events.locator('[data-type=task_completed]').nth(1).waitFor({ timeout: 60_000 });
  });

  it('says a missing agent is not found, disables its actions and stops trying its stream', async () => {
    const before = sockets.length;
    await page.goto(`${h.url}/ui/#/agents/default/nobody`);
    const gone = page.getByTestId('agent-gone');
    await gone.waitFor();
    expect(await gone.textContent()).to.contain('not found');
    for (const name of ACTIONS) expect(await page.getByRole('button', { name, exact: true }).isDisabled(), name).to.equal(true);
    expect(await page.locator('form.task-box button[type=submit]').isDisabled()).to.equal(true);
    await noMoreSockets(before); // the history's 404 says it all: no socket is even tried
    await shot(page, '23-agent-not-found');
  });

  it('says an agent deleted while its page is open is gone, and stops its stream', async () => {
    expect((await h.api('POST', '/api/v1/agents', { name: 'doomed', instructions: '@say bye' })).status).to.equal(201);
    await page.goto(`${h.url}/ui/#/agents/default/doomed`);
    await page.getByTestId('events').locator('[data-type=task_completed]').waitFor({ timeout: 60_000 });
    await eventually(async () => expect(await page.getByTestId('stream-state').textContent()).to.equal('live'));
    expect(await page.getByRole('button', { name: 'Sleep', exact: true }).isDisabled()).to.equal(false);
    const opened = sockets.length;
    const del = await h.api('DELETE', '/api/v1/agents/doomed');
    expect(del.status, del.text).to.be.oneOf([200, 202]);
    const gone = page.getByTestId('agent-gone');
    await gone.waitFor({ timeout: 30_000 });
    expect(await gone.textContent()).to.contain('deleted');
    for (const name of ACTIONS) expect(await page.getByRole('button', { name, exact: true }).isDisabled(), name).to.equal(true);
    await noMoreSockets(opened);
    await shot(page, '24-agent-deleted');
  });

  it('fits a 390 px wide screen: no page scrolls sideways', async () => {
    const narrow = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const narrowErrors = watchErrors(narrow);
    try {
      const pages: [string, string, string][] = [
        ['#/agents', 'tr[data-agent=writer]', '25-narrow-agents'],
        ['#/agents/default/writer', '[data-type=task_completed]', '26-narrow-agent'],
        ['#/squads', 'h1', '27-narrow-squads'],
        ['#/connectors', '[data-connector=echo]', '28-narrow-connectors'],
      ];
      for (const [route, ready, name] of pages) {
        await narrow.goto(`${h.url}/ui/${route}`);
        await narrow.locator(ready).first().waitFor({ timeout: 30_000 });
        // Long content too: an open tool row (its command and output), the connector's tools.
        if (route.includes('writer')) await narrow.locator('[data-type=tool_call] summary').first().click();
        const size = await narrow.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
        await shot(narrow, name);
        expect(size.scroll, `${route}: scrollWidth ${size.scroll} > clientWidth ${size.client}`).to.be.at.most(size.client);
      }
      expect(narrowErrors).to.deep.equal([]);
    } finally {
      await narrow.close();
    }
  });

  /**
   * The text of `read` at the moment `count` elements match `selector`: read in the page by a
   * MutationObserver, whose callback runs right after the DOM change that showed them (one React
   * commit), before anything else can change the page.
   */
  async function textWhenShown(selector: string, count: number, read: string, timeoutMs = 60_000): Promise<string> {
    const seen = page.evaluate(
      ([sel, n, r]) =>
        new Promise<string>((resolve) => {
          const check = (): boolean => {
            if (document.querySelectorAll(sel).length < n) return false;
            resolve(document.querySelector(r)?.textContent ?? '');
            return true;
          };
          if (check()) return;
          const observer = new MutationObserver(() => {
            if (check()) observer.disconnect();
          });
          observer.observe(document.body, { childList: true, subtree: true, characterData: true });
        }),
      [selector, count, read] as const,
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${count} × ${selector}`)), timeoutMs);
    });
    try {
      return await Promise.race([seen, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The page opens no more WebSockets than `max` from now on. A page that kept reconnecting would
   * open one a second; watching for 2.5 s catches it (a negative cannot be waited for otherwise).
   */
  async function noMoreSockets(max: number): Promise<void> {
    const deadline = Date.now() + 2500;
    while (Date.now() < deadline) {
      expect(sockets.length, `WebSockets opened: ${sockets.slice(-3).join(', ')}`).to.be.at.most(max);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});
