// Connector credentials and tool egress, tried as an attacker (docs/security.md "Stored secrets
// and egress", "Tool egress"). A real server, real workers and engine with the scripted model,
// real MCP servers (the SDK's) and plain listeners that record every header they are sent:
// connectors that redirect their credential elsewhere, a name that resolves to loopback, the
// engine's process holding no secret, and the tools' egress proxy refusing what it must.

import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { classifyAddress } from '../../pkg/egress/addresses.js';
import { attachEgressProxy, EgressProxy } from '../../pkg/egress/proxy.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { processesWith } from '../support/processes.js';

const TOKEN = 'mcp-tok-gateway-6e1f0a9c3d7b';
const HDR_TOKEN = 'mcp-hdr-gateway-2c8d4b6a0e1f';
const SAME_TOKEN = 'mcp-same-gateway-9a7c5e3b1d0f';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** A plain listener on loopback that records every request; `route` answers it. */
async function recorder(
  route: (url: string, port: number) => { status: number; headers?: Record<string, string> },
): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  let port = 0;
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    const r = route(req.url ?? '', port);
    res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return { server, port, seen };
}

const close = (s?: Server): Promise<void> => new Promise((resolve) => (s ? (s.closeAllConnections(), s.close(() => resolve())) : resolve()));
const everyValue = (seen: Seen[]): string => JSON.stringify(seen.map((s) => s.headers));

/** Sends a task and returns its events once it ended. */
async function runTask(h: Harness, name: string, instructions: string, extra: Record<string, unknown> = {}): Promise<AgentEvent[]> {
  const r = await h.api('POST', '/api/v1/agents', { name, instructions, ...extra });
  expect(r.status, r.text).to.equal(201);
  const ws = new EventClient(`${h.url}/api/v1/agents/${name}/ws`);
  const evs = await ws.untilTaskEnd();
  ws.close();
  return evs;
}

