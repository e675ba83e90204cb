// Delegated auth without a cluster: request attributes, front-proxy headers, certificate chains,
// and the caches of the authenticator and authorizer (with fake reviews).

import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';

import { expect } from 'chai';

import { createLogger } from '../../pkg/observability/logger.js';
import { type AuthorizationPlan, planFor, type RequestAttributes } from '../../pkg/server/auth/attributes.js';
import { DelegatedAuthenticator, parseAuthConfigMap, type RequestHeaderConfig, userFromHeaders } from '../../pkg/server/auth/authenticator.js';
import { DelegatedAuthorizer } from '../../pkg/server/auth/authorizer.js';
import { forbidden } from '../../pkg/server/auth/filter.js';
import { type PeerChain, verifyClientChain } from '../../pkg/server/auth/x509.js';

const run = promisify(execFile);
const logger = createLogger({ level: 'silent' });

const plan = (method: string, url: string, body?: unknown): AuthorizationPlan => {
  const query = Object.fromEntries(new URL(url, 'http://x').searchParams) as Record<string, string>;
  const p = planFor({ method, url, query, hasBody: body !== undefined, body });
  if ('needsBody' in p) throw new Error('needs the body');
  return p;
};
const only = (p: AuthorizationPlan): RequestAttributes => {
  expect(p.checks).to.have.length(1);
  return p.checks[0];
};
const res = (
  verb: string,
  resource: string,
  namespace: string,
  name = '',
  subresource = '',
  group = 'agentplane.io',
  version = 'v1alpha1',
): RequestAttributes => ({
  resource: { verb, group, version, resource, subresource, namespace, name },
});

