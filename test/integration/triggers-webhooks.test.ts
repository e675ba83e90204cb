// Triggers and webhooks (docs/triggers-and-webhooks.md) with real workers and the scripted model,
// on a server that requires bearer tokens: a GitHub-style signed delivery to a Trigger's hook
// (which carries no token) starts a task whose instructions the template filled; a bad
// signature and a replayed delivery id start nothing, also after a restart. A Webhook's receiver,
// a real HTTP server on loopback, gets signed deliveries (checked here as a receiver would) in
// order per agent, and after answering 500 twice, the retries.

import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { tokenFileYaml } from '../support/tokens.js';
import { cliFor } from '../support/cli.js';

const TOKEN = 'trigger-test-admin-token-5c1f0a';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const B = '/apis/agentplane.io/v1alpha1/namespaces/default';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  answered: number;
}

describe('triggers and webhooks (integration)', function () {
  this.timeout(240_000);
  let h: Harness;
  let dir: string;
  const api = (method: string, path: string, body?: unknown) => h.api(method, path, body, AUTH);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-hooks-'));
    const tokenFile = join(dir, 'tokens.yaml');
    writeFileSync(tokenFile, tokenFileYaml([{ user: 'admin', token: TOKEN }]));
    h = await startHarness({ tokenFile });
  });
  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The events of an agent's task once it ended (polled: the server wants a token, also on WebSockets). */
  function taskEnd(agent: string, task: number): Promise<AgentEvent[]> {
    return eventually(
      async () => {
        const r = await api('GET', `/api/v1/agents/${agent}/events?namespace=default&limit=200`);
        const evs = ((r.body?.events ?? []) as AgentEvent[]).filter((e) => e.task === task);
        return evs.some((e) => ['task_completed', 'error'].includes(e.type)) ? evs : undefined;
      },
      45_000,
      `${agent}: end of task ${task}`,
    );
  }

  describe('Trigger', () => {
    const SECRET = 'gh-shared-secret-7d2e';
    const payload = JSON.stringify({ action: 'opened', pull_request: { number: 42, title: 'Fix the flaky test' } });
    const sign = (body: string, secret = SECRET): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const hook = (body: string, headers: Record<string, string>) =>
      h.api('POST', '/api/v1/triggers/gh/hook?namespace=default', body, { 'content-type': 'application/json', ...headers });

    before(async () => {
      expect((await api('POST', '/api/v1/secrets', { name: 'gh-hook', data: { secret: SECRET } })).status).to.equal(201);
      const first = await api('POST', '/api/v1/agents', { name: 'reviewer', instructions: '@say ready' });
      expect(first.status).to.equal(201);
      await taskEnd('reviewer', 1);
      const t = await api('POST', `${B}/triggers`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Trigger',
        metadata: { name: 'gh' },
        spec: {
          agent: 'reviewer',
          secretRef: { name: 'gh-hook' },
          instructions: '@say Review PR {{pull_request.number}}: {{pull_request.title}}{{missing.field}}',
        },
      });
      expect(t.status, JSON.stringify(t.body)).to.equal(201);
      // GitHub's defaults filled in.
      expect(t.body.spec.signature).to.deep.equal({ header: 'X-Hub-Signature-256', algorithm: 'sha256', prefix: 'sha256=' });
      expect(t.body.spec.deliveryIdHeader).to.equal('X-GitHub-Delivery');
      expect(t.body.spec.secretRef.key).to.equal('secret');
    });

    it('refuses a template with a broken placeholder (422 naming spec.instructions)', async () => {
      const r = await api('POST', `${B}/triggers`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Trigger',
        metadata: { name: 'broken' },
        spec: { agent: 'reviewer', secretRef: { name: 'gh-hook' }, instructions: 'Review {{ pull_request.number + 1 }}' },
      });
      expect(r.status).to.equal(422);
      expect(JSON.stringify(r.body)).to.contain('spec.instructions');
    });

    it('a signed delivery without a bearer token starts a task with the filled template', async () => {
      const r = await hook(payload, { 'x-hub-signature-256': sign(payload), 'x-github-delivery': 'delivery-1' });
      expect(r.status, r.text).to.equal(202);
      expect(r.body).to.include({ result: 'Started', agent: 'reviewer', task: 2, deliveryId: 'delivery-1' });
      const evs = await taskEnd('reviewer', 2);
      const done = evs.find((e) => e.type === 'task_completed');
      expect((done?.payload as { result: string }).result).to.equal('Review PR 42: Fix the flaky test');
    });

    it('a bad or missing signature is 401 and starts nothing', async () => {
      const wrong = await hook(payload, { 'x-hub-signature-256': sign(payload, 'not-the-secret'), 'x-github-delivery': 'delivery-2' });
      expect(wrong.status).to.equal(401);
      expect(wrong.body.result).to.equal('BadSignature');
      const none = await hook(payload, { 'x-github-delivery': 'delivery-3' });
      expect(none.status).to.equal(401);
      const tampered = await hook(payload.replace('42', '43'), { 'x-hub-signature-256': sign(payload), 'x-github-delivery': 'delivery-4' });
      expect(tampered.status).to.equal(401);
      expect((await api('GET', `${B}/agents/reviewer`)).body.spec.task).to.equal(2);
      const t = await api('GET', `${B}/triggers/gh`);
      expect(t.body.status.counts).to.include({ Started: 1, BadSignature: 3 });
      expect(t.body.status.lastDelivery).to.include({ id: 'delivery-4', result: 'BadSignature' });
    });

    it('a replayed delivery id starts nothing, also after a restart (202 Duplicate)', async () => {
      const again = await hook(payload, { 'x-hub-signature-256': sign(payload), 'x-github-delivery': 'delivery-1' });
      expect(again.status).to.equal(202);
      expect(again.body.result).to.equal('Duplicate');
      await h.restart();
      const afterRestart = await hook(payload, { 'x-hub-signature-256': sign(payload), 'x-github-delivery': 'delivery-1' });
      expect(afterRestart.body.result).to.equal('Duplicate');
      const t = await api('GET', `${B}/triggers/gh`);
      expect(t.body.status.counts).to.include({ Started: 1, Duplicate: 2 });
      expect(t.body.status.seenDeliveries).to.deep.equal(['delivery-1']);
      const agents = await api('GET', `${B}/agents/reviewer`);
      expect(agents.body.spec.task).to.equal(2);
    });

    it('the REST mirror lists, patches and refuses with 400 naming the field', async () => {
      const list = await api('GET', '/api/v1/triggers?namespace=default');
      expect(list.status).to.equal(200);
      const gh = list.body.triggers.find((t: { name: string }) => t.name === 'gh');
      expect(gh).to.include({ agent: 'reviewer', hookPath: '/api/v1/triggers/gh/hook?namespace=default' });
      expect(gh.lastDelivery.result).to.be.a('string');
      const bad = await api('POST', '/api/v1/triggers', { name: 'nope', agent: 'reviewer', secretRef: { name: 'gh-hook' }, instructions: 'x {{ a b }}' });
      expect(bad.status).to.equal(400);
      expect(JSON.stringify(bad.body)).to.contain('instructions');
      const missing = await api('POST', '/api/v1/triggers', { name: 'nope', agent: 'reviewer', instructions: 'x' });
      expect(missing.status).to.equal(400);
      expect(JSON.stringify(missing.body)).to.contain('secretRef');
      expect(
        (await api('POST', '/api/v1/triggers', { name: 'nosecret', agent: 'reviewer', secretRef: { name: 'absent' }, instructions: '@say x' })).status,
      ).to.equal(201);
      const unsigned = await h.api('POST', '/api/v1/triggers/nosecret/hook', payload, { 'x-hub-signature-256': sign(payload) });
      expect(unsigned.status).to.equal(401);
      expect(unsigned.body.result).to.equal('SecretMissing');
      expect((await api('DELETE', '/api/v1/triggers/nosecret')).status).to.equal(200);
      const made = await api('POST', '/api/v1/triggers', {
        name: 'slack',
        agent: 'reviewer',
        secretRef: { name: 'gh-hook', key: 'secret' },
        instructions: '@say {{text}}',
      });
      expect(made.status, made.text).to.equal(201);
      const patched = await api('PATCH', '/api/v1/triggers/slack', { signature: { header: 'X-Signature' }, deliveryIdHeader: 'X-Request-Id' });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body.signature).to.deep.equal({ header: 'X-Signature', algorithm: 'sha256', prefix: 'sha256=' });
      expect((await api('DELETE', '/api/v1/triggers/slack')).status).to.equal(200);
      expect((await api('GET', '/api/v1/triggers/slack')).status).to.equal(404);
    });

    it('only the hook is served without a token: the trigger itself and other methods need one', async () => {
      expect((await h.api('GET', `${B}/triggers/gh`)).status).to.equal(401);
      expect((await h.api('GET', '/api/v1/agents')).status).to.equal(401);
      // Another method on the hook's path is no hook: refused (405 from the router, or 401).
      expect([401, 405]).to.include((await h.api('GET', '/api/v1/triggers/gh/hook')).status);
      expect((await h.api('PATCH', '/api/v1/triggers/gh', { agent: 'other' })).status).to.equal(401);
      expect((await h.api('DELETE', '/api/v1/triggers/gh')).status).to.equal(401);
      expect((await h.api('GET', '/api/v1/triggers')).status).to.equal(401);
    });
  });

  describe('Webhook', () => {
    let receiver: Server;
    const received: Received[] = [];
    let failuresLeft = 2;
    const key = randomBytes(24);

    before(async () => {
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const answered = failuresLeft-- > 0 ? 500 : 200;
          received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
          res.writeHead(answered).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      expect((await api('POST', '/api/v1/secrets', { name: 'wh-key', data: { secret: `whsec_${key.toString('base64')}` } })).status).to.equal(201);
      const w = await api('POST', `${B}/webhooks`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Webhook',
        metadata: { name: 'events-out' },
        spec: { url, eventTypes: ['task_started', 'task_completed'], agents: ['hooked'], secretRef: { name: 'wh-key' } },
      });
      expect(w.status, JSON.stringify(w.body)).to.equal(201);
    });
    after(async () => {
      await new Promise((resolve) => receiver?.close(resolve));
    });

    it('the REST mirror refuses a bad event type or URL with 400 naming the field', async () => {
      const badType = await api('POST', '/api/v1/webhooks', {
        name: 'x',
        url: 'https://example.com/h',
        eventTypes: ['nonsense'],
        secretRef: { name: 'wh-key' },
      });
      expect(badType.status).to.equal(400);
      expect(JSON.stringify(badType.body)).to.contain('eventTypes');
      const metadata = await api('POST', '/api/v1/webhooks', {
        name: 'x',
        url: 'http://169.254.169.254/',
        eventTypes: ['error'],
        secretRef: { name: 'wh-key' },
      });
      expect(metadata.status).to.be.within(400, 422);
      expect(JSON.stringify(metadata.body)).to.contain('url');
      const list = await api('GET', '/api/v1/webhooks');
      expect(list.body.webhooks.map((w: { name: string }) => w.name)).to.deep.equal(['events-out']);
    });

    it('refuses a URL at a metadata or link-local address (422 naming spec.url)', async () => {
      const r = await api('POST', `${B}/webhooks`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Webhook',
        metadata: { name: 'metadata' },
        spec: { url: 'http://169.254.169.254/latest', eventTypes: ['error'], secretRef: { name: 'wh-key' } },
      });
      expect(r.status).to.equal(422);
      expect(JSON.stringify(r.body)).to.contain('spec.url');
    });

    it('delivers signed events in order per agent, retrying after two 500s', async () => {
      expect((await api('POST', '/api/v1/agents', { name: 'hooked', instructions: '@say one' })).status).to.equal(201);
      await taskEnd('hooked', 1);
      expect((await api('POST', '/api/v1/agents', { name: 'hooked', instructions: '@say two' })).status).to.equal(200);
      await taskEnd('hooked', 2);
      // Another agent of the namespace, not chosen: none of its events go out.
      expect((await api('POST', '/api/v1/agents', { name: 'unhooked', instructions: '@say quiet' })).status).to.equal(201);
      await taskEnd('unhooked', 1);
      await eventually(async () => received.filter((r) => r.answered === 200).length >= 4 || undefined, 60_000, 'four acknowledged deliveries');

      for (const r of received) {
        const id = String(r.headers['webhook-id']);
        const ts = String(r.headers['webhook-timestamp']);
        const expected = `v1,${createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64')}`;
        expect(r.headers['webhook-signature'], 'signature').to.equal(expected);
        expect(Math.abs(Date.now() / 1000 - Number(ts))).to.be.below(120);
      }
      const bodies = received.map((r) => JSON.parse(r.body) as { type: string; data: { agent: string; seq: number; task: number } });
      expect(bodies.every((b) => b.data.agent === 'hooked')).to.equal(true);
      // The first event was refused twice, then sent again (same id) and acknowledged.
      expect(received.slice(0, 3).map((r) => r.answered)).to.deep.equal([500, 500, 200]);
      expect(new Set(received.slice(0, 3).map((r) => r.headers['webhook-id'])).size).to.equal(1);
      const acked = bodies.filter((_b, i) => received[i].answered === 200);
      expect(acked.map((b) => `${b.data.task}:${b.type}`)).to.deep.equal(['1:task_started', '1:task_completed', '2:task_started', '2:task_completed']);
      const seqs = acked.map((b) => b.data.seq);
      expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
      // A retry never overtakes: nothing after the first event was sent before it was acknowledged.
      expect(bodies.slice(0, 3).every((b) => b.data.seq === seqs[0])).to.equal(true);

      const w = await eventually(
        async () => {
          const r = await api('GET', `${B}/webhooks/events-out`);
          return r.body.status?.delivered === 4 ? r.body : undefined;
        },
        20_000,
        'status counts',
      );
      expect(w.status.failed).to.equal(2);
      expect(w.status.lastFailures.map((f: { status: number }) => f.status)).to.deep.equal([500, 500]);
      expect(w.status.lastDelivery).to.include({ agent: 'hooked', type: 'task_completed', status: 200 });
      expect(w.status.cursors.hooked.seq).to.be.at.least(seqs.at(-1)!);
    });

    it('after a restart, resumes from the stored cursor: the next task’s events, nothing sent again', async () => {
      const before = received.length;
      const acked = new Set(received.filter((r) => r.answered === 200).map((r) => String(r.headers['webhook-id'])));
      await h.restart();
      expect((await api('POST', '/api/v1/agents', { name: 'hooked', instructions: '@say three' })).status).to.equal(200);
      await taskEnd('hooked', 3);
      await eventually(async () => received.length >= before + 2 || undefined, 60_000, "the third task's two events");
      await new Promise((r) => setTimeout(r, 1000));
      const fresh = received.slice(before);
      expect(fresh.map((r) => (JSON.parse(r.body) as { data: { task: number }; type: string }).type)).to.deep.equal(['task_started', 'task_completed']);
      expect(fresh.every((r) => JSON.parse(r.body).data.task === 3)).to.equal(true);
      expect(fresh.some((r) => acked.has(String(r.headers['webhook-id'])))).to.equal(false);
    });
  });

  // After the Trigger and Webhook suites: it lists what they made.
  describe('CLI', () => {
    it('the CLI adds, lists, gets and removes triggers and webhooks', async () => {
      const cli = cliFor({ configDir: dir, server: h.url, token: TOKEN });
      const add = await cli('trigger', 'add', 'issues', '--agent', 'reviewer', '--secret', 'gh-hook', '--instructions', '@say issue {{issue.number}}');
      expect(add.code, add.stderr).to.equal(0);
      expect(add.stdout).to.contain('trigger/issues created');
      const ls = await cli('trigger', 'ls');
      expect(ls.stdout).to.match(/^NAME\s+AGENT\s+LAST\s+STARTED\s+AGE/m);
      expect(ls.stdout).to.match(/^gh\s+reviewer\s+\S+\s+1\s/m);
      expect(ls.stdout).to.match(/^issues\s+reviewer\s+<none>\s+0\s/m);
      const get = await cli('trigger', 'get', 'issues', '-o', 'json');
      expect(JSON.parse(get.stdout)).to.include({ name: 'issues', hookPath: '/api/v1/triggers/issues/hook?namespace=default' });
      const wh = await cli('webhook', 'add', 'errors', '--url', 'https://hooks.example.com/x', '--events', 'error,approval_requested', '--secret', 'wh-key');
      expect(wh.code, wh.stderr).to.equal(0);
      const whs = await cli('webhook', 'ls');
      expect(whs.stdout).to.match(/^NAME\s+URL\s+EVENTS\s+DELIVERED\s+FAILED\s+AGE/m);
      expect(whs.stdout).to.match(/^errors\s+https:\/\/hooks\.example\.com\/x\s+error,approval_requested\s+0\s+0\s/m);
      const bad = await cli('webhook', 'add', 'bad', '--url', 'https://hooks.example.com/x', '--events', 'nonsense', '--secret', 'wh-key');
      expect(bad.code).to.not.equal(0);
      expect(bad.stderr).to.contain('eventTypes');
      expect((await cli('trigger', 'rm', 'issues')).stdout).to.contain('trigger/issues deleted');
      expect((await cli('webhook', 'rm', 'errors')).stdout).to.contain('webhook/errors deleted');
      expect((await api('GET', '/api/v1/webhooks/errors')).status).to.equal(404);
    });
  });
});
