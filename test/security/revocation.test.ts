// A revoked credential loses its open connections, not only its next request: on a real server
// with a token file (re-read every 250 ms), a token removed from the file, or given another
// scope, has its event WebSocket closed with 4401 "token revoked" within the reload interval,
// and its aggregated-API watch and `log?follow=true` stream ended; no event of a later task
// reaches them. An unchanged token's socket stays open and sees that task. An OIDC ID token's
// socket closes with 4401 "token expired" at the token's `exp`.

import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import WebSocket from 'ws';

import type { AgentEvent } from '../../pkg/api/event.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { type OidcIssuer, startOidcIssuer } from '../support/oidc-issuer.js';
import { tokenFileYaml } from '../support/tokens.js';

const RELOAD_MS = 250;
/** The reload interval, and room for a loaded 2-core machine to run the timer and close. */
const CLOSE_WITHIN_MS = RELOAD_MS + 1_500;
const B = '/apis/agentplane.io/v1alpha1';

const TOKENS = {
  admin: 'admin-revocation-7f3e9a1b2c4d',
  leaving: 'leaving-revocation-0a9b8c7d6e5f',
  narrowed: 'narrowed-revocation-1b2c3d4e5f6a',
};
const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const bearerProtocol = (token: string): string => `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;

/** An event WebSocket that records what it got and how it closed (and when). */
class Socket {
  readonly events: AgentEvent[] = [];
  closed?: { code: number; reason: string; at: number };
  constructor(readonly ws: WebSocket) {
    ws.on('message', (m) => this.events.push(JSON.parse((m as Buffer).toString()) as AgentEvent));
    ws.on('close', (code, reason) => (this.closed = { code, reason: String(reason), at: Date.now() }));
  }
  static open(url: string, opts: WebSocket.ClientOptions & { protocols?: string[] }): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url.replace(/^http/, 'ws'), opts.protocols ?? [], opts);
      const s = new Socket(ws);
      ws.once('open', () => resolve(s));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }
}

/** A streamed GET (watch, log follow): the lines it got, and when it ended. */
class Stream {
  text = '';
  endedAt?: number;
  status = 0;
  static open(h: Harness, path: string, token: string): Promise<Stream> {
    return new Promise((resolve, reject) => {
      const s = new Stream();
      const req = request({ host: '127.0.0.1', port: h.server.port, path, headers: auth(token) }, (res) => {
        s.status = res.statusCode ?? 0;
        res.on('data', (c: Buffer) => (s.text += String(c)));
        res.on('end', () => (s.endedAt = Date.now()));
        res.on('error', () => (s.endedAt ??= Date.now()));
        resolve(s);
      });
      req.on('error', reject);
      req.end();
    });
  }
}

describe('revocation of open connections (security)', function () {
  this.timeout(120_000);
  let h: Harness;
  let dir: string;
  let tokenFile: string;
  const replaceFile = (text: string): void => {
    writeFileSync(`${tokenFile}.tmp`, text);
    renameSync(`${tokenFile}.tmp`, tokenFile);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-revocation-'));
    tokenFile = join(dir, 'tokens.yaml');
    writeFileSync(
      tokenFile,
      tokenFileYaml([
        { user: 'admin', token: TOKENS.admin },
        { user: 'leaving', token: TOKENS.leaving },
        { user: 'narrowed', token: TOKENS.narrowed },
      ]),
    );
    h = await startHarness({ tokenFile, tokenFileReloadMs: RELOAD_MS });
    const created = await h.api('POST', '/api/v1/agents', { name: 'watched', instructions: '@say first' }, auth(TOKENS.admin));
    expect(created.status, created.text).to.equal(201);
    await eventually(
      async () => (await h.api('GET', '/api/v1/agents/watched', undefined, auth(TOKENS.admin))).body.taskStatus === 'Complete',
      60_000,
      'the first task done',
    );
  });
  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes the sockets and ends the streams of a removed or narrowed token within the reload interval; no later event reaches them', async () => {
    const ws = `${h.url}/api/v1/agents/watched/ws`;
    const leavingHeader = await Socket.open(ws, { headers: auth(TOKENS.leaving) });
    const leavingProtocol = await Socket.open(ws, { protocols: [bearerProtocol(TOKENS.leaving)] });
    const narrowed = await Socket.open(ws, { headers: auth(TOKENS.narrowed) });
    const admin = await Socket.open(ws, { headers: auth(TOKENS.admin) });
    const watch = await Stream.open(h, `${B}/namespaces/default/agents?watch=true`, TOKENS.leaving);
    const log = await Stream.open(h, `${B}/namespaces/default/agents/watched/log?follow=true`, TOKENS.leaving);
    expect([watch.status, log.status]).to.deep.equal([200, 200]);
    await eventually(async () => watch.text.includes('"ADDED"'), 10_000, 'the watch started');

    const removedAt = Date.now();
    replaceFile(
      tokenFileYaml([
        { user: 'admin', token: TOKENS.admin },
        { user: 'narrowed', namespaces: ['elsewhere'], token: TOKENS.narrowed },
      ]),
    );
    await eventually(
      async () => leavingHeader.closed && leavingProtocol.closed && narrowed.closed && watch.endedAt && log.endedAt,
      CLOSE_WITHIN_MS + 2_000,
      'every revoked connection ended',
    );
    for (const s of [leavingHeader, leavingProtocol, narrowed]) {
      expect(s.closed).to.include({ code: 4401, reason: 'token revoked' });
      expect(s.closed!.at - removedAt, 'closed within the reload interval').to.be.below(CLOSE_WITHIN_MS);
    }
    for (const s of [watch, log]) expect(s.endedAt! - removedAt, 'ended within the reload interval').to.be.below(CLOSE_WITHIN_MS);
    expect(admin.closed, 'an unchanged token keeps its socket').to.equal(undefined);

    // A new task: the admin's socket sees it, the revoked ones nothing of it.
    const seenBefore = [leavingHeader, leavingProtocol, narrowed].map((s) => s.events.length);
    const watchBefore = watch.text.length;
    const logBefore = log.text.length;
    const next = await h.api('POST', '/api/v1/agents', { name: 'watched', instructions: '@say second' }, auth(TOKENS.admin));
    expect(next.status, next.text).to.equal(200);
    await eventually(
      async () => admin.events.some((e) => e.type === 'task_completed' && (e.payload as { result?: string }).result === 'second'),
      60_000,
      "the admin's socket saw the new task end",
    );
    expect([leavingHeader, leavingProtocol, narrowed].map((s) => s.events.length)).to.deep.equal(seenBefore);
    expect(watch.text.length).to.equal(watchBefore);
    expect(log.text.length).to.equal(logBefore);
    admin.ws.close();

    // And the next request is refused, as before.
    expect((await h.api('GET', '/api/v1/agents', undefined, auth(TOKENS.leaving))).status).to.equal(401);
    expect((await h.api('GET', '/api/v1/agents/watched', undefined, auth(TOKENS.narrowed))).status).to.equal(403);
  });

  describe('OIDC', () => {
    let oidc: Harness;
    let issuer: OidcIssuer;
    before(async () => {
      issuer = await startOidcIssuer(dir, 'agentplane');
      const file = join(dir, 'oidc-tokens.yaml');
      writeFileSync(file, tokenFileYaml([{ user: 'admin', token: TOKENS.admin }], 'grants:\n  - group: devs\n    namespaces: "*"\n    verbs: "*"\n'));
      oidc = await startHarness({
        tokenFile: file,
        tokenFileReloadMs: RELOAD_MS,
        oidc: { issuerUrl: issuer.url, clientId: 'agentplane', groupsClaim: 'groups', caFile: issuer.caFile },
      });
      const created = await oidc.api('POST', '/api/v1/agents', { name: 'watched', instructions: '@say hi' }, auth(TOKENS.admin));
      expect(created.status, created.text).to.equal(201);
    });
    after(async () => {
      await oidc?.close();
      await issuer?.close();
    });

    it("closes an ID token's socket with 4401 at the token's expiry", async () => {
      const exp = Math.floor(Date.now() / 1000) + 4;
      const token = await issuer.token({ sub: 'carol', groups: ['devs'] }, { expiresIn: exp });
      const s = await Socket.open(`${oidc.url}/api/v1/agents/watched/ws`, { headers: auth(token) });
      await eventually(async () => s.closed, 15_000, 'the socket closed');
      expect(s.closed).to.include({ code: 4401, reason: 'token expired' });
      expect(s.closed!.at, 'not before the expiry').to.be.at.least(exp * 1000 - 50);
      expect(s.closed!.at - exp * 1000, 'at the expiry').to.be.below(1_500);
    });
  });
});
