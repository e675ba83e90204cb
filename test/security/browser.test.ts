// What a web page can make the embedded home do (pkg/server/browser-guard.ts), on a real server
// (loopback, no token file: the default) with real HTTP and WebSocket clients that send what a
// browser would, and a real Chromium for the two attacks as a page runs them:
//  - DNS rebinding: a name that resolves to 127.0.0.1 (Host: evil.example) gets 421 on REST and
//    WebSocket, so the page can neither list agents nor create one with @bash instructions;
//  - CSRF and cross-site WebSocket hijacking: a foreign Origin or Sec-Fetch-Site: cross-site is
//    refused on state-changing requests and WebSocket upgrades; a text/plain cancel (the
//    no-cors form a page may send) is 415 and the running task goes on;
// while loopback names, --allowed-hosts names, same-origin requests (the dashboard) and clients
// that send no Origin (curl, the CLI, SDKs) keep working.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import { type Browser, chromium } from 'playwright-core';
import WebSocket from 'ws';

import { getAgent, waitAgent } from '../support/agents.js';
import { busyFor, EventClient, type Harness, startHarness } from '../support/harness.js';
import { freePort, startServerProcess } from '../support/server-process.js';
import { tokenFileYaml } from '../support/tokens.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

interface Raw {
  status: number;
  body: any;
}

/** One HTTP request to the server's loopback port with exactly these headers (Host included). */
function raw(h: Harness | number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: typeof h === 'number' ? h : h.server.port,
        method,
        path,
        headers: { ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += String(c)));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

type Upgrade = { status: number; body: any } | { opened: WebSocket };

/** A WebSocket upgrade with these headers: its refusal (status and error body) or the open socket. */
function upgrade(h: Harness, path: string, headers: Record<string, string>): Promise<Upgrade> {
  return new Promise((resolve, reject) => {
    const { host, origin, ...rest } = headers;
    const ws = new WebSocket(`ws://127.0.0.1:${h.server.port}${path}`, {
      headers: { ...(host ? { host } : {}), ...rest },
      ...(origin ? { origin } : {}),
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += String(c)));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        ws.terminate();
      });
    });
    ws.on('open', () => resolve({ opened: ws }));
    ws.on('error', reject);
  });
}

const expectRefusal = (r: Raw | Upgrade, status: number, reason: string): void => {
  expect(r, 'refused before the upgrade').to.have.property('status', status);
  const body = (r as Raw).body;
  expect(body).to.include({ code: status, reason });
  expect(body.error).to.be.a('string').and.not.equal('');
};