/** Raw `CONNECT target` through the proxy at `port`: the status line and body of its answer (or 200 and the open socket). */
function connectThrough(port: number, target: string, credential?: string): Promise<{ status: number; body: string; socket: import('node:net').Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buf = '';
    socket.on('error', reject);
    socket.on('data', (c: Buffer) => {
      buf += c.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buf)?.[1]);
      if (status === 200) {
        socket.removeAllListeners('data');
        return resolve({ status, body: '', socket });
      }
      socket.on('end', () => resolve({ status, body: buf.slice(end + 4), socket }));
    });
    const auth = credential ? `proxy-authorization: Basic ${Buffer.from(`agent:${credential}`).toString('base64')}\r\n` : '';
    socket.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n${auth}\r\n`);
  });
}

describe('connector credentials and tool egress (security)', function () {
  this.timeout(240_000);

  describe('through the connector gateway, with --allow-private-connector-urls', () => {
    let h: Harness;
    let mcp: TestMcpServer;
    let trap: Awaited<ReturnType<typeof recorder>>;
    let catcher: Awaited<ReturnType<typeof recorder>>;

    before(async () => {
      mcp = createTestMcpServer({ token: TOKEN });
      await mcp.start();
      catcher = await recorder(() => ({ status: 200 }));
      trap = await recorder((url) => {
        if (url.startsWith('/cross/mcp')) return { status: 307, headers: { location: `http://127.0.0.1:${catcher.port}/steal` } };
        if (url.startsWith('/same/mcp')) return { status: 307, headers: { location: '/same/outside' } };
        return { status: 200 };
      });
      h = await startHarness();
    });
    after(async () => {
      await h?.close();
      await mcp?.close();
      await close(trap?.server);
      await close(catcher?.server);
    });

    it('(a) a cross-origin 307 from the bound URL: the redirect target never sees the header secret, and the task ends properly', async () => {
      const url = `http://127.0.0.1:${trap.port}/cross/mcp`;
      expect((await h.api('POST', '/api/v1/secrets', { name: 'cross', data: { token: HDR_TOKEN }, allowedUrls: [url] })).status).to.equal(201);
      const c = await h.api('POST', '/api/v1/connectors', {
        name: 'cross',
        url,
        authSecretName: 'cross',
        authSecretKey: 'token',
        authType: 'header',
        headerName: 'X-Tool-Key',
      });
      expect(c.status, c.text).to.equal(201);
      const evs = await runTask(h, 'redirected', '@tool mcp__cross__echo {"text":"hi"}\n@say done anyway', { connectors: ['cross'] });
      expect(evs.at(-1)!.type, JSON.stringify(evs.map((e) => e.type))).to.equal('task_completed');
      // The gateway reached the bound URL with the secret; nothing reached the redirect target.
      expect(trap.seen.some((s) => s.url === '/cross/mcp' && s.headers['x-tool-key'] === HDR_TOKEN)).to.equal(true);
      expect(catcher.seen, JSON.stringify(catcher.seen.map((s) => s.url))).to.deep.equal([]);
      // Not the engine's credential either: the engine never saw the Location.
      const credential = h.server.local!.issuedSecrets({ namespace: 'default', name: 'redirected' })!.ANTHROPIC_API_KEY;
      expect(everyValue(trap.seen)).not.to.contain(credential);
      expect(h.logs.some((l) => l.includes('answered a redirect') && l.includes('"name":"redirected"'))).to.equal(true);
    });

    it("(b) a same-origin 307 outside the bound path: no credential is sent there, by the gateway or by the server's own checks", async () => {
      const url = `http://127.0.0.1:${trap.port}/same/mcp`;
      expect((await h.api('POST', '/api/v1/secrets', { name: 'same', data: { token: SAME_TOKEN }, allowedUrls: [url] })).status).to.equal(201);
      expect((await h.api('POST', '/api/v1/connectors', { name: 'same', url, authSecretName: 'same', authSecretKey: 'token' })).status).to.equal(201);
      const evs = await runTask(h, 'same-origin', '@tool mcp__same__echo {"text":"hi"}\n@say done anyway', { connectors: ['same'] });
      expect(evs.at(-1)!.type).to.equal('task_completed');
      // The server's own check (tools listing) and GET .../tools ran too.
      expect((await h.api('GET', '/api/v1/connectors/same/tools')).status).to.equal(502);
      await eventually(async () => (await h.api('GET', '/api/v1/connectors/same')).body.status.phase !== 'Unknown', 10_000, 'the connector checked');
      const bound = trap.seen.filter((s) => s.url === '/same/mcp');
      expect(bound.length).to.be.greaterThan(1);
      for (const s of bound) expect(s.headers.authorization).to.equal(`Bearer ${SAME_TOKEN}`);
      expect(
        trap.seen.filter((s) => s.url.startsWith('/same/outside')),
        'requests to the redirect target',
      ).to.deep.equal([]);
    });

    it("(d) a task calls the connector's tool through the gateway: the MCP server sees the secret, the engine process holds none", async () => {
      expect((await h.api('POST', '/api/v1/secrets', { name: 'echo', data: { token: TOKEN }, allowedUrls: [mcp.url] })).status).to.equal(201);
      expect((await h.api('POST', '/api/v1/connectors', { name: 'echo', url: mcp.url, authSecretName: 'echo', authSecretKey: 'token' })).status).to.equal(201);
      const evs = await runTask(h, 'caller', '@tool mcp__echo__echo {"text":"through the gateway"}\n@say done', { connectors: ['echo'] });
      const result = evs.find((e) => e.type === 'tool_result');
      expect(result?.payload, JSON.stringify(evs.map((e) => [e.type, e.payload]))).to.deep.include({
        tool: 'mcp__echo__echo',
        isError: false,
        output: 'echo: through the gateway',
      });
      expect(mcp.calls).to.include('through the gateway');
      expect(new Set(mcp.tokensSeen)).to.deep.equal(new Set([TOKEN]));
      // The engine stays up between tasks (warm session): find it by its environment.
      const workspace = join(h.dataDir, 'workspaces', 'default', 'caller');
      const engines = enginePids(workspace);
      expect(engines, "the agent's engine process").to.have.length.greaterThan(0);
      for (const pid of engines) {
        for (const file of ['environ', 'cmdline']) {
          const text = readFileSync(`/proc/${pid}/${file}`, 'utf8');
          expect(text, `/proc/${pid}/${file}`).not.to.contain(TOKEN);
          expect(text, `/proc/${pid}/${file}`).not.to.contain(mcp.url);
        }
      }
      expect(processesWith(TOKEN), 'command lines holding the secret').to.deep.equal([]);
    });

    it("refuses the gateway without the agent's credential, for a connector not attached to the agent, and across namespaces", async () => {
      const credential = h.server.local!.issuedSecrets({ namespace: 'default', name: 'caller' })!.ANTHROPIC_API_KEY;
      const call = async (path: string, key?: string): Promise<{ status: number; body: any }> => {
        const r = await fetch(`${h.server.modelProxy.url.replace('/internal/v1/model', '')}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(key ? { 'x-api-key': key } : {}) },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        return { status: r.status, body: await r.json() };
      };
      const before = mcp.tokensSeen.length;
      expect((await call('/internal/v1/connectors/default/echo/mcp')).status).to.equal(401);
      expect((await call('/internal/v1/connectors/default/echo/mcp', 'apmc_forged')).status).to.equal(401);
      const notAttached = await call('/internal/v1/connectors/default/same/mcp', credential);
      expect(notAttached.status).to.equal(403);
      expect(notAttached.body).to.include({ reason: 'Forbidden', code: 403 });
      expect(notAttached.body.error).to.contain('not attached');
      expect((await call('/internal/v1/connectors/other/echo/mcp', credential)).status).to.equal(403);
      expect((await call('/internal/v1/connectors/Bad_Name/echo/mcp', credential)).status).to.equal(404);
      expect(mcp.tokensSeen.length).to.equal(before);
      // The agent's own connector, with its credential: forwarded.
      expect((await call('/internal/v1/connectors/default/echo/mcp', credential)).status).to.equal(200);
      expect(mcp.tokensSeen.length).to.equal(before + 1);
    });
  });

  describe('(c) without --allow-private-connector-urls: a name that resolves to loopback', () => {
    let h: Harness;
    let mcp: TestMcpServer;
    let name: string;

    before(async () => {
      // The host's own name resolves to loopback here (/etc/hosts), and is no loopback name as written.
      name = hostname();
      const addresses = await lookup(name, { all: true });
      expect(
        addresses.map((a) => classifyAddress(a.address)),
        `${name} must resolve to loopback for this test`,
      ).to.include('loopback');
      mcp = createTestMcpServer({ token: TOKEN });
      await mcp.start();
      h = await startHarness({ allowPrivateConnectorUrls: false });
    });
    after(async () => {
      await h?.close();
      await mcp?.close();
    });

    it('is accepted as written, then refused at connect time by the gateway: the MCP server receives nothing', async () => {
      const url = mcp.url.replace('127.0.0.1', name);
      expect((await h.api('POST', '/api/v1/secrets', { name: 'named', data: { token: TOKEN }, allowedUrls: [url] })).status).to.equal(201);
      const c = await h.api('POST', '/api/v1/connectors', { name: 'named', url, authSecretName: 'named', authSecretKey: 'token' });
      expect(c.status, c.text).to.equal(201);
      const evs = await runTask(h, 'rebound', '@tool mcp__named__echo {"text":"hi"}\n@say done anyway', { connectors: ['named'] });
      expect(evs.at(-1)!.type).to.equal('task_completed');
      const result = evs.find((e) => e.type === 'tool_result');
      expect(result?.payload).to.include({ isError: true });
      expect(mcp.tokensSeen, 'requests that reached the MCP server').to.deep.equal([]);
      expect(mcp.calls).to.deep.equal([]);
      expect(
        h.logs.some((l) => l.includes('connector gateway: address refused') && l.includes(`resolves to 127.0.0.1`) && l.includes('"name":"rebound"')),
      ).to.equal(true);
    });
  });

  describe("(e) the tools' egress proxy", () => {
    let h: Harness;
    let target: Awaited<ReturnType<typeof recorder>>;
    const cred: Record<string, string> = {};
    let port: number;

    before(async () => {
      target = await recorder(() => ({ status: 200 }));
      h = await startHarness({
        templates: [
          { name: 'locked', egress: 'None' },
          { name: 'listed', egress: 'Proxy', egressAllow: ['allowed.test', '*.pypi.org'] },
        ],
      });
      port = h.server.port;
      for (const [name, templateRef] of [
        ['open', undefined],
        ['locked', 'locked'],
        ['listed', 'listed'],
      ] as const) {
        const evs = await runTask(h, name, '@say ready', templateRef ? { templateRef } : {});
        expect(evs.at(-1)!.type).to.equal('task_completed');
        cred[name] = h.server.local!.issuedSecrets({ namespace: 'default', name: name })!.ANTHROPIC_API_KEY!;
      }
    });
    after(async () => {
      await h?.close();
      await close(target?.server);
    });

    it("asks for the agent's credential (407) without one or with an unknown one", async () => {
      for (const c of [undefined, 'apmc_unknown']) {
        const r = await connectThrough(port, `example.com:443`, c);
        expect(r.status).to.equal(407);
        expect(JSON.parse(r.body)).to.include({ reason: 'Unauthorized', code: 407 });
      }
    });

    it('refuses CONNECT to loopback, private and metadata addresses (403), and to a name that resolves to loopback', async () => {
      for (const [t, cls] of [
        [`127.0.0.1:${target.port}`, 'loopback'],
        [`[::1]:${target.port}`, 'loopback'],
        ['10.0.0.1:443', 'private'],
        ['192.168.1.1:443', 'private'],
        ['169.254.169.254:80', 'metadata'],
        ['[::ffff:169.254.169.254]:80', 'metadata'],
        ['198.18.0.1:443', 'reserved'],
        [`${hostname()}:${target.port}`, 'loopback'],
        [`localhost:${target.port}`, 'loopback'],
      ] as const) {
        const r = await connectThrough(port, t, cred.open);
        expect(r.status, t).to.equal(403);
        const body = JSON.parse(r.body);
        expect(body, t).to.include({ reason: 'Forbidden', code: 403 });
        expect(body.error, t).to.contain(cls);
      }
      expect(target.seen).to.deep.equal([]);
      expect(h.logs.some((l) => l.includes('egress: refused') && l.includes('"namespace":"default"') && l.includes('"name":"open"'))).to.equal(true);
    });

    it('refuses plain HTTP (absolute-form) to loopback too', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: `http://127.0.0.1:${target.port}/x`,
            headers: { 'proxy-authorization': `Basic ${Buffer.from(`a:${cred.open}`).toString('base64')}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
      expect(status).to.equal(403);
      expect(target.seen).to.deep.equal([]);
    });

    it('egress None refuses everything; Proxy refuses a host not on its list', async () => {
      for (const t of ['8.8.8.8:443', 'api.github.com:443', 'allowed.test:443']) {
        const r = await connectThrough(port, t, cred.locked);
        expect(r.status, t).to.equal(403);
        expect(JSON.parse(r.body).error).to.contain('egress is None');
      }
      for (const t of ['api.github.com:443', 'pypi.org:443', '8.8.8.8:443']) {
        const r = await connectThrough(port, t, cred.listed);
        expect(r.status, t).to.equal(403);
        expect(JSON.parse(r.body).error).to.contain('allow-list');
      }
      // On the list: the rule lets it through to the lookup (no DNS here: 502, not 403).
      expect((await connectThrough(port, 'allowed.test:443', cred.listed)).status).to.equal(502);
      expect(h.logs.some((l) => l.includes('egress: refused') && l.includes('"name":"locked"') && l.includes('"mode":"None"'))).to.equal(true);
    });

    it('tunnels to an allowed address (loopback let through by the test-only classification hook), never to the server itself', async () => {
      const logger = createLogger({ level: 'silent' });
      const server = createServer((_req, res) => res.writeHead(404).end());
      const proxy = new EgressProxy({
        credentials: { authenticate: (c) => (c === 'apmc_test' ? { ref: { namespace: 'default', name: 'tester' }, uid: 'u1' } : undefined) },
        ruleFor: () => ({ mode: 'Open' }),
        self: () => [server.address() as AddressInfo],
        logger,
        classifyForTests: (a) => (a === '127.0.0.1' ? 'public' : classifyAddress(a)),
      });
      attachEgressProxy(server, proxy);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const proxyPort = (server.address() as AddressInfo).port;
      try {
        const t = await connectThrough(proxyPort, `127.0.0.1:${target.port}`, 'apmc_test');
        expect(t.status).to.equal(200);
        const answer = await new Promise<string>((resolve) => {
          let got = '';
          t.socket.on('data', (c: Buffer) => (got += c.toString()));
          t.socket.on('end', () => resolve(got));
          t.socket.write(`GET /through-the-tunnel HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
        });
        expect(answer).to.match(/^HTTP\/1\.1 200/);
        expect(target.seen.map((s) => s.url)).to.include('/through-the-tunnel');
        // curl, as a tool would use it: HTTP(S)_PROXY with the credential as the password.
        // (Asynchronously: the proxy answers from this process.)
        const curl = (url: string): Promise<string> =>
          new Promise((resolve, reject) =>
            execFile(
              'curl',
              ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', '-x', `http://agent:apmc_test@127.0.0.1:${proxyPort}`, url],
              (err, out) => (err ? reject(new Error('curl failed', { cause: err })) : resolve(out)),
            ),
          );
        expect(await curl(`http://127.0.0.1:${target.port}/via-curl`)).to.equal('200');
        expect(target.seen.find((s) => s.url === '/via-curl')?.headers['proxy-authorization']).to.equal(undefined);
        // The proxy's own listener is the server itself: refused even where loopback is let through.
        const self = await connectThrough(proxyPort, `127.0.0.1:${proxyPort}`, 'apmc_test');
        expect(self.status).to.equal(403);
        expect(JSON.parse(self.body).error).to.contain('agentplane server itself');
        // Everything else keeps its class.
        expect((await connectThrough(proxyPort, '10.0.0.1:443', 'apmc_test')).status).to.equal(403);
      } finally {
        await close(server);
      }
    });
  });
});

/** Processes whose environment is the engine's of the agent with this workspace (its HOME and config dir). */
function enginePids(workspace: string): number[] {
  const out: number[] = [];
  for (const pid of processesWithEnv(`CLAUDE_CONFIG_DIR=${workspace}/.claude`)) out.push(pid);
  return out;
}

function processesWithEnv(entry: string): number[] {
  const found: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(entry)) found.push(Number(d));
    } catch {
      // exited, or not readable
    }
  }
  return found;
}
