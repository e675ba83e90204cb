// The embedded home's token file: parsing, hashed tokens compared in constant time, the scope
// authorizer, the WebSocket bearer subprotocol, reload, and the loopback check.

import { timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

import { expect } from 'chai';

import { createLogger } from '../../pkg/observability/logger.js';
import { planFor, type RequestAttributes } from '../../pkg/server/auth/attributes.js';
import {
  compareHashes,
  hashToken,
  isLoopbackHost,
  parseAccessFile,
  parseTokenFile,
  selectWebSocketProtocol,
  TokenFileAuthenticator,
  TokenScopeAuthorizer,
} from '../../pkg/server/auth/token-file.js';
import { wsProtocolToken } from '../../pkg/server/auth/authenticator.js';
import type { UserInfo } from '../../pkg/server/auth/user.js';

const logger = createLogger({ level: 'silent' });
const bearer = (t: string): string[] => ['Authorization', `Bearer ${t}`];
const entry = (user: string, token: string, namespaces: unknown = '*', verbs: unknown = '*') => ({ user, namespaces, verbs, tokenHash: hashToken(token) });
const res = (verb: string, namespace: string, resource = 'agents', group = 'agentplane.io'): RequestAttributes => ({
  resource: { verb, group, version: 'v1alpha1', resource, subresource: '', namespace, name: '' },
});

describe('auth: token file (embedded home)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-tokens-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (doc: unknown, name = 'tokens.json'): string => {
    const path = join(dir, name);
    writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
    return path;
  };

  describe('parsing', () => {
    it('reads YAML and JSON, with "*" or lists', () => {
      const h = hashToken('t1');
      const yaml = parseTokenFile(
        `tokens:\n  - user: alice\n    namespaces: [team-a, team-b]\n    verbs: [get, list]\n    tokenHash: ${h}\n  - user: root\n    namespaces: "*"\n    verbs: "*"\n    tokenHash: ${hashToken('t2')}\n`,
      );
      expect(yaml.map((e) => [e.user, e.namespaces, e.verbs])).to.deep.equal([
        ['alice', ['team-a', 'team-b'], ['get', 'list']],
        ['root', ['*'], ['*']],
      ]);
      expect(yaml[0].hash.toString('hex')).to.equal(h.slice('sha256:'.length));
      const json = parseTokenFile(JSON.stringify([entry('bob', 't3', ['x'], ['delete'])]));
      expect(json[0].user).to.equal('bob');
    });

    it('refuses a plain token, a bad hash, an unknown verb, a duplicate hash', () => {
      expect(() => parseTokenFile(JSON.stringify({ tokens: [{ user: 'a', namespaces: '*', verbs: '*', token: 'secret' }] }))).to.throw(/store only its hash/);
      expect(() => parseTokenFile(JSON.stringify({ tokens: [{ user: 'a', namespaces: '*', verbs: '*', tokenHash: 'md5:abc' }] }))).to.throw(
        /sha256:<64 hex digits>/,
      );
      expect(() => parseTokenFile(JSON.stringify({ tokens: [entry('a', 't', '*', ['get', 'escalate'])] }))).to.throw(/"escalate" is not one of/);
      expect(() => parseTokenFile(JSON.stringify({ tokens: [entry('a', 't'), entry('b', 't')] }))).to.throw(/appears twice/);
      expect(() => parseTokenFile('tokens: [')).to.throw(/not YAML or JSON/);
      expect(() => parseTokenFile('{}')).to.throw(/"tokens:"/);
    });
  });

  describe('authentication', () => {
    it('accepts the token whose hash is listed, and nothing else', async () => {
      const a = new TokenFileAuthenticator({ path: write({ tokens: [entry('alice', 'alice-token-0001', ['team-a'], ['get'])] }), logger });
      a.start();
      try {
        const ok = await a.authenticate({ rawHeaders: bearer('alice-token-0001') });
        expect(ok.user?.username).to.equal('alice');
        expect(ok.user?.groups).to.include('system:authenticated');
        expect(ok.user?.extra).to.deep.equal({ 'agentplane.io/namespaces': ['team-a'], 'agentplane.io/verbs': ['get'] });
        // Same length, one character off; the hash itself as a token; no token at all.
        const wrong = await a.authenticate({ rawHeaders: bearer('alice-token-0002') });
        expect(wrong.user).to.equal(undefined);
        expect((wrong as { errors: string[] }).errors).to.deep.equal(['token: not in the token file']);
        expect((await a.authenticate({ rawHeaders: bearer(hashToken('alice-token-0001')) })).user).to.equal(undefined);
        expect(await a.authenticate({ rawHeaders: [] })).to.deep.equal({ errors: [] });
      } finally {
        a.stop();
      }
    });

    it('compares hashes with crypto.timingSafeEqual, against every entry, without stopping at a match', async () => {
      expect(compareHashes).to.equal(timingSafeEqual);
      const calls: [number, number][] = [];
      const a = new TokenFileAuthenticator({
        path: write({ tokens: [entry('first', 'tok-aaaa'), entry('second', 'tok-bbbb'), entry('third', 'tok-cccc')] }),
        logger,
        compare: (x, y) => {
          calls.push([x.length, y.length]);
          return timingSafeEqual(x, y);
        },
      });
      a.start();
      try {
        // Equal-length tokens: a match on the first entry, on the last, and none.
        for (const [token, user] of [
          ['tok-aaaa', 'first'],
          ['tok-cccc', 'third'],
          ['tok-dddd', undefined],
        ] as const) {
          calls.length = 0;
          expect((await a.authenticate({ rawHeaders: bearer(token) })).user?.username).to.equal(user);
          expect(calls, token).to.deep.equal([
            [32, 32],
            [32, 32],
            [32, 32],
          ]);
        }
        // A token of another length still compares 32-byte hashes (no length leak, no throw).
        calls.length = 0;
        expect((await a.authenticate({ rawHeaders: bearer('x') })).user).to.equal(undefined);
        expect(calls).to.deep.equal([
          [32, 32],
          [32, 32],
          [32, 32],
        ]);
      } finally {
        a.stop();
      }
    });

    it('takes the WebSocket bearer subprotocol on upgrade requests only', async () => {
      const proto = `base64url.bearer.authorization.k8s.io.${Buffer.from('ws-token').toString('base64url')}`;
      const upgrade = ['Upgrade', 'websocket', 'Sec-WebSocket-Protocol', `${proto}, agentplane.io.events`];
      expect(wsProtocolToken(upgrade)).to.equal('ws-token');
      expect(wsProtocolToken(['Sec-WebSocket-Protocol', proto])).to.equal(undefined);
      expect(wsProtocolToken(['Upgrade', 'websocket', 'Sec-WebSocket-Protocol', 'base64url.bearer.authorization.k8s.io.a+b'])).to.equal(undefined);
      const a = new TokenFileAuthenticator({ path: write({ tokens: [entry('browser', 'ws-token')] }), logger });
      a.start();
      try {
        expect((await a.authenticate({ rawHeaders: upgrade })).user?.username).to.equal('browser');
      } finally {
        a.stop();
      }
      expect(selectWebSocketProtocol(new Set([proto, 'agentplane.io.events']))).to.equal('agentplane.io.events');
      expect(selectWebSocketProtocol(new Set([proto]))).to.equal(proto);
      expect(selectWebSocketProtocol(new Set())).to.equal(false);
    });

    it('reloads a changed file; an invalid one keeps the last good tokens and logs an error', async () => {
      const lines: string[] = [];
      const sink = new PassThrough();
      sink.on('data', (c: Buffer) => lines.push(...String(c).split('\n').filter(Boolean)));
      const path = write({ tokens: [entry('old', 'old-token')] });
      const a = new TokenFileAuthenticator({ path, logger: createLogger({ level: 'info', destination: sink }), reloadIntervalMs: 3_600_000 });
      a.start();
      try {
        writeFileSync(path, JSON.stringify({ tokens: [entry('new', 'new-token')] }));
        a.reload();
        expect((await a.authenticate({ rawHeaders: bearer('old-token') })).user).to.equal(undefined);
        expect((await a.authenticate({ rawHeaders: bearer('new-token') })).user?.username).to.equal('new');
        writeFileSync(path, 'tokens: [');
        a.reload();
        expect((await a.authenticate({ rawHeaders: bearer('new-token') })).user?.username).to.equal('new');
        await new Promise((r) => setImmediate(r));
        expect(lines.some((l) => l.includes('"level":50') && l.includes('the token file is invalid'))).to.equal(true);
      } finally {
        a.stop();
      }
    });

    it('will not start on a missing or invalid file', () => {
      expect(() => new TokenFileAuthenticator({ path: join(dir, 'missing.yaml'), logger }).start()).to.throw(/cannot read the token file/);
      expect(() => new TokenFileAuthenticator({ path: write('tokens: 3'), logger }).start()).to.throw(/"tokens" must be a list/);
      expect(() => new TokenFileAuthenticator({ path: write('{}'), logger }).start()).to.throw(/"tokens:" \(and\/or "grants:"\)/);
    });
  });

  describe('authorization (namespaces × verbs)', () => {
    const z = new TokenScopeAuthorizer();
    const user = (namespaces: string[], verbs: string[]): UserInfo => ({
      username: 'u',
      groups: ['system:authenticated'],
      extra: { 'agentplane.io/namespaces': namespaces, 'agentplane.io/verbs': verbs },
    });

    it('allows a listed verb in a listed namespace and nothing else', async () => {
      const reader = user(['team-a'], ['get', 'list', 'watch']);
      expect((await z.authorize(reader, res('list', 'team-a'))).allowed).to.equal(true);
      expect((await z.authorize(reader, res('get', 'team-a', 'secrets', ''))).allowed).to.equal(true);
      const other = await z.authorize(reader, res('get', 'team-b'));
      expect(other).to.deep.equal({ allowed: false, reason: 'the token allows the namespaces team-a' });
      expect((await z.authorize(reader, res('create', 'team-a'))).reason).to.equal('the token allows the verbs get, list, watch');
      // A list across every namespace needs "*".
      expect((await z.authorize(reader, res('list', ''))).allowed).to.equal(false);
      expect((await z.authorize(user(['*'], ['list']), res('list', ''))).allowed).to.equal(true);
      // deletecollection is delete.
      expect((await z.authorize(user(['team-a'], ['delete']), res('deletecollection', 'team-a'))).allowed).to.equal(true);
      expect((await z.authorize(user(['team-a'], ['*']), res('patch', 'team-a'))).allowed).to.equal(true);
    });

    it('decides tool-call approvals (create on agents/approvals) only with the verb "approve", which grants nothing else', async () => {
      const decide = planFor({
        method: 'POST',
        url: '/api/v1/agents/bot/approvals/toolu_1?namespace=team-a',
        query: { namespace: 'team-a' },
        hasBody: true,
        body: {},
      });
      const check: RequestAttributes = {
        resource: {
          verb: 'create',
          group: 'agentplane.io',
          version: 'v1alpha1',
          resource: 'agents',
          subresource: 'approvals',
          namespace: 'team-a',
          name: 'bot',
        },
      };
      expect(decide).to.deep.equal({ checks: [check] });
      const approver = user(['team-a'], ['get', 'approve']);
      expect((await z.authorize(approver, check)).allowed).to.equal(true);
      expect((await z.authorize(approver, res('create', 'team-a'))).allowed).to.equal(false);
      expect((await z.authorize(approver, res('update', 'team-a'))).allowed).to.equal(false);
      const writer = user(['team-a'], ['get', 'create', 'update', 'patch']);
      expect((await z.authorize(writer, check)).reason).to.equal('the token allows the verbs get, create, update, patch');
      expect((await z.authorize(user(['team-a'], ['*']), check)).allowed).to.equal(true);
      expect(parseTokenFile(JSON.stringify([entry('approver', 't', ['team-a'], ['approve'])]))[0].verbs).to.deep.equal(['approve']);
    });

    it('lets any token read non-resource paths (discovery, OpenAPI, metrics), not write them', async () => {
      const reader = user(['team-a'], ['get']);
      expect((await z.authorize(reader, { nonResource: { verb: 'get', path: '/apis' } })).allowed).to.equal(true);
      expect((await z.authorize(reader, { nonResource: { verb: 'post', path: '/apis' } })).allowed).to.equal(false);
      expect((await z.authorize(user([], []), res('get', 'team-a'))).allowed).to.equal(false);
    });
  });

  describe('grants (users authenticated by OIDC)', () => {
    const grants = parseAccessFile(
      'grants:\n  - group: devs\n    namespaces: [team-a]\n    verbs: "*"\n  - user: bob\n    namespaces: [team-a, team-b]\n    verbs: [get]\n',
    ).grants;
    const z = new TokenScopeAuthorizer(() => grants);
    const oidcUser = (username: string, groups: string[]): UserInfo => ({ username, groups: [...groups, 'system:authenticated'], extra: {} });

    it('parses grants by user or group, and refuses an entry naming both, neither, or a bad scope', () => {
      expect(grants).to.deep.equal([
        { group: 'devs', namespaces: ['team-a'], verbs: ['*'] },
        { user: 'bob', namespaces: ['team-a', 'team-b'], verbs: ['get'] },
      ]);
      expect(parseAccessFile('grants: []').tokens).to.deep.equal([]);
      expect(() => parseAccessFile('grants:\n  - user: a\n    group: b\n    namespaces: "*"\n    verbs: "*"\n')).to.throw(/exactly one of "user" or "group"/);
      expect(() => parseAccessFile('grants:\n  - namespaces: "*"\n    verbs: "*"\n')).to.throw(/exactly one of "user" or "group"/);
      expect(() => parseAccessFile('grants:\n  - group: g\n    namespaces: [Team_A]\n    verbs: "*"\n')).to.throw(
        /grants\[0\] \(group g\): "namespaces": "Team_A" is not a namespace name/,
      );
      expect(() => parseAccessFile('grants: 3')).to.throw(/"grants" must be a list/);
    });

    it('allows what any grant naming the user or one of their groups allows, and nothing else', async () => {
      // Two grants apply to bob in devs: the union is what he may do, grant by grant.
      const bob = oidcUser('bob', ['devs']);
      expect((await z.authorize(bob, res('create', 'team-a'))).allowed).to.equal(true);
      expect((await z.authorize(bob, res('get', 'team-b'))).allowed).to.equal(true);
      const denied = await z.authorize(bob, res('create', 'team-b'));
      expect(denied.allowed).to.equal(false);
      expect(denied.reason).to.equal('the grant for group devs allows the namespaces team-a; the grant for user bob allows the verbs get');
      const stranger = await z.authorize(oidcUser('eve', ['others']), res('get', 'team-a'));
      expect(stranger).to.deep.equal({ allowed: false, reason: 'no grant in the token file names the user "eve" or one of their groups' });
      // A grant for a group never matches a user of that name, nor the reverse.
      expect((await z.authorize(oidcUser('devs', []), res('get', 'team-a'))).allowed).to.equal(false);
    });
  });

  it('knows loopback binds', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).to.equal(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '127.0.0.256', 'example.com', '']) expect(isLoopbackHost(h), h).to.equal(false);
  });
});