describe('auth: request attributes', () => {
  const GV = '/apis/agentplane.io/v1alpha1';

  it('parses /apis paths as kube-apiserver does', () => {
    expect(only(plan('GET', `${GV}/namespaces/a/agents/x`))).to.deep.equal(res('get', 'agents', 'a', 'x'));
    expect(only(plan('GET', `${GV}/namespaces/a/agents`))).to.deep.equal(res('list', 'agents', 'a'));
    expect(only(plan('GET', `${GV}/namespaces/a/agents?watch=true`))).to.deep.equal(res('watch', 'agents', 'a'));
    expect(only(plan('GET', `${GV}/watch/namespaces/a/agents`))).to.deep.equal(res('watch', 'agents', 'a'));
    expect(only(plan('GET', `${GV}/namespaces/a/agents?watch=1&fieldSelector=metadata.name%3Dx`))).to.deep.equal(res('watch', 'agents', 'a', 'x'));
    expect(only(plan('GET', `${GV}/agents`))).to.deep.equal(res('list', 'agents', ''));
    expect(only(plan('POST', `${GV}/namespaces/a/agents`))).to.deep.equal(res('create', 'agents', 'a'));
    expect(only(plan('PUT', `${GV}/namespaces/a/agents/x`))).to.deep.equal(res('update', 'agents', 'a', 'x'));
    expect(only(plan('PATCH', `${GV}/namespaces/a/agents/x`))).to.deep.equal(res('patch', 'agents', 'a', 'x'));
    expect(only(plan('DELETE', `${GV}/namespaces/a/agents/x`))).to.deep.equal(res('delete', 'agents', 'a', 'x'));
    expect(only(plan('DELETE', `${GV}/namespaces/a/agents`))).to.deep.equal(res('deletecollection', 'agents', 'a'));
    expect(only(plan('GET', `${GV}/namespaces/a/agents/x/log?follow=true`))).to.deep.equal(res('get', 'agents', 'a', 'x', 'log'));
    expect(only(plan('POST', `${GV}/namespaces/a/agents/x/cancel`))).to.deep.equal(res('create', 'agents', 'a', 'x', 'cancel'));
    expect(only(plan('GET', `${GV}/namespaces/a/agents/x/events`))).to.deep.equal(res('get', 'agents', 'a', 'x', 'events'));
  });

  it('treats discovery, OpenAPI, health and metrics as non-resource URLs', () => {
    for (const path of [
      '/apis',
      '/apis/agentplane.io',
      GV,
      '/openapi/v2',
      '/openapi/v3/apis/agentplane.io/v1alpha1',
      '/metrics',
      '/version',
      '/healthz',
      '/api',
      '/api/v1',
    ]) {
      expect(only(plan('GET', path)), path).to.deep.equal({ nonResource: { verb: 'get', path } });
    }
  });

  it('maps the /api/v1 mirror onto the same resources and namespaces as the handlers', () => {
    expect(only(plan('GET', '/api/v1/agents'))).to.deep.equal(res('list', 'agents', ''), 'no namespace lists all of them');
    expect(only(plan('GET', '/api/v1/agents?namespace=a'))).to.deep.equal(res('list', 'agents', 'a'));
    expect(only(plan('GET', '/api/v1/agents?namespace='))).to.deep.equal(res('list', 'agents', ''), 'an empty namespace is none');
    expect(only(plan('GET', '/api/v1/agents/x'))).to.deep.equal(res('get', 'agents', 'default', 'x'));
    expect(only(plan('GET', '/api/v1/agents/x?namespace=a'))).to.deep.equal(res('get', 'agents', 'a', 'x'));
    expect(only(plan('PATCH', '/api/v1/agents/x?namespace=a'))).to.deep.equal(res('patch', 'agents', 'a', 'x'));
    expect(only(plan('DELETE', '/api/v1/agents/x?namespace=a'))).to.deep.equal(res('delete', 'agents', 'a', 'x'));
    expect(only(plan('POST', '/api/v1/agents/x/cancel?namespace=a'))).to.deep.equal(res('create', 'agents', 'a', 'x', 'cancel'));
    expect(only(plan('GET', '/api/v1/agents/x/events?namespace=a'))).to.deep.equal(res('get', 'agents', 'a', 'x', 'events'));
    expect(only(plan('GET', '/api/v1/agents/x/ws?namespace=a'))).to.deep.equal(res('get', 'agents', 'a', 'x', 'log'));
    expect(only(plan('POST', '/api/v1/agents/x/compact?namespace=a'))).to.deep.equal(res('create', 'agents', 'a', 'x', 'compact'));
    expect(only(plan('GET', '/api/v1/agents/x/cost?namespace=a'))).to.deep.equal(res('get', 'agents', 'a', 'x', 'cost'));
    expect(only(plan('GET', '/api/v1/agents/x/download/out/a.bin?namespace=a'))).to.deep.equal(res('get', 'agents', 'a', 'x', 'download'));
    expect(only(plan('GET', '/api/v1/connectors/c/tools?namespace=a'))).to.deep.equal(res('get', 'connectors', 'a', 'c', 'tools'));
    expect(only(plan('DELETE', '/api/v1/connectors/c?namespace=a&force=true'))).to.deep.equal(res('delete', 'connectors', 'a', 'c'));
    expect(only(plan('DELETE', '/api/v1/squads/s?namespace=a'))).to.deep.equal(res('delete', 'squads', 'a', 's'));
    expect(only(plan('GET', '/api/v1/unknown'))).to.deep.equal({ nonResource: { verb: 'get', path: '/api/v1/unknown' } });
  });

  it('takes the namespace of a create from the body, else the query, as the handler does', () => {
    const first = planFor({ method: 'POST', url: '/api/v1/connectors?namespace=a', query: { namespace: 'a' }, hasBody: false });
    expect(first).to.deep.equal({ needsBody: true });
    expect(only(plan('POST', '/api/v1/connectors?namespace=b', { name: 'c', namespace: 'b' }))).to.deep.equal(res('create', 'connectors', 'b'));
    expect(only(plan('POST', '/api/v1/connectors?namespace=a', { name: 'c' }))).to.deep.equal(res('create', 'connectors', 'a'));
    expect(plan('POST', '/api/v1/agents?namespace=a', { name: 'x', instructions: 'hi' })).to.deep.equal({
      checks: [],
      upsertAgent: { namespace: 'a', name: 'x' },
    });
    expect(() => plan('POST', '/api/v1/connectors?namespace=a', { name: 'c', namespace: 'b' })).to.throw('differs');
    expect(only(plan('POST', '/api/v1/connectors', { name: 'c' }))).to.deep.equal(res('create', 'connectors', 'default'));
    expect(() => plan('POST', '/api/v1/connectors', { name: 'c', namespace: 7 })).to.throw('namespace');
  });

  it('leaves create-or-update of an agent to the filter', () => {
    expect(plan('POST', '/api/v1/agents', { name: 'x', namespace: 'a', instructions: 'hi' })).to.deep.equal({
      checks: [],
      upsertAgent: { namespace: 'a', name: 'x' },
    });
    expect(only(plan('POST', '/api/v1/agents', { instructions: 'hi' }))).to.deep.equal(res('create', 'agents', 'default'));
  });

  it('checks squad membership against both the squad and the agents', () => {
    const create = plan('POST', '/api/v1/squads', { name: 's', namespace: 'a', members: [{ ref: { name: 'p' } }, { name: 'q', spec: {} }] });
    expect(create.checks).to.deep.equal([res('create', 'squads', 'a'), res('update', 'agents', 'a', 'p'), res('create', 'agents', 'a')]);
    const add = plan('POST', '/api/v1/squads/s/members?namespace=a', { ref: { name: 'p' } });
    expect(add.checks).to.deep.equal([res('update', 'squads', 'a', 's'), res('update', 'agents', 'a', 'p')]);
    const remove = plan('DELETE', '/api/v1/squads/s/members/p?namespace=a');
    expect(remove.checks).to.deep.equal([res('update', 'squads', 'a', 's'), res('update', 'agents', 'a', 'p')]);
    expect(only(plan('POST', '/api/v1/squads/s/break-up?namespace=a'))).to.deep.equal(res('update', 'squads', 'a', 's'));
    // PATCH with a member list: the squad, and each listed agent as adding it would.
    const patch = plan('PATCH', '/api/v1/squads/s?namespace=a', { members: [{ ref: { name: 'p' } }, { ref: { name: 'r' } }] });
    expect(patch.checks).to.deep.equal([res('patch', 'squads', 'a', 's'), res('update', 'agents', 'a', 'p'), res('update', 'agents', 'a', 'r')]);
    expect(only(plan('PATCH', '/api/v1/squads/s?namespace=a', { orphanTTL: '1m' }))).to.deep.equal(res('patch', 'squads', 'a', 's'));
    expect(() => plan('PATCH', '/api/v1/squads/s?namespace=a')).to.throw('needs the body');
  });

  it('authorizes mirror secrets as core Secrets', () => {
    const core = (verb: string, namespace: string, name = '') => res(verb, 'secrets', namespace, name, '', '', 'v1');
    expect(only(plan('GET', '/api/v1/secrets/s?namespace=a'))).to.deep.equal(core('get', 'a', 's'));
    expect(only(plan('POST', '/api/v1/secrets', { name: 's', namespace: 'a', data: {} }))).to.deep.equal(core('create', 'a'));
    expect(plan('PUT', '/api/v1/secrets/s?namespace=a').checks).to.deep.equal([core('update', 'a', 's'), core('create', 'a')]);
    expect(plan('PUT', '/api/v1/secrets/s', { namespace: 'b', data: {} }).checks).to.deep.equal([core('update', 'b', 's'), core('create', 'b')]);
  });

  it('refuses a namespace given twice', () => {
    expect(() => planFor({ method: 'GET', url: '/api/v1/agents/x', query: { namespace: ['a', 'b'] }, hasBody: false })).to.throw('more than once');
  });

  it('words Forbidden like kube-apiserver', () => {
    const user = { username: 'bob', groups: [], extra: {} };
    expect(forbidden(user, res('create', 'agents', 'a')).message).to.equal(
      'agents.agentplane.io is forbidden: User "bob" cannot create resource "agents" in API group "agentplane.io" in the namespace "a"',
    );
    expect(forbidden(user, res('get', 'agents', 'a', 'x', 'log')).message).to.equal(
      'agents.agentplane.io "x" is forbidden: User "bob" cannot get resource "agents/log" in API group "agentplane.io" in the namespace "a"',
    );
    expect(forbidden(user, res('list', 'agents', '')).message).to.equal(
      'agents.agentplane.io is forbidden: User "bob" cannot list resource "agents" in API group "agentplane.io" at the cluster scope',
    );
    expect(forbidden(user, { nonResource: { verb: 'get', path: '/metrics' } }).message).to.equal('forbidden: User "bob" cannot get path "/metrics"');
  });
});

