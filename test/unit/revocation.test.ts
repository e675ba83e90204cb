// Revocation of credentials that opened long-lived connections (pkg/server/auth/revocation.ts):
// the token file revokes a token it no longer holds, or holds with another scope, on reload;
// grant users when their grants change; an expiring credential at its expiry. Listeners that
// stopped leave nothing behind.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';

import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { createApp } from '../../pkg/server/app.js';
import { installAuthFilter } from '../../pkg/server/auth/filter.js';
import { either, expiringAt, RevocationList, TOKEN_EXPIRED, TOKEN_REVOKED } from '../../pkg/server/auth/revocation.js';
import { TokenFileAuthenticator, TokenScopeAuthorizer } from '../../pkg/server/auth/token-file.js';
import { tokenFileYaml } from '../support/tokens.js';

const logger = createLogger({ level: 'silent' });
const bearer = (t: string): string[] => ['Authorization', `Bearer ${t}`];

describe('credential revocation', () => {
  let dir: string;
  let path: string;
  let authn: TokenFileAuthenticator;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'revocation-'));
    path = join(dir, 'tokens.yaml');
    writeFileSync(
      path,
      tokenFileYaml(
        [
          { user: 'a', token: 'tok-a' },
          { user: 'b', namespaces: ['x'], token: 'tok-b' },
          { user: 'c', token: 'tok-c' },
        ],
        'grants:\n  - group: devs\n    namespaces: [x]\n    verbs: "*"\n',
      ),
    );
    authn = new TokenFileAuthenticator({ path, logger, reloadIntervalMs: 60_000 });
    authn.start();
  });
  afterEach(() => {
    authn.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const listen = async (token: string): Promise<{ reasons: string[]; stop: () => void }> => {
    const r = await authn.authenticate({ rawHeaders: bearer(token) });
    if (!r.user) throw new Error(`${token} was not accepted`);
    const reasons: string[] = [];
    const stop = r.revocable!.onRevoked((why: string) => reasons.push(why));
    return { reasons, stop };
  };

  it('revokes a removed token and one whose scope changed, once; keeps an unchanged one', async () => {
    const [a, b, c] = [await listen('tok-a'), await listen('tok-b'), await listen('tok-c')];
    writeFileSync(
      path,
      tokenFileYaml([
        { user: 'a', token: 'tok-a' },
        { user: 'b', namespaces: ['y'], token: 'tok-b' },
      ]),
    );
    authn.reload();
    expect(a.reasons).to.deep.equal([]);
    expect(b.reasons).to.deep.equal([TOKEN_REVOKED]);
    expect(c.reasons).to.deep.equal([TOKEN_REVOKED]);
    // Fired listeners are forgotten: a later reload does not fire them again.
    writeFileSync(path, tokenFileYaml([{ user: 'z', token: 'tok-z' }]));
    authn.reload();
    expect(b.reasons).to.have.length(1);
    expect(a.reasons).to.deep.equal([TOKEN_REVOKED]);
    expect(authn.listening).to.equal(0);
  });

  it('a renamed user is a changed scope; an invalid file revokes nothing', async () => {
    const a = await listen('tok-a');
    writeFileSync(path, 'tokens: [not a mapping]');
    authn.reload();
    expect(a.reasons).to.deep.equal([]);
    writeFileSync(path, tokenFileYaml([{ user: 'renamed', token: 'tok-a' }]));
    authn.reload();
    expect(a.reasons).to.deep.equal([TOKEN_REVOKED]);
  });

  it('stopping a listener leaves nothing behind', async () => {
    const all = await Promise.all(['tok-a', 'tok-b', 'tok-a'].map(listen));
    expect(authn.listening).to.equal(3);
    all.forEach((l) => l.stop());
    expect(authn.listening).to.equal(0);
    writeFileSync(path, tokenFileYaml([{ user: 'z', token: 'tok-z' }]));
    authn.reload();
    expect(all.flatMap((l) => l.reasons)).to.deep.equal([]);
  });

  it("revokes a grant user's connection when the grants naming them change, not others'", () => {
    const dev = { username: 'https://issuer#carol', groups: ['devs', 'system:authenticated'], extra: {} };
    const other = { username: 'https://issuer#dan', groups: ['ops', 'system:authenticated'], extra: {} };
    const got: string[] = [];
    authn.grantsRevocable(dev).onRevoked((why) => got.push(`dev ${why}`));
    authn.grantsRevocable(other).onRevoked((why) => got.push(`other ${why}`));
    writeFileSync(path, tokenFileYaml([{ user: 'a', token: 'tok-a' }], 'grants:\n  - group: devs\n    namespaces: [x, y]\n    verbs: "*"\n'));
    authn.reload();
    expect(got).to.deep.equal([`dev ${TOKEN_REVOKED}`]);
  });

  it('expiringAt fires at the expiry (at once when past) and not after stop; either fires once', async () => {
    const got: string[] = [];
    expiringAt(Date.now() - 1).onRevoked((why) => got.push(`past ${why}`));
    expect(got).to.deep.equal([`past ${TOKEN_EXPIRED}`]);
    expiringAt(Date.now() + 50).onRevoked((why) => got.push(`soon ${why}`));
    const stop = expiringAt(Date.now() + 50).onRevoked((why) => got.push(`stopped ${why}`));
    stop();
    const list = new RevocationList<string>();
    either(expiringAt(Date.now() + 60), list.revocable('k')).onRevoked((why) => got.push(`either ${why}`));
    await new Promise((r) => setTimeout(r, 120));
    list.check(() => false, TOKEN_REVOKED);
    expect(got).to.deep.equal([`past ${TOKEN_EXPIRED}`, `soon ${TOKEN_EXPIRED}`, `either ${TOKEN_EXPIRED}`]);
    expect(list.size).to.equal(0);
  });

  it('through the filter: a streamed response ends when its token is revoked, and finished requests leave no listener', async () => {
    const app = await createApp({ logger, metrics: new Metrics() });
    installAuthFilter(app, { authenticator: authn, authorizer: new TokenScopeAuthorizer() });
    app.get('/apis/x', async () => ({ ok: true }));
    app.get('/apis/stream', (_req, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/plain' });
      reply.raw.write('started\n');
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      for (let i = 0; i < 20; i++) expect((await fetch(`${url}/apis/x`, { headers: { authorization: 'Bearer tok-a' } })).status).to.equal(200);
      expect(authn.listening, 'no listener left by finished requests').to.equal(0);
      const res = await fetch(`${url}/apis/stream`, { headers: { authorization: 'Bearer tok-b' } });
      const body = res.text();
      expect(authn.listening).to.equal(1);
      writeFileSync(path, tokenFileYaml([{ user: 'a', token: 'tok-a' }]));
      authn.reload();
      expect(await body).to.equal('started\n');
      await new Promise((r) => setTimeout(r, 50));
      expect(authn.listening).to.equal(0);
    } finally {
      await app.close();
    }
  });
});
