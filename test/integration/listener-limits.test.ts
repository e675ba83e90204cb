// 414, 431 and 408 in the project's own error formats on both listeners the service has: the
// embedded home's plain HTTP server and the cluster home's HTTPS server (HTTP/1.1 and HTTP/2 on
// one port). Each is the real app (createServedApp) on loopback, driven over raw sockets so the
// bytes arrive the way a remote client's do: in TLS records and small TCP segments.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { createServedApp, MAX_HEADER_SIZE, MAX_URL_LENGTH } from '../../pkg/server/app.js';
import { makeServingCert } from '../support/tls.js';

const REST = '/api/v1/agents';
const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default/agents';
const TIMEOUTS = { headersMs: 800, requestMs: 1500, keepAliveMs: 1000, checkIntervalMs: 100 };

interface RawReply {
  status: number;
  body: any;
  /** ms from the first byte sent to the connection's close. */
  closedAfterMs: number;
}

/**
 * Sends `request` over a fresh connection in `chunk`-byte writes (each its own segment or TLS
 * record), `gapMs` apart, and reads until the server closes it.
 */
function exchange(open: () => net.Socket, request: string, chunk = request.length, gapMs = 0): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = open();
    const started = Date.now();
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
      try {
        resolve({ status, body: bodyText ? JSON.parse(bodyText) : undefined, closedAfterMs: Date.now() - started });
      } catch (err) {
        reject(new Error(`not JSON: ${text.slice(0, 300)} (${String(err)})`));
      }
    });
    let at = 0;
    const next = (): void => {
      if (at >= request.length || socket.destroyed) return;
      socket.write(request.slice(at, at + chunk));
      at += chunk;
      timer = setTimeout(next, gapMs);
    };
    socket.once(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', next);
  });
}

/** The HTTP/2 answer to a GET of `path` with `headers`: status and JSON body, or the stream's error. */
function h2Get(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any } | { error: string }> {
  return new Promise((resolve) => {
    const session = http2.connect(url, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    const req = session.request({ ':path': path, ...headers });
    let status = 0;
    let text = '';
    req.setEncoding('utf8');
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (d: string) => (text += d));
    req.on('end', () => {
      session.close();
      resolve({ status, body: JSON.parse(text) });
    });
    req.on('error', (err: Error) => {
      session.destroy();
      resolve({ error: err.message });
    });
    req.end();
  });
}

