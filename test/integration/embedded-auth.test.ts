// Authentication and authorization in the embedded home, on a real server with real HTTP and
// WebSocket clients: a non-loopback bind without a token file refuses to start; with a token
// file (on 127.0.0.1) every request but the health probes needs a bearer token (/metrics too,
// unless metricsAuth is false),
// scoped to namespaces and verbs, on the REST mirror, the aggregated API and the WebSocket.

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { expect } from 'chai';
import WebSocket from 'ws';

import { hashToken } from '../../pkg/server/auth/token-file.js';
import { tokenFileYaml } from '../support/tokens.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { type OidcIssuer, startOidcIssuer } from '../support/oidc-issuer.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
const B = '/apis/agentplane.io/v1alpha1';

const TOKENS = {
  admin: 'admin-3b1f0c2e9d8a7465',
  alice: 'alice-8c2d4e6f0a1b3c5d', // team-a, every verb
  reader: 'reader-5e7f9a1b3c5d7e9f', // team-a, get/list/watch
  wrong: 'alice-8c2d4e6f0a1b3c5e', // alice's, one character off
  fresh: 'fresh-0f1e2d3c4b5a6978',
};

const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const bearerProtocol = (token: string): string => `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;

type Upgrade = { status: number } | { opened: WebSocket; protocol: string; first: string };

/** Opens a WebSocket; resolves with the refusal's HTTP status, or the open socket and its first message. */
function connect(url: string, opts: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<Upgrade> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), opts.protocols ?? [], { headers: opts.headers ?? {} });
    ws.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.on('message', (m) => resolve({ opened: ws, protocol: ws.protocol, first: (m as Buffer).toString() }));
    ws.on('error', reject);
  });
}

describe('embedded home auth (integration)', function () {
  this.timeout(90_000);

  describe('without a token file', () => {
    it('refuses to listen on 0.0.0.0, saying how to configure a token file', async () => {
      let err: Error | undefined;
      try {
        const h = await startHarness({ host: '0.0.0.0' });
        await h.close();
      } catch (e) {
        err = e as Error;
      }
      expect(err, 'startServer must refuse').to.be.instanceOf(Error);
      expect(err!.message).to.include('refusing to listen on 0.0.0.0 without authentication');
      for (const how of ['--token-file', 'AGENTPLANE_TOKEN_FILE', '"tokenFile"']) expect(err!.message).to.include(how);
    });

    it('the CLI exits with the same message for a non-loopback address, and lists the auth flags in --help', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-bind-'));
      try {
        const out = await run(process.execPath, [MAIN, 'serve', '--host', '::', '--port', '0', '--data-dir', dataDir], {
          env: { ...process.env, AGENTPLANE_TOKEN_FILE: '' },
        }).then(
          () => ({ code: 0, stderr: '' }),
          (e: { code: number; stderr: string }) => e,
        );
        expect(out.code).to.equal(2);
        expect(out.stderr).to.include('refusing to listen on :: without authentication');
        expect(out.stderr).to.include('--token-file');
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
      const help = (await run(process.execPath, [MAIN, 'serve', '--help'])).stdout;
      for (const flag of [
        '--token-file',
        'AGENTPLANE_TOKEN_FILE',
        '--metrics-auth',
        '--no-metrics-auth',
        'AGENTPLANE_METRICS_AUTH',
        '--allowed-hosts',
        'AGENTPLANE_ALLOWED_HOSTS',
      ])
        expect(help).to.include(flag);
    });

    it('stays open on loopback', async () => {
      const h = await startHarness();
      try {
        expect((await h.api('GET', '/api/v1/agents')).status).to.equal(200);
        expect((await h.api('GET', `${B}/namespaces/default/agents`)).status).to.equal(200);
      } finally {
        await h.close();
      }
    });
  });

  describe('with a token file, on 127.0.0.1', () => {
    let h: Harness;
    let dir: string;
    let tokenFile: string;
    const initial = tokenFileYaml([
      { user: 'admin', token: TOKENS.admin },
      { user: 'alice', namespaces: ['team-a'], token: TOKENS.alice },
      { user: 'reader', namespaces: ['team-a'], verbs: ['get', 'list', 'watch'], token: TOKENS.reader },
    ]);
    /** Replaces the file as editors and config management do: write aside, then rename over. */
    const replaceFile = (text: string): void => {
      writeFileSync(`${tokenFile}.tmp`, text);
      renameSync(`${tokenFile}.tmp`, tokenFile);
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'agentplane-auth-'));
      tokenFile = join(dir, 'tokens.yaml');
      writeFileSync(tokenFile, initial);
      h = await startHarness({ host: '127.0.0.1', tokenFile, tokenFileReloadMs: 250 });
      const created = await h.api(
        'POST',
        '/api/v1/agents',
        { name: 'watched', namespace: 'team-a', instructions: '@say hello from team-a' },
        auth(TOKENS.alice),
      );
      expect(created.status, created.text).to.equal(201);
    });
    after(async () => {
      await h?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('lets workers through on their own credentials: a task reaches the model and completes', async () => {
      // The control channel and the model proxy are not for users: a token file must not lock
      // the agents' own workers out.
      await eventually(
        async () => (await h.api('GET', '/api/v1/agents/watched?namespace=team-a', undefined, auth(TOKENS.alice))).body.taskStatus === 'Complete',
        60_000,
        'the first task of "watched" completed',
      );
      const events = await h.api('GET', '/api/v1/agents/watched/events?namespace=team-a', undefined, auth(TOKENS.alice));
      expect(events.body.events.at(-1)).to.deep.include({ type: 'task_completed' });
      expect(events.body.events.at(-1).payload.result).to.equal('hello from team-a');
    });

    it('keeps only hashes in the token file', () => {
      const text = readFileSync(tokenFile, 'utf8');
      for (const t of Object.values(TOKENS)) expect(text).not.to.include(t);
      expect(text).to.include(hashToken(TOKENS.alice));
    });

    it('answers 401 without a token and with a wrong one, on REST, the aggregated API and the WebSocket', async () => {
      for (const headers of [{}, auth(TOKENS.wrong), { authorization: `Bearer ${hashToken(TOKENS.alice)}` }]) {
        const rest = await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, headers);
        expect(rest.status).to.equal(401);
        expect(rest.body).to.include({ reason: 'Unauthorized', code: 401 });
        const agg = await h.api('GET', `${B}/namespaces/team-a/agents`, undefined, headers);
        expect(agg.status).to.equal(401);
        expect(agg.body).to.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
        expect(await connect(`${h.url}/api/v1/agents/watched/ws?namespace=team-a`, { headers })).to.deep.equal({ status: 401 });
      }
      expect(await connect(`${h.url}/api/v1/agents/watched/ws?namespace=team-a`, { protocols: [bearerProtocol(TOKENS.wrong)] })).to.deep.equal({ status: 401 });
      // Writes are refused before they happen.
      const post = await h.api('POST', '/api/v1/secrets', { name: 'nope', namespace: 'team-a', data: { token: 'x' } });
      expect(post.status).to.equal(401);
      expect((await h.api('GET', '/api/v1/secrets/nope?namespace=team-a', undefined, auth(TOKENS.admin))).status).to.equal(404);
    });

    it('leaves /healthz open and guards /metrics, which names namespaces and agents', async () => {
      expect((await h.api('GET', '/healthz')).status).to.equal(200);
      expect((await h.api('GET', '/readyz')).status).to.equal(200);
      const metrics = await h.api('GET', '/metrics');
      expect(metrics.status).to.equal(401);
      expect(metrics.text).not.to.include('team-a');
      const withToken = await h.api('GET', '/metrics', undefined, auth(TOKENS.reader));
      expect(withToken.status).to.equal(200);
      expect(withToken.text).to.include('# HELP');
      // Everything else needs a token, discovery and OpenAPI included.
      expect((await h.api('GET', '/apis')).status).to.equal(401);
      expect((await h.api('GET', '/openapi.json')).status).to.equal(401);
      expect((await h.api('GET', '/openapi.json', undefined, auth(TOKENS.reader))).status).to.equal(200);
    });

    it("answers 200 within the token's scope", async () => {
      const secret = await h.api('POST', '/api/v1/secrets', { name: 'gh', namespace: 'team-a', data: { token: 'ghp_x' } }, auth(TOKENS.alice));
      expect(secret.status, secret.text).to.equal(201);
      const list = await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(TOKENS.reader));
      expect(list.status).to.equal(200);
      expect(list.body.agents.map((a: { name: string }) => a.name)).to.include('watched');
      const agg = await h.api('GET', `${B}/namespaces/team-a/agents/watched`, undefined, auth(TOKENS.reader));
      expect(agg.status).to.equal(200);
      expect(agg.body.metadata).to.include({ name: 'watched', namespace: 'team-a' });
      expect((await h.api('GET', '/api/v1/secrets?namespace=team-a', undefined, auth(TOKENS.reader))).status).to.equal(200);
      // Every namespace at once: only for a token with namespaces "*".
      expect((await h.api('GET', '/api/v1/agents', undefined, auth(TOKENS.admin))).status).to.equal(200);
      expect((await h.api('GET', `${B}/agents`, undefined, auth(TOKENS.admin))).status).to.equal(200);
    });

    it('answers 403 in another namespace', async () => {
      const rest = await h.api('POST', '/api/v1/secrets', { name: 'gh', namespace: 'team-b', data: { token: 'x' } }, auth(TOKENS.alice));
      expect(rest.status).to.equal(403);
      expect(rest.body.reason).to.equal('Forbidden');
      expect(rest.body.error).to.include('User "alice" cannot create resource "secrets"').and.include('in the namespace "team-b"');
      expect((await h.api('GET', '/api/v1/agents/watched?namespace=team-b', undefined, auth(TOKENS.alice))).status).to.equal(403);
      const agg = await h.api('GET', `${B}/namespaces/team-b/agents`, undefined, auth(TOKENS.alice));
      expect(agg.status).to.equal(403);
      expect(agg.body).to.include({ kind: 'Status', reason: 'Forbidden', code: 403 });
      // A list across every namespace would include team-b.
      expect((await h.api('GET', '/api/v1/agents', undefined, auth(TOKENS.alice))).status).to.equal(403);
      expect((await h.api('GET', `${B}/agents`, undefined, auth(TOKENS.alice))).status).to.equal(403);
      expect((await h.api('GET', '/api/v1/secrets/gh?namespace=team-b', undefined, auth(TOKENS.admin))).status).to.equal(404);
    });

    it('answers 403 for a verb the token does not have (a read-only token writing)', async () => {
      const post = await h.api('POST', '/api/v1/agents', { name: 'sneaky', namespace: 'team-a', instructions: '@say no' }, auth(TOKENS.reader));
      expect(post.status).to.equal(403);
      expect(post.body.error).to.include('User "reader" cannot create resource "agents"').and.include('the token allows the verbs get, list, watch');
      const del = await h.api('DELETE', '/api/v1/agents/watched?namespace=team-a', undefined, auth(TOKENS.reader));
      expect(del.status).to.equal(403);
      const agg = await h.api(
        'POST',
        `${B}/namespaces/team-a/connectors`,
        { apiVersion: 'agentplane.io/v1alpha1', kind: 'Connector', metadata: { name: 'c' }, spec: { url: 'http://127.0.0.1:9/mcp', service: 'github' } },
        auth(TOKENS.reader),
      );
      expect(agg.status).to.equal(403);
      expect(agg.body.reason).to.equal('Forbidden');
      expect((await h.api('GET', '/api/v1/agents/sneaky?namespace=team-a', undefined, auth(TOKENS.admin))).status).to.equal(404);
      expect((await h.api('GET', '/api/v1/agents/watched?namespace=team-a', undefined, auth(TOKENS.admin))).status).to.equal(200);
    });

    it('opens the WebSocket with an Authorization header, and refuses it out of scope', async () => {
      const ok = await connect(`${h.url}/api/v1/agents/watched/ws?namespace=team-a`, { headers: auth(TOKENS.reader) });
      expect('opened' in ok, JSON.stringify(ok)).to.equal(true);
      if ('opened' in ok) {
        expect(JSON.parse(ok.first)).to.include({ agentName: 'watched', namespace: 'team-a' });
        ok.opened.close();
      }
      expect(await connect(`${h.url}/api/v1/agents/watched/ws?namespace=team-b`, { headers: auth(TOKENS.reader) })).to.deep.equal({ status: 403 });
    });

    it('opens the WebSocket with the bearer subprotocol, answering with a protocol the client offered', async () => {
      const url = `${h.url}/api/v1/agents/watched/ws?namespace=team-a`;
      // A browser that offers an application protocol besides its token gets that one back.
      const two = await connect(url, { protocols: [bearerProtocol(TOKENS.reader), 'agentplane.io.events'] });
      expect('opened' in two, JSON.stringify(two)).to.equal(true);
      if ('opened' in two) {
        expect(two.protocol).to.equal('agentplane.io.events');
        expect(JSON.parse(two.first)).to.include({ agentName: 'watched', namespace: 'team-a' });
        two.opened.close();
      }
      // Offering only the token protocol: it is the only answer the client accepts.
      const one = await connect(url, { protocols: [bearerProtocol(TOKENS.reader)] });
      expect('opened' in one, JSON.stringify(one)).to.equal(true);
      if ('opened' in one) {
        expect(one.protocol).to.equal(bearerProtocol(TOKENS.reader));
        one.opened.close();
      }
      // The subprotocol token is scoped like any other.
      expect(await connect(`${h.url}/api/v1/agents/watched/ws?namespace=team-b`, { protocols: [bearerProtocol(TOKENS.reader)] })).to.deep.equal({
        status: 403,
      });
    });

    it('never logs a token', () => {
      const logs = h.logs.join('\n');
      for (const t of Object.values(TOKENS)) expect(logs).not.to.include(t);
    });

    it('reloads the file: a removed token stops working and a new one works within seconds; a broken file keeps the last good one', async () => {
      expect((await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(TOKENS.reader))).status).to.equal(200);
      replaceFile(
        tokenFileYaml([
          { user: 'admin', token: TOKENS.admin },
          { user: 'fresh', namespaces: ['team-a'], verbs: ['list'], token: TOKENS.fresh },
        ]),
      );
      await eventually(
        async () => (await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(TOKENS.reader))).status === 401,
        5_000,
        'the removed token to be refused',
      );
      expect((await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(TOKENS.fresh))).status).to.equal(200);
      expect((await h.api('GET', '/api/v1/agents/watched?namespace=team-a', undefined, auth(TOKENS.fresh))).status).to.equal(403);

      const errorsBefore = h.logs.filter((l) => l.includes('the token file is invalid')).length;
      replaceFile('tokens:\n  - user: broken\n    token: plain-text\n');
      await eventually(
        async () => h.logs.filter((l) => l.includes('the token file is invalid')).length > errorsBefore,
        5_000,
        'an error about the invalid file',
      );
      expect((await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(TOKENS.fresh))).status).to.equal(200);
      replaceFile(initial);
      await eventually(
        async () => (await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(TOKENS.reader))).status === 200,
        5_000,
        'the restored token',
      );
    });

    it('leaves /metrics open when the operator opts out (metricsAuth false)', async () => {
      await h.restart({ metricsAuth: false });
      const open = await h.api('GET', '/metrics');
      expect(open.status).to.equal(200);
      expect(open.text).to.include('# HELP');
      expect((await h.api('GET', '/api/v1/agents')).status).to.equal(401);
      expect((await h.api('GET', '/healthz')).status).to.equal(200);
    });
  });
});

describe('embedded home auth with OIDC ID tokens (integration)', function () {
  this.timeout(90_000);
  const CLIENT = 'agentplane';
  let h: Harness;
  let dir: string;
  let issuer: OidcIssuer;
  /** A token of `sub` in `groups`, signed by the issuer's current key unless told otherwise. */
  const idToken = (sub: string, groups: string[] = [], opts: Parameters<OidcIssuer['token']>[1] = {}): Promise<string> => issuer.token({ sub, groups }, opts);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-oidc-'));
    issuer = await startOidcIssuer(dir, CLIENT);
    const tokenFile = join(dir, 'tokens.yaml');
    writeFileSync(
      tokenFile,
      tokenFileYaml(
        [{ user: 'admin', token: TOKENS.admin }],
        [
          'grants:',
          '  - group: team-a-devs',
          '    namespaces: [team-a]',
          '    verbs: "*"',
          `  - user: "${issuer.url}#bob"`,
          '    namespaces: [team-b]',
          '    verbs: [get, list, watch]',
          '',
        ].join('\n'),
      ),
    );
    h = await startHarness({ host: '127.0.0.1', tokenFile, oidc: { issuerUrl: issuer.url, clientId: CLIENT, groupsClaim: 'groups', caFile: issuer.caFile } });
  });
  after(async () => {
    await h?.close();
    await issuer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets a member of a granted group work in its namespace, on REST and the aggregated API, and the token-file tokens still work', async () => {
    const alice = await idToken('alice', ['team-a-devs', 'other']);
    const created = await h.api('POST', '/api/v1/agents', { name: 'oidc-made', namespace: 'team-a', instructions: '@say hi' }, auth(alice));
    expect(created.status, created.text).to.equal(201);
    expect((await h.api('GET', `${B}/namespaces/team-a/agents/oidc-made`, undefined, auth(alice))).status).to.equal(200);
    expect((await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(TOKENS.admin))).status).to.equal(200);
  });

  it('answers 403 outside the grants, naming what the grants allow', async () => {
    const alice = await idToken('alice', ['team-a-devs']);
    const other = await h.api('GET', '/api/v1/agents?namespace=team-b', undefined, auth(alice));
    expect(other.status).to.equal(403);
    expect(other.body.error).to.include(`User "${issuer.url}#alice"`).and.include('the grant for group team-a-devs allows the namespaces team-a');

    const bob = await idToken('bob');
    expect((await h.api('GET', '/api/v1/agents?namespace=team-b', undefined, auth(bob))).status).to.equal(200);
    const write = await h.api('POST', '/api/v1/agents', { name: 'x', namespace: 'team-b', instructions: 'hi' }, auth(bob));
    expect(write.status).to.equal(403);
    expect(write.body.error).to.include('allows the verbs get, list, watch');

    const nobody = await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(await idToken('carol', ['strangers'])));
    expect(nobody.status).to.equal(403);
    expect(nobody.body.error).to.include('no grant in the token file names the user');
  });

  it('answers 401 to tokens that are expired, for another audience or issuer, signed by a foreign key, or not signed at all', async () => {
    await issuer.addKey('foreign', { publish: false });
    const bad = {
      expired: await idToken('alice', ['team-a-devs'], { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      audience: await idToken('alice', ['team-a-devs'], { audience: 'someone-else' }),
      issuer: await issuer.token({ sub: 'alice', groups: ['team-a-devs'], iss: 'https://evil.example' }),
      foreignKey: await idToken('alice', ['team-a-devs'], { kid: 'foreign' }),
      unsigned: `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'alice', groups: ['team-a-devs'], iss: issuer.url, aud: CLIENT, exp: 9999999999 })).toString('base64url')}.x`,
    };
    for (const [what, token] of Object.entries(bad)) {
      const r = await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(token));
      expect(r.status, what).to.equal(401);
    }
    for (const token of Object.values(bad)) expect(h.logs.join('\n')).not.to.include(token);
  });

  it('follows a key rotation: a token signed by a newly published key works within seconds, and unknown keys do not flood the issuer', async () => {
    await issuer.addKey('k2', { alg: 'ES256' });
    const rotated = await idToken('alice', ['team-a-devs'], { kid: 'k2' });
    await eventually(
      async () => (await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(rotated))).status === 200,
      10_000,
      'the token signed by the new key to be accepted',
    );

    const before = issuer.jwksFetches();
    const forged = await idToken('alice', ['team-a-devs'], { kid: 'foreign' });
    for (let i = 0; i < 20; i++) expect((await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(forged))).status).to.equal(401);
    expect(issuer.jwksFetches() - before).to.be.at.most(1);
  });

  it('opens the WebSocket with an ID token in the bearer subprotocol', async () => {
    const alice = await idToken('alice', ['team-a-devs']);
    const ok = await connect(`${h.url}/api/v1/agents/oidc-made/ws?namespace=team-a`, { protocols: [bearerProtocol(alice)] });
    expect(ok).to.have.property('opened');
    if ('opened' in ok) ok.opened.close();
    expect(await connect(`${h.url}/api/v1/agents/oidc-made/ws?namespace=team-a`, { protocols: [bearerProtocol(`${alice}x`)] })).to.deep.equal({ status: 401 });
  });

  it('the CLI refuses an issuer that is not https, OIDC without a token file, and stray --oidc-* flags', async () => {
    const cli = async (args: string[]): Promise<string> => {
      try {
        await run(process.execPath, [MAIN, 'serve', '--data-dir', join(dir, 'cli'), ...args], { timeout: 20_000 });
        return '';
      } catch (err) {
        return String((err as { stderr?: string }).stderr);
      }
    };
    const tokenFile = join(dir, 'tokens.yaml');
    expect(await cli(['--token-file', tokenFile, '--oidc-issuer-url', 'http://127.0.0.1:1', '--oidc-client-id', 'x'])).to.include(
      '--oidc-issuer-url must use https',
    );
    expect(await cli(['--oidc-issuer-url', issuer.url, '--oidc-client-id', 'x'])).to.include('--oidc-issuer-url needs --token-file');
    expect(await cli(['--token-file', tokenFile, '--oidc-issuer-url', issuer.url])).to.include('--oidc-client-id is required');
    expect(await cli(['--token-file', tokenFile, '--oidc-client-id', 'x'])).to.include('--oidc-* settings need --oidc-issuer-url');
  });
});