describe('auth: front-proxy headers', () => {
  const rh: RequestHeaderConfig = {
    ca: [],
    allowedNames: [],
    usernameHeaders: ['X-Remote-User'],
    uidHeaders: [],
    groupHeaders: ['X-Remote-Group'],
    extraHeaderPrefixes: ['X-Remote-Extra-'],
  };

  it('reads the user, each group header line and percent-encoded, lowercased extras', () => {
    const raw = [
      'X-Remote-User',
      'carol',
      'x-remote-group',
      'a',
      'X-Remote-Group',
      'b, c',
      'X-Remote-Extra-Scopes',
      'x',
      'x-remote-extra-scopes',
      'y',
      'X-Remote-Extra-Example.com%2FTeam',
      'blue',
    ];
    expect(userFromHeaders(raw, rh)).to.deep.equal({ username: 'carol', groups: ['a', 'b, c'], extra: { scopes: ['x', 'y'], 'example.com/team': ['blue'] } });
  });

  it('asserts nobody without a username header', () => {
    expect(userFromHeaders(['X-Remote-Group', 'system:masters'], rh)).to.equal(undefined);
  });

  it('parses the ConfigMap as kube-apiserver writes it', () => {
    const cfg = parseAuthConfigMap({
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-username-headers': '["X-Remote-User"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    });
    expect(cfg.clientCA).to.deep.equal([]);
    expect(cfg.requestHeader, 'no request-header CA, no front proxy').to.equal(undefined);
  });
});

describe('auth: client certificate chains', function () {
  this.timeout(30_000);
  let dir: string;
  let root: X509Certificate;
  let other: X509Certificate;
  let chainOf: (name: string, intermediates?: string[]) => PeerChain;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-x509-'));
    writeFileSync(
      join(dir, 'cnf'),
      [
        '[req]',
        'distinguished_name = dn',
        '[dn]',
        '[ca]',
        'basicConstraints = critical, CA:TRUE',
        'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
        '[client]',
        'basicConstraints = critical, CA:FALSE',
        'keyUsage = critical, digitalSignature',
        'extendedKeyUsage = clientAuth',
        '[server]',
        'basicConstraints = critical, CA:FALSE',
        'keyUsage = critical, digitalSignature',
        'extendedKeyUsage = serverAuth',
        '',
      ].join('\n'),
    );
    const key = (n: string) => run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', join(dir, `${n}.key`)]);
    const selfSigned = async (n: string) => {
      await key(n);
      await run('openssl', [
        'req',
        '-x509',
        '-new',
        '-key',
        join(dir, `${n}.key`),
        '-subj',
        `/CN=${n}`,
        '-days',
        '2',
        '-config',
        join(dir, 'cnf'),
        '-extensions',
        'ca',
        '-out',
        join(dir, `${n}.crt`),
      ]);
    };
    const signed = async (n: string, ca: string, ext: string, subj = `/CN=${n}`) => {
      await key(n);
      await run('openssl', ['req', '-new', '-key', join(dir, `${n}.key`), '-subj', subj, '-config', join(dir, 'cnf'), '-out', join(dir, `${n}.csr`)]);
      await run('openssl', [
        'x509',
        '-req',
        '-in',
        join(dir, `${n}.csr`),
        '-CA',
        join(dir, `${ca}.crt`),
        '-CAkey',
        join(dir, `${ca}.key`),
        '-days',
        '2',
        '-set_serial',
        String(Date.now()),
        '-extfile',
        join(dir, 'cnf'),
        '-extensions',
        ext,
        '-out',
        join(dir, `${n}.crt`),
      ]);
    };
    await selfSigned('root');
    await selfSigned('other');
    await signed('inter', 'root', 'ca');
    await signed('alice', 'root', 'client', '/O=team/CN=alice');
    await signed('deep', 'inter', 'client');
    await signed('server', 'root', 'server');
    await signed('fake', 'alice', 'client'); // "issued" by a leaf that is no CA
    const cert = (n: string) => new X509Certificate(readFileSync(join(dir, `${n}.crt`)));
    root = cert('root');
    other = cert('other');
    chainOf = (n, intermediates = []) => ({ leaf: cert(n), intermediates: intermediates.map(cert), subject: {} });
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts a leaf signed by the CA, or through a presented intermediate', () => {
    expect(verifyClientChain(chainOf('alice'), [root])).to.equal(undefined);
    expect(verifyClientChain(chainOf('deep', ['inter']), [root])).to.equal(undefined);
  });

  it('refuses other CAs, missing intermediates, non-CA issuers and server-only certificates', () => {
    expect(verifyClientChain(chainOf('alice'), [other])).to.contain('unknown authority');
    expect(verifyClientChain(chainOf('deep'), [root])).to.contain('unknown authority');
    expect(verifyClientChain(chainOf('fake', ['alice']), [root])).to.contain('unknown authority');
    expect(verifyClientChain(chainOf('server'), [root])).to.contain('client authentication');
    expect(verifyClientChain(chainOf('alice'), [])).to.contain('no trusted CA');
  });

  it('refuses a certificate outside its validity period', () => {
    const later = new Date(Date.now() + 5 * 86_400_000);
    const earlier = new Date(Date.now() - 86_400_000);
    expect(verifyClientChain(chainOf('alice'), [root], later)).to.contain('expired');
    expect(verifyClientChain(chainOf('alice'), [root], earlier)).to.contain('not valid before');
  });
});

