// The connector gateway against a real upstream listener on loopback: what it forwards (methods,
// headers, the secret instead of the caller's credential), that a stream passes chunk by chunk,
// that a redirect goes back without its Location, and that refused addresses get nothing.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ApiError } from '../../pkg/api/errors.js';
import { ConnectorGateway, type GatewayDecision } from '../../pkg/connector/gateway.js';
import { createLogger } from '../../pkg/observability/logger.js';

const CREDENTIAL = 'apmc_gateway_unit';
const SECRET = 'connector-secret-unit-51f0';
const grant = { ref: { namespace: 'default', name: 'agent' }, uid: 'u1' };

describe('connector gateway', () => {
  let upstream: Server;
  let upstreamUrl: string;
  let gatewayServer: Server;
  let gatewayUrl: string;
  const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  let release: () => void = () => undefined;
  let target: () => GatewayDecision;
  let allowPrivate = true;

  before(async () => {
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (req.url === '/redirect') return void res.writeHead(307, { location: 'http://127.0.0.1:9/steal' }).end('moved');
        if (req.url === '/sse') {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's-1', 'set-cookie': 'a=b' });
          res.write('data: first\n\n');
          release = () => res.end('data: last\n\n');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' }).end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const gateway = new ConnectorGateway({
      credentials: { authenticate: (c) => (c === CREDENTIAL ? grant : undefined) },
      target: async () => target(),
      get egress() {
        return { allowPrivate };
      },
      logger: createLogger({ level: 'silent' }),
    });
    gatewayServer = createServer((req, res) => void gateway.handle(req, res, 'default', 'tools'));
    await new Promise<void>((r) => gatewayServer.listen(0, '127.0.0.1', r));
    gatewayUrl = `http://127.0.0.1:${(gatewayServer.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    for (const s of [upstream, gatewayServer]) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });
  beforeEach(() => {
    seen.length = 0;
    allowPrivate = true;
    target = () => ({ ok: true, target: { url: `${upstreamUrl}/mcp`, headers: { Authorization: `Bearer ${SECRET}` }, token: SECRET } });
  });

  it("forwards POST, GET and DELETE to the bound URL with the secret instead of the caller's credential", async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await fetch(gatewayUrl, {
        method,
        headers: { 'x-api-key': CREDENTIAL, 'mcp-session-id': 's-1', 'content-type': 'application/json', cookie: 'c=d', 'x-forwarded-for': '1.2.3.4' },
        ...(method === 'POST' ? { body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' } : {}),
      });
      expect(res.status, method).to.equal(200);
      expect(res.headers.get('mcp-session-id')).to.equal('s-1');
    }
    expect(seen.map((s) => [s.method, s.url])).to.deep.equal([
      ['POST', '/mcp'],
      ['GET', '/mcp'],
      ['DELETE', '/mcp'],
    ]);
    for (const s of seen) {
      expect(s.headers.authorization).to.equal(`Bearer ${SECRET}`);
      expect(s.headers['x-api-key']).to.equal(undefined);
      expect(s.headers.cookie).to.equal(undefined);
      expect(s.headers['x-forwarded-for']).to.equal(undefined);
      expect(s.headers['mcp-session-id']).to.equal('s-1');
    }
    expect(seen[0].body).to.equal('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  });

  it('refuses without the credential (401) and other methods (405), sending nothing', async () => {
    expect((await fetch(gatewayUrl, { method: 'POST', body: '{}' })).status).to.equal(401);
    expect((await fetch(gatewayUrl, { method: 'POST', body: '{}', headers: { authorization: 'Bearer apmc_other' } })).status).to.equal(401);
    const put = await fetch(gatewayUrl, { method: 'PUT', body: '{}', headers: { authorization: `Bearer ${CREDENTIAL}` } });
    expect(put.status).to.equal(405);
    expect(await put.json()).to.include({ reason: 'MethodNotAllowed', code: 405 });
    target = () => ({ ok: false, error: new ApiError('Forbidden', 403, 'connector "tools" is not attached to agent "agent"') });
    const refused = await fetch(gatewayUrl, { method: 'POST', body: '{}', headers: { 'x-api-key': CREDENTIAL } });
    expect(refused.status).to.equal(403);
    expect((await refused.json()).error).to.contain('not attached');
    expect(seen).to.deep.equal([]);
  });

  it('streams server-sent events chunk by chunk, before the connector ends its answer', async () => {
    target = () => ({ ok: true, target: { url: `${upstreamUrl}/sse`, headers: { Authorization: `Bearer ${SECRET}` } } });
    const res = await fetch(gatewayUrl, { method: 'POST', body: '{}', headers: { 'x-api-key': CREDENTIAL, accept: 'text/event-stream' } });
    expect(res.headers.get('content-type')).to.equal('text/event-stream');
    expect(res.headers.get('set-cookie')).to.equal(null);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).to.equal('data: first\n\n');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(rest).to.equal('data: last\n\n');
  });

  it('hands a redirect back without its Location and follows none', async () => {
    target = () => ({ ok: true, target: { url: `${upstreamUrl}/redirect`, headers: { 'X-Tool-Key': SECRET } } });
    const res = await fetch(gatewayUrl, { method: 'POST', body: '{}', headers: { 'x-api-key': CREDENTIAL }, redirect: 'manual' });
    expect(res.status).to.equal(307);
    expect(res.headers.get('location')).to.equal(null);
    expect((await res.json()).error).to.contain('does not follow redirects');
    expect(seen.map((s) => s.url)).to.deep.equal(['/redirect']);
    // A client that follows redirects has nowhere to go.
    const followed = await fetch(gatewayUrl, { method: 'POST', body: '{}', headers: { 'x-api-key': CREDENTIAL } });
    expect(followed.status).to.equal(307);
  });

  it('refuses a loopback address when private addresses are not allowed (403), before connecting', async () => {
    allowPrivate = false;
    for (const url of [`${upstreamUrl}/mcp`, `${upstreamUrl.replace('127.0.0.1', 'localhost')}/mcp`]) {
      target = () => ({ ok: true, target: { url, headers: { Authorization: `Bearer ${SECRET}` } } });
      const res = await fetch(gatewayUrl, { method: 'POST', body: '{}', headers: { 'x-api-key': CREDENTIAL } });
      expect(res.status, url).to.equal(403);
      expect((await res.json()).error, url).to.contain('loopback');
    }
    expect(seen).to.deep.equal([]);
  });
});
