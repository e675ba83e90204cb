// The dashboard at /ui in a real browser: Debian's Chromium driven by playwright-core, against a
// real embedded server (scripted model, real workers) the test starts. It creates an agent from
// the page, watches its events arrive without a reload, steers it and sends a second task,
// sleeps and wakes it, reads its workspace, cancels another agent's task from its page, and
// visits squads and connectors; then a server with a token file, where the page asks for a
// token. A screenshot of every page is kept under test-artifacts/dashboard/ (gitignored); the
// paths are printed.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';

import { eventually, launchChromium, shot, watchErrors } from '../support/browser.js';
import { tokenFileYaml } from '../support/tokens.js';
import { busyFor, type Harness, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const MCP_TOKEN = 'mcp-dashboard-7a1c3e5b';

describe('dashboard in Chromium (integration)', function () {
  this.timeout(180_000);
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => browser?.close());

  describe('an open embedded server', () => {
    let h: Harness;
    let mcp: TestMcpServer;
    let page: Page;
    let errors: string[];

    before(async () => {
      mcp = createTestMcpServer({ token: MCP_TOKEN });
      await mcp.start();
      h = await startHarness({ namespaceLimits: { 'team-q': { workers: 1 } } });
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      errors = watchErrors(page);
    });
    after(async () => {
      await page?.close();
      await h?.close();
      await mcp?.close();
    });
    afterEach(() => expect(errors, 'errors thrown in the page').to.deep.equal([]));

    it('serves the page at /ui and lists no agents yet', async () => {
      const res = await page.goto(`${h.url}/ui`);
      expect(res?.status()).to.equal(200);
      expect(page.url()).to.equal(`${h.url}/ui/`);
      await page.getByRole('heading', { name: 'Agents' }).waitFor();
      await page.getByText('No agents yet').waitFor();
      await shot(page, '01-agents-empty');
    });

    it('creates an agent from the form and shows its events live', async () => {
      // Marks this document: if the page reloaded, the mark would be gone.
      await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
      const form = page.getByRole('form', { name: 'Create an agent' });
      await form.locator('input[name=name]').fill('dash');
      await form.locator('textarea[name=instructions]').fill(`@write notes.txt hello from the dashboard\n@bash ${busyFor(10)}\n@say first done`);
      await form.getByRole('button', { name: 'Create and run' }).click();
      await page.waitForURL(/#\/agents\/default\/dash$/);
      const events = page.getByTestId('events');
      await events.locator('[data-type=task_started]').waitFor();
      // The Write call completes, the long Bash call shows as running until its result comes.
      await events.locator('[data-type=tool_call].tool-ok').first().waitFor();
      await events.locator('[data-type=tool_call].tool-running').waitFor();
      // The agent's fields are polled (every 2 s); the events above came over the socket.
      await eventually(async () => expect(await page.getByTestId('task-status').textContent()).to.equal('InProgress'));
      expect(await page.getByTestId('stream-state').textContent()).to.equal('live');
      expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).to.equal(42);
      const created = await h.api('GET', '/api/v1/agents/dash');
      expect(created.status).to.equal(200);
      expect(created.body).to.include({ name: 'dash', namespace: 'default', taskStatus: 'InProgress' });
      await shot(page, '02-agent-running');
    });

    it('steers the running task from the task box', async () => {
      const box = page.locator('form.task-box');
      await box.getByText('Steer the running task').waitFor();
      await box.locator('textarea').fill('Also mention the pineapples\n@echo');
      await box.getByRole('button', { name: 'Steer' }).click();
      const events = page.getByTestId('events');
      await events.locator('[data-type=user_message]').waitFor();
      const done = events.locator('[data-type=task_completed]');
      await done.waitFor({ timeout: 60_000 });
      expect(await done.textContent()).to.contain('pineapples');
      // The tool call folds its input and result: open it and read both.
      const tool = events.locator('[data-type=tool_call]').filter({ hasText: 'Bash' }).first();
      await tool.locator('summary').click();
      expect(await tool.locator('.tool-body').textContent()).to.contain('setTimeout');
      expect(await tool.getAttribute('class')).to.contain('tool-ok');
      await eventually(async () => expect(await page.getByTestId('task-status').textContent()).to.equal('Complete'));
      expect(await page.getByTestId('cost').textContent()).to.match(/^\$\d/);
      await shot(page, '03-agent-steered');
    });

    it('sends a second task from the same box', async () => {
      const box = page.locator('form.task-box');
      await box.getByText('Next task').waitFor();
      await box.locator('textarea').fill('@bash ls\n@say second done');
      await box.getByRole('button', { name: 'Send task' }).click();
      const done = page.getByTestId('events').locator('[data-type=task_completed]').nth(1);
      await done.waitFor({ timeout: 60_000 });
      expect(await done.textContent()).to.contain('Task 2 completed: second done');
      const events = (await h.api('GET', '/api/v1/agents/dash/events?limit=200')).body.events as { type: string; task: number }[];
      expect(events.filter((e) => e.type === 'task_completed').map((e) => e.task)).to.deep.equal([1, 2]);
    });

    it("shows the workspace's files, read-only", async () => {
      const files = page.getByTestId('files');
      await files.getByRole('button', { name: 'Refresh' }).click();
      await files.getByRole('button', { name: 'notes.txt' }).click();
      await eventually(async () => expect(await files.getByTestId('file-content').textContent()).to.contain('hello from the dashboard'));
      await shot(page, '04-agent-files');
    });

    it('puts the agent to sleep and wakes it', async () => {
      await eventually(async () => expect(await page.getByTestId('task-status').textContent()).to.equal('Complete'));
      await page.getByRole('button', { name: 'Sleep', exact: true }).click();
      await eventually(async () => expect(await page.getByTestId('agent-status').textContent()).to.equal('Sleeping'), { timeoutMs: 30_000 });
      expect((await h.api('GET', '/api/v1/agents/dash')).body).to.include({ status: 'Sleeping', lifecycle: 'Sleep' });
      await shot(page, '05-agent-sleeping');
      await page.getByRole('button', { name: 'Wake', exact: true }).click();
      await eventually(async () => expect(await page.getByTestId('agent-status').textContent()).to.not.equal('Sleeping'), { timeoutMs: 30_000 });
      expect((await h.api('GET', '/api/v1/agents/dash')).body.lifecycle).to.equal('Wake');
      await shot(page, '06-agent-awake');
    });

    it('takes a checkpoint and starts a new agent from it, which opens with the files and the conversation', async () => {
      const panel = page.getByTestId('checkpoints');
      await panel.getByText('No checkpoints.').waitFor();
      await panel.locator('input[name=checkpoint]').fill('ui-snap');
      await panel.getByRole('button', { name: 'Take checkpoint' }).click();
      const row = panel.locator('tr[data-checkpoint=ui-snap]');
      await eventually(async () => expect(await row.locator('.badge').textContent()).to.equal('Ready'), { timeoutMs: 30_000 });
      await shot(page, '06b-agent-checkpoint');
      await row.getByRole('button', { name: 'New agent from it' }).click();
      const fork = row.getByRole('form', { name: 'New agent from ui-snap' });
      await fork.locator('input[name=name]').fill('dash-fork');
      await fork.locator('textarea[name=instructions]').fill('@bash cat notes.txt\n@say forked');
      await fork.getByRole('button', { name: 'Start' }).click();
      await page.waitForURL(/#\/agents\/default\/dash-fork$/);
      const events = page.getByTestId('events');
      await events.locator('[data-type=task_completed]').waitFor({ timeout: 60_000 });
      const agent = (await h.api('GET', '/api/v1/agents/dash-fork')).body;
      expect(agent).to.include({ fromCheckpoint: 'dash/ui-snap', taskStatus: 'Complete' });
      const evs = (await h.api('GET', '/api/v1/agents/dash-fork/events')).body.events as { type: string; payload: { output?: string } }[];
      expect(evs.find((e) => e.type === 'tool_result')?.payload.output).to.equal('hello from the dashboard');
      await shot(page, '06c-forked-agent');
    });

    it("cancels the running task with the agent page's Cancel task button", async () => {
      const sent = await h.api('POST', '/api/v1/agents', { name: 'slow', model: 'claude-haiku-4-5', instructions: `@bash ${busyFor(60)}\n@say never` });
      expect(sent.status, sent.text).to.equal(201);
      await page.goto(`${h.url}/ui/#/agents/default/slow`);
      const events = page.getByTestId('events');
      await events.locator('[data-type=tool_call].tool-running').waitFor({ timeout: 60_000 });
      await eventually(async () => expect(await page.getByTestId('task-status').textContent()).to.equal('InProgress'));
      await page.getByRole('button', { name: 'Cancel task' }).click();
      const cancelled = events.locator('[data-type=task_cancelled]');
      await cancelled.waitFor({ timeout: 30_000 });
      expect(await cancelled.textContent()).to.contain('Task 1 cancelled');
      // Its Bash call never got a result: the row is closed with the task, not left running.
      expect(await events.locator('[data-type=tool_call].tool-running').count()).to.equal(0);
      const tool = events.locator('[data-type=tool_call]').first();
      expect(await tool.getAttribute('class')).to.contain('tool-cancelled');
      expect(await tool.locator('summary .badge').textContent()).to.equal('cancelled');
      await eventually(async () => expect(await page.getByTestId('task-status').textContent()).to.equal('Cancelled'));
      expect(await page.getByRole('button', { name: 'Cancel task' }).isDisabled()).to.equal(true);
      expect((await h.api('GET', '/api/v1/agents/slow')).body).to.include({ taskStatus: 'Cancelled' });
      const history = (await h.api('GET', '/api/v1/agents/slow/events')).body.events as { type: string }[];
      expect(history.map((e) => e.type))
        .to.include('task_cancelled')
        .and.not.include('task_completed');
      await shot(page, '07-agent-cancelled');
    });

    it('lists agents by namespace with model, cost and last activity, and charts cost over time in each namespace', async () => {
      const other = await h.api('POST', '/api/v1/agents', { name: 'helper', namespace: 'team-b', instructions: '@say hi' });
      expect(other.status).to.equal(201);
      await page.getByRole('link', { name: '← Agents' }).click();
      const row = page.getByTestId('namespace-default').locator('tr[data-agent=dash]');
      await row.waitFor();
      await eventually(async () => expect(await row.locator('td.cost').textContent()).to.match(/^\$\d/));
      expect(await row.textContent()).to.match(/ago/);
      // The model column: the server's default for dash (created without one), the chosen one for slow.
      expect(await row.locator('td.model').textContent()).to.equal('claude-sonnet-4-5');
      const slow = page.getByTestId('namespace-default').locator('tr[data-agent=slow]');
      expect(await slow.locator('td.model').textContent()).to.equal('claude-haiku-4-5');
      expect(await slow.locator('td.task-status').textContent()).to.equal('Cancelled');
      const teamB = page.getByTestId('namespace-team-b');
      await eventually(async () => expect(await teamB.locator('tr[data-agent=helper] td.task-status').textContent()).to.equal('Complete'), {
        timeoutMs: 60_000,
      });
      await eventually(async () => expect(await teamB.locator('tr[data-agent=helper] td.cost').textContent()).to.match(/^\$\d/));
      // Each namespace charts its own completed tasks.
      for (const ns of ['default', 'team-b']) {
        const chart = page.getByTestId(`cost-chart-${ns}`);
        await eventually(async () => expect(await chart.textContent()).to.not.contain('No completed tasks yet'));
        expect((await chart.locator('canvas').boundingBox())?.height ?? 0).to.be.greaterThan(100);
      }
      await shot(page, '08-agents-list');
    });

    it("shows a queued agent's place in its namespace's line (team-q runs one worker at a time)", async () => {
      const post = (name: string, instructions: string) => h.api('POST', '/api/v1/agents', { name, namespace: 'team-q', instructions });
      expect((await post('q-hold', `@bash ${busyFor(120)}\n@say held`)).status).to.equal(201);
      await eventually(async () => expect((await h.api('GET', '/api/v1/agents/q-hold?namespace=team-q')).body.status).to.equal('Running'), {
        timeoutMs: 60_000,
      });
      for (const n of ['q-one', 'q-two']) expect((await post(n, `@say ${n}`)).status).to.equal(201);
      await page.reload();
      const ns = page.getByTestId('namespace-team-q');
      await eventually(async () => expect(await ns.locator('tr[data-agent=q-two] .badge').textContent()).to.equal('Queued #2'), { timeoutMs: 60_000 });
      expect(await ns.locator('tr[data-agent=q-one] .badge').textContent()).to.equal('Queued #1');
      await shot(page, '08b-agents-queued');
      for (const n of ['q-hold', 'q-one', 'q-two']) expect((await h.api('DELETE', `/api/v1/agents/${n}?namespace=team-q`)).status).to.equal(200);
    });

    it('shows squads with their members, and connectors with their agents and tools', async () => {
      const squad = await h.api('POST', '/api/v1/squads', {
        name: 'crew',
        members: [
          { name: 'crew-a', spec: { instructions: '@say a' } },
          { name: 'crew-b', spec: { instructions: '@say b' } },
        ],
      });
      expect(squad.status, squad.text).to.equal(201);
      expect((await h.api('POST', '/api/v1/secrets', { name: 'echo-token', data: { token: MCP_TOKEN } })).status).to.equal(201);
      const conn = await h.api('POST', '/api/v1/connectors', {
        name: 'echo',
        displayName: 'Echo server',
        url: mcp.url,
        authSecretName: 'echo-token',
        authSecretKey: 'token',
      });
      expect(conn.status, conn.text).to.equal(201);
      expect((await h.api('PATCH', '/api/v1/agents/dash', { connectors: ['echo'] })).status).to.equal(200);

      await page.getByRole('link', { name: 'Squads' }).click();
      const card = page.locator('[data-squad=crew]');
      await card.waitFor();
      await eventually(async () => expect(await card.locator('h2 .badge').textContent()).to.equal('Running'), { timeoutMs: 60_000 });
      expect(await card.locator('tbody tr').count()).to.equal(2);
      expect(await card.textContent()).to.contain('agentplane.io/squad=crew');
      await shot(page, '09-squads');

      await page.getByRole('link', { name: 'Connectors' }).click();
      const c = page.locator('[data-connector=echo]');
      await c.waitFor();
      await eventually(async () => expect(await c.textContent()).to.contain('dash'));
      await c.locator('details.tools summary').click();
      await c.getByText('Echoes the text back.').waitFor();
      await shot(page, '10-connectors');
    });
  });

  describe('a server with a token file', () => {
    const TOKEN = 'dashboard-token-4c6e8a0b2d';
    const TEAM_TOKEN = 'team-a-token-9d7b5f3e1c'; // namespace team-a only
    let h: Harness;
    let dir: string;
    let page: Page;
    let errors: string[];

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'agentplane-dash-'));
      const file = join(dir, 'tokens.yaml');
      writeFileSync(
        file,
        tokenFileYaml([
          { user: 'dash', token: TOKEN },
          { user: 'alice', token: TEAM_TOKEN, namespaces: ['team-a'] },
        ]),
      );
      h = await startHarness({ tokenFile: file });
      const created = await h.api('POST', '/api/v1/agents', { name: 'guarded', instructions: '@say guarded hello' }, { authorization: `Bearer ${TOKEN}` });
      expect(created.status).to.equal(201);
      const teamA = await h.api(
        'POST',
        '/api/v1/agents',
        { name: 'alices', namespace: 'team-a', instructions: '@say hi' },
        { authorization: `Bearer ${TEAM_TOKEN}` },
      );
      expect(teamA.status).to.equal(201);
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      errors = watchErrors(page);
    });
    after(async () => {
      await page?.close();
      await h?.close();
      rmSync(dir, { recursive: true, force: true });
    });
    afterEach(() => expect(errors, 'errors thrown in the page').to.deep.equal([]));

    it('serves the page without a token, and asks for one when the API answers 401', async () => {
      expect((await h.api('GET', '/api/v1/agents')).status).to.equal(401);
      const res = await page.goto(`${h.url}/ui/`);
      expect(res?.status()).to.equal(200);
      const prompt = page.getByRole('form', { name: 'Sign in' });
      await prompt.waitFor();
      await shot(page, '11-token-prompt');
    });

    it('refuses a wrong token and asks again', async () => {
      const prompt = page.getByRole('form', { name: 'Sign in' });
      await prompt.locator('input[name=token]').fill('not-the-token');
      await prompt.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('The server refused the token.').waitFor();
    });

    it('lets a good token in: kept in sessionStorage, sent as Bearer and as the WebSocket subprotocol', async () => {
      const prompt = page.getByRole('form', { name: 'Sign in' });
      await prompt.locator('input[name=token]').fill(TOKEN);
      await prompt.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('namespace-default').locator('tr[data-agent=guarded]').waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('agentplane.token'))).to.equal(TOKEN);
      await shot(page, '12-token-accepted');
      // The agent page's live stream authenticates with the subprotocol (browsers cannot send headers).
      await page.getByRole('link', { name: 'guarded' }).click();
      await page.getByTestId('events').locator('[data-type=task_completed]').waitFor({ timeout: 60_000 });
      await eventually(async () => expect(await page.getByTestId('stream-state').textContent()).to.equal('live'));
      await shot(page, '13-token-agent');
    });

    it('with a token for one namespace, says to pick it, then lists that namespace', async () => {
      await page.getByRole('button', { name: 'Forget token' }).click();
      await page.getByRole('link', { name: 'Agents', exact: true }).click();
      const prompt = page.getByRole('form', { name: 'Sign in' });
      await prompt.locator('input[name=token]').fill(TEAM_TOKEN);
      await prompt.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Enter a namespace you may read').waitFor();
      const scope = page.getByRole('form', { name: 'Namespace' }).locator('input');
      await scope.fill('team-a');
      await scope.press('Enter');
      await page.getByTestId('namespace-team-a').locator('tr[data-agent=alices]').waitFor();
      expect(await page.getByTestId('namespace-default').count()).to.equal(0);
      expect(await page.locator('form[aria-label="Create an agent"] input[name=namespace]').inputValue()).to.equal('team-a');
      await shot(page, '14-token-one-namespace');
    });
  });
});