function checkAnswers(name: string, open: () => net.Socket): void {
  const long = 'a'.repeat(MAX_URL_LENGTH + 4000);
  const huge = 'a'.repeat(MAX_HEADER_SIZE + 4000);
  const get = (target: string, more = ''): string => `GET ${target} HTTP/1.1\r\nHost: x\r\n${more}Connection: close\r\n\r\n`;

  describe(name, () => {
    it('a URL past the URL limit is 414 URITooLong: the REST body on /api/v1, metav1.Status on /apis', async () => {
      const rest = await exchange(open, get(`${REST}?namespace=${long}`));
      expect(rest.status).to.equal(414);
      expect(rest.body).to.deep.equal({
        error: `request URL is longer than the limit of ${MAX_URL_LENGTH} bytes`,
        reason: 'URITooLong',
        code: 414,
        details: {},
      });
      const agg = await exchange(open, get(`${AGG}?labelSelector=${long}`));
      expect(agg.status).to.equal(414);
      expect(agg.body).to.include({ kind: 'Status', status: 'Failure', reason: 'URITooLong', code: 414 });
    });

    it("a request line past the header limit, sent in 1 KiB pieces, is still 414 in the path's format (not 431)", async () => {
      const rest = await exchange(open, get(`${REST}?namespace=${huge}`), 1024);
      expect(rest.status).to.equal(414);
      expect(rest.body).to.include({ reason: 'URITooLong', code: 414 });
      expect(rest.body).to.not.have.property('kind');
      const agg = await exchange(open, get(`${AGG}?x=${huge}`), 1024);
      expect(agg.status).to.equal(414);
      expect(agg.body).to.include({ kind: 'Status', reason: 'URITooLong', code: 414 });
    });

    it("headers past the limit are 431 RequestHeaderFieldsTooLarge in the path's format", async () => {
      const rest = await exchange(open, get(REST, `X-Padding: ${huge}\r\n`), 1024);
      expect(rest.status).to.equal(431);
      expect(rest.body).to.deep.equal({
        error: `request headers are larger than the limit of ${MAX_HEADER_SIZE} bytes`,
        reason: 'RequestHeaderFieldsTooLarge',
        code: 431,
        details: {},
      });
      const agg = await exchange(open, get(AGG, `X-Padding: ${huge}\r\n`));
      expect(agg.status).to.equal(431);
      expect(agg.body).to.include({ kind: 'Status', reason: 'RequestHeaderFieldsTooLarge', code: 431 });
    });

    it('a client dribbling its headers a byte at a time is cut off at the headers timeout with 408', async () => {
      const r = await exchange(open, get(REST, `X-Slow: ${'s'.repeat(200)}\r\n`), 1, 20);
      expect(r.status).to.equal(408);
      expect(r.body).to.include({ reason: 'RequestTimeout', code: 408 });
      expect(r.closedAfterMs).to.be.within(TIMEOUTS.headersMs, TIMEOUTS.headersMs + 2000);
    });

    it('a connection that sends nothing is closed at the headers timeout; a keep-alive one after its keep-alive timeout', async () => {
      const idle = await exchange(open, '');
      expect(idle.closedAfterMs).to.be.within(TIMEOUTS.headersMs - 50, TIMEOUTS.headersMs + 2000);
      const kept = await exchange(open, `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(kept.status).to.equal(200);
      expect(kept.closedAfterMs).to.be.within(TIMEOUTS.keepAliveMs - 50, TIMEOUTS.keepAliveMs + 2000);
    });

    it('after all of that a well-formed request is served', async () => {
      const ok = await exchange(open, get('/healthz'), 7);
      expect(ok.status).to.equal(200);
    });
  });
}

describe('listener limits (integration)', function () {
  this.timeout(60_000);
  let dir: string;
  let plain: FastifyInstance;
  let secure: FastifyInstance;
  let plainPort = 0;
  let securePort = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-listener-'));
    await makeServingCert(dir);
    const logger = createLogger({ level: 'silent' });
    const routes = (app: FastifyInstance): void => {
      app.get('/healthz', async () => ({ status: 'ok' }));
      app.get(REST, async () => ({ items: [] }));
      app.get(AGG, async () => ({ kind: 'AgentList', items: [] }));
    };
    plain = (await createServedApp({ logger, metrics: new Metrics(), timeouts: TIMEOUTS })).app;
    secure = (
      await createServedApp({
        logger,
        metrics: new Metrics(),
        timeouts: TIMEOUTS,
        tls: { key: readFileSync(join(dir, 'serving.key')), cert: readFileSync(join(dir, 'serving.crt')) },
      })
    ).app;
    routes(plain);
    routes(secure);
    await plain.listen({ host: '127.0.0.1', port: 0 });
    await secure.listen({ host: '127.0.0.1', port: 0 });
    plainPort = (plain.server.address() as net.AddressInfo).port;
    securePort = (secure.server.address() as net.AddressInfo).port;
  });
  after(async () => {
    await plain?.close();
    await secure?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  checkAnswers('plain HTTP (the embedded home)', () => net.connect(plainPort, '127.0.0.1'));
  checkAnswers('HTTPS, HTTP/1.1 (the cluster home)', () =>
    tls.connect({ host: '127.0.0.1', port: securePort, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }),
  );

  describe('HTTPS, HTTP/2 (the cluster home)', () => {
    it("a URL past the limit is 414 and headers past it 431, in the path's format", async () => {
      const url = `https://127.0.0.1:${securePort}`;
      const long = await h2Get(url, `${AGG}?x=${'a'.repeat(MAX_URL_LENGTH + 100)}`);
      expect(long).to.deep.include({ status: 414 });
      expect((long as { body: any }).body).to.include({ kind: 'Status', reason: 'URITooLong', code: 414 });
      const big = await h2Get(url, REST, { 'x-padding': 'p'.repeat(MAX_HEADER_SIZE + 100) });
      expect(big).to.deep.include({ status: 431 });
      expect((big as { body: any }).body).to.include({ reason: 'RequestHeaderFieldsTooLarge', code: 431 });
      // Past HTTP/2's own header list limit (64 KiB) the protocol refuses the stream: no HTTP answer exists.
      const beyond = await h2Get(url, REST, { 'x-padding': 'p'.repeat(70_000) });
      expect(beyond).to.have.property('error').that.contains('REFUSED_STREAM');
      const ok = await h2Get(url, REST);
      expect(ok).to.deep.equal({ status: 200, body: { items: [] } });
    });
  });
});