describe('auth: caches', () => {
  it('reviews a token once while cached, never caches failures, and never logs the token', async () => {
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (c: Buffer) => lines.push(String(c)));
    let reviews = 0;
    const authn = new DelegatedAuthenticator({
      logger: createLogger({ level: 'debug', destination: sink }),
      loadConfig: async () => ({ clientCA: [] }),
      reviewToken: async (token) => {
        reviews++;
        if (token === 'boom-secret-token') throw new Error('connection refused');
        return token === 'good-secret-token' ? { authenticated: true, user: { username: 'sa', groups: [], extra: {} } } : { authenticated: false };
      },
    });
    await authn.start();
    try {
      const auth = (t: string) => authn.authenticate({ rawHeaders: ['Authorization', `Bearer ${t}`] });
      const [a, b] = await Promise.all([auth('good-secret-token'), auth('good-secret-token')]);
      await auth('good-secret-token');
      expect(a.user).to.deep.equal({ username: 'sa', groups: ['system:authenticated'], extra: {} });
      expect(b.user?.username).to.equal('sa');
      expect(reviews).to.equal(1);
      expect((await auth('bad')).user).to.equal(undefined);
      expect((await auth('bad')).user).to.equal(undefined);
      expect(reviews).to.equal(3);
      expect((await auth('boom-secret-token')).user).to.equal(undefined);
      expect((await authn.authenticate({ rawHeaders: [] })).user).to.equal(undefined);
      expect(lines.join('')).to.contain('TokenReview failed');
      expect(lines.join('')).to.not.contain('secret-token');
    } finally {
      authn.stop();
    }
  });

  it('caches SubjectAccessReview decisions per user and attributes, not errors', async () => {
    const calls: string[] = [];
    let fail = false;
    const authz = new DelegatedAuthorizer({
      logger,
      review: async (spec) => {
        calls.push(`${spec.user}:${spec.resourceAttributes?.verb ?? spec.nonResourceAttributes?.path}`);
        if (fail) throw new Error('unreachable');
        return { allowed: spec.user === 'alice' };
      },
    });
    const alice = { username: 'alice', groups: ['b', 'a'], extra: {} };
    const aliceReordered = { username: 'alice', groups: ['a', 'b'], extra: {} };
    const bob = { username: 'bob', groups: [], extra: {} };
    expect((await authz.authorize(alice, res('get', 'agents', 'a', 'x'))).allowed).to.equal(true);
    expect((await authz.authorize(aliceReordered, res('get', 'agents', 'a', 'x'))).allowed).to.equal(true);
    expect((await authz.authorize(bob, res('get', 'agents', 'a', 'x'))).allowed).to.equal(false);
    expect((await authz.authorize(bob, res('get', 'agents', 'a', 'x'))).allowed).to.equal(false);
    expect((await authz.authorize(alice, res('delete', 'agents', 'a', 'x'))).allowed).to.equal(true);
    expect(calls).to.deep.equal(['alice:get', 'bob:get', 'alice:delete']);
    fail = true;
    let threw = false;
    await authz.authorize(alice, { nonResource: { verb: 'get', path: '/metrics' } }).catch(() => (threw = true));
    expect(threw).to.equal(true);
    fail = false;
    expect((await authz.authorize(alice, { nonResource: { verb: 'get', path: '/metrics' } })).allowed).to.equal(true);
    expect(calls).to.have.length(5);
  });
});