describe('browser-facing hardening (security)', function () {
  this.timeout(120_000);
  let h: Harness;
  let port: number;
  const json = { 'content-type': 'application/json' };

  before(async () => {
    h = await startHarness({ allowedHosts: ['agents.example', '.corp.example'] });
    port = h.server.port;
    const created = await h.api('POST', '/api/v1/agents', { name: 'victim', instructions: `@bash ${busyFor(60)}\n@say done` });
    expect(created.status, created.text).to.equal(201);
    await waitAgent(h, 'victim', (a) => a.taskStatus === 'InProgress', 'the victim task running');
  });
  after(async () => {
    await h?.close();
  });

  describe('DNS rebinding (Host)', () => {
    it('refuses a rebound name on REST: no list, no create', async () => {
      const list = await raw(h, 'GET', '/api/v1/agents', { host: `evil.example:${port}` });
      expectRefusal(list, 421, 'MisdirectedRequest');
      expect(list.body.error).to.include('evil.example').and.include('--allowed-hosts');
      expect(JSON.stringify(list.body)).not.to.include('victim');

      const create = await raw(
        h,
        'POST',
        '/api/v1/agents',
        { host: `evil.example:${port}`, ...json },
        JSON.stringify({ name: 'rebound', instructions: '@bash id > /tmp/pwned\n@say ok' }),
      );
      expectRefusal(create, 421, 'MisdirectedRequest');
      expect(await getAgent(h, 'rebound')).to.equal(undefined);

      // The aggregated API too (a metav1.Status), and a name without a port.
      const agg = await raw(h, 'GET', '/apis/agentplane.io/v1alpha1/namespaces/default/agents', { host: 'evil.example' });
      expect(agg.status).to.equal(421);
      expect(agg.body).to.include({ kind: 'Status', reason: 'MisdirectedRequest', code: 421 });
    });

    it('refuses a rebound name on the WebSocket before the upgrade', async () => {
      expectRefusal(await upgrade(h, '/api/v1/agents/victim/ws', { host: `evil.example:${port}` }), 421, 'MisdirectedRequest');
    });

    it('answers loopback names and the allowed hosts, with any port', async () => {
      for (const host of [
        `127.0.0.1:${port}`,
        `127.8.9.10:${port}`,
        `localhost:${port}`,
        'localhost',
        `[::1]:${port}`,
        `agents.example:${port}`,
        'AGENTS.example',
        `ci.corp.example:${port}`,
        'corp.example',
      ]) {
        const r = await raw(h, 'GET', '/api/v1/agents', { host });
        expect(r.status, host).to.equal(200);
      }
      // A suffix entry is not a substring match.
      expect((await raw(h, 'GET', '/api/v1/agents', { host: 'evilcorp.example' })).status).to.equal(421);
      const ws = await upgrade(h, '/api/v1/agents/victim/ws', { host: `agents.example:${port}` });
      expect(ws).to.have.property('opened');
      (ws as { opened: WebSocket }).opened.close();
    });

    it('agentplane serve takes --allowed-hosts (and --no-metrics-auth beside a token file)', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'agentplane-hosts-'));
      const tokenFile = join(dir, 'tokens.yaml');
      writeFileSync(tokenFile, tokenFileYaml([{ user: 'admin', token: 'admin-hosts-0a1b2c3d' }]));
      const cliPort = await freePort();
      const p = await startServerProcess({
        port: cliPort,
        dataDir: join(dir, 'data'),
        model: { url: h.model.url, apiKey: 'unused' },
        args: ['--allowed-hosts', 'cli.example, other.example', '--token-file', tokenFile, '--no-metrics-auth'],
      });
      try {
        expect((await raw(cliPort, 'GET', '/api/v1/agents', { host: `cli.example:${cliPort}` })).status, 'allowed, then asked for a token').to.equal(401);
        expect((await raw(cliPort, 'GET', '/api/v1/agents', { host: 'other.example' })).status).to.equal(401);
        expectRefusal(await raw(cliPort, 'GET', '/api/v1/agents', { host: `evil.example:${cliPort}` }), 421, 'MisdirectedRequest');
        expect((await raw(cliPort, 'GET', '/metrics', { host: `127.0.0.1:${cliPort}` })).status).to.equal(200);
      } finally {
        p.child.kill('SIGTERM');
        await p.exited;
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('cross-site requests (Origin, Sec-Fetch-Site)', () => {
    it('refuses a state-changing request from a foreign Origin', async () => {
      const create = await raw(
        h,
        'POST',
        '/api/v1/agents',
        { origin: 'http://evil.example', ...json },
        JSON.stringify({ name: 'csrf', instructions: '@say hi' }),
      );
      expectRefusal(create, 403, 'Forbidden');
      expect(create.body.error).to.include('http://evil.example');
      // Another port on the same host is another origin.
      expectRefusal(
        await raw(h, 'POST', '/api/v1/agents', { origin: 'http://127.0.0.1:1', ...json }, JSON.stringify({ name: 'csrf', instructions: '@say hi' })),
        403,
        'Forbidden',
      );
      // A sandboxed frame's opaque origin.
      expectRefusal(await raw(h, 'DELETE', '/api/v1/agents/victim', { origin: 'null' }), 403, 'Forbidden');
      expect(await getAgent(h, 'csrf')).to.equal(undefined);
    });

    it('refuses Sec-Fetch-Site: cross-site even without an Origin', async () => {
      const r = await raw(h, 'POST', '/api/v1/agents', { 'sec-fetch-site': 'cross-site', ...json }, JSON.stringify({ name: 'csrf2', instructions: '@say hi' }));
      expectRefusal(r, 403, 'Forbidden');
      expect(r.body.error).to.include('Sec-Fetch-Site: cross-site');
      expect(await getAgent(h, 'csrf2')).to.equal(undefined);
    });

    it("refuses a WebSocket from a foreign Origin before the upgrade: no agent's events", async () => {
      expectRefusal(await upgrade(h, '/api/v1/agents/victim/ws', { origin: 'http://evil.example' }), 403, 'Forbidden');
      expectRefusal(await upgrade(h, '/api/v1/agents/victim/ws', { 'sec-fetch-site': 'cross-site' }), 403, 'Forbidden');
    });

    it('refuses a text/plain cancel (415) and the running task goes on', async () => {
      const plain = await raw(h, 'POST', '/api/v1/agents/victim/cancel', { 'content-type': 'text/plain' }, '');
      expectRefusal(plain, 415, 'UnsupportedMediaType');
      expect(plain.body.error).to.include('text/plain').and.include('application/json');
      // A form, and a body without any type, likewise; the aggregated API's cancel too.
      expectRefusal(
        await raw(h, 'POST', '/api/v1/agents/victim/cancel', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=b'),
        415,
        'UnsupportedMediaType',
      );
      expectRefusal(await raw(h, 'POST', '/api/v1/agents/victim/cancel', {}, 'x'), 415, 'UnsupportedMediaType');
      const agg = await raw(h, 'POST', '/apis/agentplane.io/v1alpha1/namespaces/default/agents/victim/cancel', { 'content-type': 'text/plain' }, '{}');
      expect(agg.status).to.equal(415);
      await new Promise((r) => setTimeout(r, 500));
      expect((await getAgent(h, 'victim'))?.taskStatus).to.equal('InProgress');
    });

    it('lets same-origin requests (the dashboard) through: REST and WebSocket', async () => {
      const origin = `http://127.0.0.1:${port}`;
      const create = await raw(
        h,
        'POST',
        '/api/v1/agents',
        { origin, 'sec-fetch-site': 'same-origin', ...json },
        JSON.stringify({ name: 'same-origin', instructions: '@say hi' }),
      );
      expect(create.status, JSON.stringify(create.body)).to.equal(201);
      const ws = await upgrade(h, '/api/v1/agents/same-origin/ws', { origin, 'sec-fetch-site': 'same-origin' });
      expect(ws).to.have.property('opened');
      (ws as { opened: WebSocket }).opened.close();
      // Reads are never refused for their Origin (the browser keeps a foreign page from reading them).
      expect((await raw(h, 'GET', '/api/v1/agents', { origin: 'http://evil.example' })).status).to.equal(200);
    });

    it('lets clients without an Origin through: a body-less cancel (as SDKs send it) ends the task', async () => {
      const events = new EventClient(`${h.url}/api/v1/agents/victim/ws`);
      await events.opened();
      const cancel = await raw(h, 'POST', '/api/v1/agents/victim/cancel', {});
      expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
      await events.until((evs) => evs.some((e) => e.type === 'task_cancelled'));
      events.close();
    });
  });

  describe('a real browser (Chromium)', () => {
    let browser: Browser;
    let attacker: Server;
    let attackerPort: number;
    before(async () => {
      // The attacker's page: served from another origin (another loopback port).
      attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>attacker</title>'));
      await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
      attackerPort = (attacker.address() as AddressInfo).port;
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        // evil.example resolves to loopback, as a rebinding attacker's DNS answers.
        args: ['--no-sandbox', '--disable-dev-shm-usage', '--host-resolver-rules=MAP evil.example 127.0.0.1'],
      });
    });
    after(async () => {
      await browser?.close();
      await new Promise((r) => attacker?.close(r));
    });

    it('a page on a rebound name reads nothing and creates nothing', async () => {
      const page = await browser.newPage();
      try {
        // After the rebind the page's origin is http://evil.example:<port>: its requests are
        // same-origin for the browser, so only the server's Host check stands in the way.
        const nav = await page.goto(`http://evil.example:${port}/ui`);
        expect(nav?.status()).to.equal(421);
        const result = await page.evaluate(async () => {
          const list = await fetch('/api/v1/agents');
          const create = await fetch('/api/v1/agents', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'rebound-browser', instructions: '@bash id\n@say ok' }),
          });
          return { list: list.status, listBody: await list.text(), create: create.status };
        });
        expect(result.list).to.equal(421);
        expect(result.listBody).not.to.include('victim');
        expect(result.create).to.equal(421);
        expect(await getAgent(h, 'rebound-browser')).to.equal(undefined);
      } finally {
        await page.close();
      }
    });

    it("a page of another origin can neither cancel a task (no-cors text/plain) nor read an agent's events", async () => {
      const started = await h.api('POST', '/api/v1/agents', { name: 'victim', instructions: `@bash ${busyFor(60)}\n@say done` });
      expect(started.status, started.text).to.equal(200);
      await waitAgent(h, 'victim', (a) => a.taskStatus === 'InProgress', 'the second victim task running');
      const page = await browser.newPage();
      try {
        await page.goto(`http://127.0.0.1:${attackerPort}/`);
        const result = await page.evaluate(async (target) => {
          // The simple request a page may send anywhere without asking first; its answer is opaque.
          await fetch(`${target}/api/v1/agents/victim/cancel`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '' });
          await fetch(`${target}/api/v1/agents/victim/cancel`, { method: 'POST', mode: 'no-cors' });
          const ws = await new Promise<{ opened: boolean; messages: number }>((resolve) => {
            const s = new WebSocket(`${target.replace('http', 'ws')}/api/v1/agents/victim/ws?since=0`);
            let messages = 0;
            let opened = false;
            s.onopen = () => (opened = true);
            s.onmessage = () => messages++;
            s.onclose = () => resolve({ opened, messages });
            setTimeout(() => resolve({ opened, messages }), 3000);
          });
          return ws;
        }, `http://127.0.0.1:${port}`);
        expect(result).to.deep.equal({ opened: false, messages: 0 });
        await new Promise((r) => setTimeout(r, 500));
        expect((await getAgent(h, 'victim'))?.taskStatus, 'the task was not cancelled').to.equal('InProgress');
      } finally {
        await page.close();
      }
      expect((await raw(h, 'POST', '/api/v1/agents/victim/cancel', {})).status).to.equal(200);
    });

    it('the dashboard (same origin) still cancels a task', async () => {
      const started = await h.api('POST', '/api/v1/agents', { name: 'victim', instructions: `@bash ${busyFor(60)}\n@say done` });
      expect(started.status, started.text).to.equal(200);
      await waitAgent(h, 'victim', (a) => a.taskStatus === 'InProgress', 'the third victim task running');
      const page = await browser.newPage();
      try {
        await page.goto(`http://127.0.0.1:${port}/ui`);
        const status = await page.evaluate(async () => (await fetch('/api/v1/agents/victim/cancel', { method: 'POST' })).status);
        expect(status).to.equal(200);
      } finally {
        await page.close();
      }
      await waitAgent(h, 'victim', (a) => a.taskStatus === 'Cancelled', 'the task cancelled');
    });
  });
});
