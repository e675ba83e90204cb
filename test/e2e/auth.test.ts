// Delegated authentication and authorization against a real kube-apiserver: a small TLS app
// (HTTP/2 + HTTP/1.1) with the auth filter, reached directly with the control plane's own
// front-proxy and client certificates and with ServiceAccount tokens, and through the
// aggregator via an APIService.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';

import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { createApp } from '../../pkg/server/app.js';
import { type DelegatedAuth, startDelegatedAuth } from '../../pkg/server/auth/delegated.js';
import { installAuthFilter } from '../../pkg/server/auth/filter.js';
import type { UserInfo } from '../../pkg/server/auth/user.js';
import { type ControlPlane, controlPlaneUp } from '../support/control-plane.js';
import { type Cert, issueClientCert as issue, makeServingCert } from '../support/tls.js';

const GV = '/apis/agentplane.io/v1alpha1';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
  user?: UserInfo;
}

describe('e2e: delegated auth on a real control plane', function () {
  this.timeout(180_000);

  let cp: ControlPlane;
  let work: string;
  let ca: Buffer;
  let certs: Record<'frontProxy' | 'evilProxy' | 'alice' | 'stranger', Cert>;
  let auth: DelegatedAuth;
  let app: FastifyInstance;
  let port: number;
  let saToken: string;

  before(async function () {
    this.timeout(30 * 60_000); // a first run builds kube-apiserver
    cp = await controlPlaneUp();
    work = mkdtempSync(join(tmpdir(), 'agentplane-auth-'));
    const pki = join(cp.dir, 'pki');
    ca = await makeServingCert(work);
    certs = {
      // The aggregator's own proxy client certificate (front-proxy CA, CN front-proxy-client).
      frontProxy: { key: readFileSync(join(pki, 'front-proxy-client.key')), cert: readFileSync(join(pki, 'front-proxy-client.crt')) },
      // Signed by the front-proxy CA, but with a CN that is not in requestheader-allowed-names.
      evilProxy: await issue(work, join(pki, 'front-proxy-ca'), 'evil-proxy', '/CN=evil-proxy'),
      alice: await issue(work, join(pki, 'client-ca'), 'alice', '/O=team/CN=alice'),
      // A CA the cluster has never heard of.
      stranger: await issue(work, join(work, 'serving-ca'), 'mallory', '/CN=mallory'),
    };

    await cp.kubectl(['apply', '-f', '-'], { input: RBAC });
    await cp.kubectl(['create', 'serviceaccount', 'tester', '-n', 'default']);
    saToken = (await cp.kubectl(['create', 'token', 'tester', '-n', 'default'])).stdout.trim();

    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfig);
    const logger = createLogger({ level: 'silent' });
    auth = await startDelegatedAuth({ kubeConfig: kc, logger });
    app = await createApp({
      logger,
      metrics: new Metrics(),
      tls: { key: readFileSync(join(work, 'serving.key')), cert: readFileSync(join(work, 'serving.crt')) },
    });
    installAuthFilter(app, {
      authenticator: auth.authenticator,
      authorizer: auth.authorizer,
      agentExists: async (_namespace, name) => name === 'existing',
    });
    app.addHook('onSend', async (req, reply) => {
      reply.header('x-test-user', JSON.stringify(req.user ?? null));
      reply.header('x-test-http-version', req.raw.httpVersion);
      reply.header('x-test-saw-identity-headers', String(Object.keys(req.headers).some((h) => h.startsWith('x-remote-') || h === 'authorization')));
    });
    app.get(GV, async () => ({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'agentplane.io/v1alpha1',
      resources: [{ name: 'agents', singularName: 'agent', namespaced: true, kind: 'Agent', verbs: ['get', 'list', 'create'] }],
    }));
    app.get<{ Params: { ns: string } }>(`${GV}/namespaces/:ns/agents`, async () => ({ kind: 'AgentList', apiVersion: 'agentplane.io/v1alpha1', items: [] }));
    app.post<{ Params: { ns: string } }>(`${GV}/namespaces/:ns/agents`, async (_req, reply) => reply.status(201).send({ created: true }));
    app.get<{ Params: { ns: string; name: string } }>(`${GV}/namespaces/:ns/agents/:name`, async (req) => ({
      kind: 'Agent',
      metadata: { name: req.params.name, namespace: req.params.ns },
      httpVersion: req.raw.httpVersion,
      user: req.user,
    }));
    app.get<{ Params: { name: string } }>('/api/v1/agents/:name', async (req) => ({ name: req.params.name, user: req.user?.username }));
    app.post('/api/v1/agents', async (_req, reply) => reply.status(201).send({ created: true }));
    app.get('/api/v1/agents/:name/ws', { websocket: true }, (socket, req) => {
      socket.send(JSON.stringify({ user: req.user?.username, httpVersion: req.raw.httpVersion }));
    });
    app.get(`${GV}/namespaces/:ns/agents/:name/log`, { websocket: true }, (socket, req) => {
      socket.send(JSON.stringify({ user: req.user?.username, httpVersion: req.raw.httpVersion }));
    });
    app.get('/readyz', async () => ({ status: 'ok' }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });

  after(async () => {
    await app?.close();
    auth?.stop();
    await cp?.down();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const get = (path: string, o: RequestOpts = {}): Promise<Answer> => request('GET', path, o);

  async function request(method: string, path: string, o: RequestOpts = {}): Promise<Answer> {
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          ca,
          agent: false,
          ...(o.cert ?? {}),
          headers: { ...(o.headers ?? {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(answer(res.statusCode!, res.headers, text)));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  const asProxy = (user: string, groups: string[], extra: Record<string, string[]> = {}): RequestOpts => ({
    cert: certs.frontProxy,
    headers: {
      'X-Remote-User': user,
      'X-Remote-Group': groups,
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [`X-Remote-Extra-${k}`, v])),
    },
  });
  const bob = (o: RequestOpts = {}): RequestOpts => ({ ...asProxy('bob', ['system:authenticated']), ...o });

  describe('front proxy (request-header) authentication', () => {
    it('takes the user, every group and the extras from the headers when the proxy certificate verifies', async () => {
      const res = await get(GV, asProxy('carol', ['devs', 'system:authenticated'], { Scopes: ['read', 'write'], 'Example.com%2Fteam': ['blue'] }));
      expect(res.status, res.text).to.equal(200);
      expect(res.user).to.deep.equal({
        username: 'carol',
        groups: ['devs', 'system:authenticated'],
        extra: { scopes: ['read', 'write'], 'example.com/team': ['blue'] },
      });
      expect(res.headers['x-test-saw-identity-headers'], 'identity headers are stripped before handlers').to.equal('false');
    });

    it('ignores the headers without the proxy certificate', async () => {
      const withClientCert = await get(GV, { cert: certs.alice, headers: { 'X-Remote-User': 'carol', 'X-Remote-Group': 'system:masters' } });
      expect(withClientCert.status).to.equal(200);
      expect(withClientCert.user!.username).to.equal('alice');
      expect(withClientCert.user!.groups).to.not.include('system:masters');

      const bare = await get(GV, { headers: { 'X-Remote-User': 'carol', 'X-Remote-Group': 'system:masters' } });
      expect(bare.status).to.equal(401);
      expect(bare.json).to.deep.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 });
    });

    it('refuses a front-proxy-CA certificate whose CN is not an allowed name', async () => {
      const res = await get(GV, { cert: certs.evilProxy, headers: { 'X-Remote-User': 'carol', 'X-Remote-Group': 'system:masters' } });
      expect(res.status).to.equal(401);
      expect(res.json.reason).to.equal('Unauthorized');
    });

    it('does not authenticate the proxy certificate itself when no user header comes with it', async () => {
      expect((await get(GV, { cert: certs.frontProxy })).status).to.equal(401);
    });

    it('renders 401 as the REST error body on the /api/v1 mirror', async () => {
      const res = await get('/api/v1/agents/x', { headers: { 'X-Remote-User': 'carol' } });
      expect(res.status).to.equal(401);
      expect(res.json).to.deep.equal({ error: 'Unauthorized', reason: 'Unauthorized', code: 401, details: {} });
    });
  });

  describe('client certificates', () => {
    it('authenticates a client-CA certificate as CN with the O groups', async () => {
      const res = await get(GV, { cert: certs.alice });
      expect(res.status, res.text).to.equal(200);
      expect(res.user).to.deep.equal({ username: 'alice', groups: ['team', 'system:authenticated'], extra: {} });
    });

    it('refuses a certificate from an unknown CA', async () => {
      expect((await get(GV, { cert: certs.stranger })).status).to.equal(401);
    });
  });

  describe('bearer tokens (TokenReview)', () => {
    it('authenticates a ServiceAccount token and hides it from handlers', async () => {
      const res = await get(GV, { headers: { Authorization: `Bearer ${saToken}` } });
      expect(res.status, res.text).to.equal(200);
      expect(res.user!.username).to.equal('system:serviceaccount:default:tester');
      expect(res.user!.groups).to.include.members(['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
      expect(res.headers['x-test-saw-identity-headers']).to.equal('false');
      // again, from the cache
      expect((await get(GV, { headers: { Authorization: `Bearer ${saToken}` } })).status).to.equal(200);
    });

    it('refuses a junk token with 401', async () => {
      const res = await get(GV, { headers: { Authorization: 'Bearer not-a-token' } });
      expect(res.status).to.equal(401);
      expect(res.json.kind).to.equal('Status');
    });
  });

  describe('SubjectAccessReview (bob may only get agents in namespace a)', () => {
    it('allows get in a, through /apis and the /api/v1 mirror', async () => {
      const res = await get(`${GV}/namespaces/a/agents/x`, bob());
      expect(res.status, res.text).to.equal(200);
      expect(res.json.user.username).to.equal('bob');
      const mirror = await get('/api/v1/agents/x?namespace=a', bob());
      expect(mirror.status, mirror.text).to.equal(200);
      expect(mirror.json).to.deep.equal({ name: 'x', user: 'bob' });
    });

    it('forbids create in a with a Kubernetes Status', async () => {
      const res = await request('POST', `${GV}/namespaces/a/agents`, bob({ body: { metadata: { name: 'y' } } }));
      expect(res.status).to.equal(403);
      expect(res.json).to.deep.equal({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'agents.agentplane.io is forbidden: User "bob" cannot create resource "agents" in API group "agentplane.io" in the namespace "a"',
        reason: 'Forbidden',
        details: { group: 'agentplane.io', kind: 'agents' },
        code: 403,
      });
    });

    it('forbids get in b and list in a', async () => {
      const b = await get(`${GV}/namespaces/b/agents/x`, bob());
      expect(b.status).to.equal(403);
      expect(b.json.message).to.equal(
        'agents.agentplane.io "x" is forbidden: User "bob" cannot get resource "agents" in API group "agentplane.io" in the namespace "b"',
      );
      const list = await get(`${GV}/namespaces/a/agents`, bob());
      expect(list.status).to.equal(403);
      expect(list.json.message).to.contain('cannot list resource "agents"');
    });

    it('forbids the same through the /api/v1 mirror with the REST error body', async () => {
      const b = await get('/api/v1/agents/x?namespace=b', bob());
      expect(b.status).to.equal(403);
      expect(b.json).to.deep.equal({
        error: 'agents.agentplane.io "x" is forbidden: User "bob" cannot get resource "agents" in API group "agentplane.io" in the namespace "b"',
        reason: 'Forbidden',
        code: 403,
        details: { group: 'agentplane.io', kind: 'agents', name: 'x' },
      });
      const create = await request('POST', '/api/v1/agents', bob({ body: { name: 'y', namespace: 'a', instructions: 'hi' } }));
      expect(create.status).to.equal(403);
      expect(create.json.error).to.equal(
        'agents.agentplane.io is forbidden: User "bob" cannot create resource "agents" in API group "agentplane.io" in the namespace "a"',
      );
    });

    it('needs update, not create, to hand a task to an existing agent through the mirror', async () => {
      const existing = await request('POST', '/api/v1/agents', bob({ body: { name: 'existing', namespace: 'a', instructions: 'hi' } }));
      expect(existing.status).to.equal(403);
      expect(existing.json.error).to.equal(
        'agents.agentplane.io "existing" is forbidden: User "bob" cannot update resource "agents" in API group "agentplane.io" in the namespace "a"',
      );
      const alice = await request('POST', '/api/v1/agents', { cert: certs.alice, body: { name: 'existing', namespace: 'a', instructions: 'hi' } });
      expect(alice.status, alice.text).to.equal(201);
    });

    it("authorizes a mirror create in the namespace it would land in: the body's, else the query's", async () => {
      const inBody = await request('POST', '/api/v1/agents', bob({ body: { name: 'y', namespace: 'b', instructions: 'hi' } }));
      expect(inBody.status).to.equal(403);
      expect(inBody.json.error).to.contain('in the namespace "b"');
      const inQuery = await request('POST', '/api/v1/agents?namespace=b', bob({ body: { name: 'y', instructions: 'hi' } }));
      expect(inQuery.status).to.equal(403);
      expect(inQuery.json.error).to.contain('in the namespace "b"');
      // Both given and different: refused before any namespace is guessed.
      const clash = await request('POST', '/api/v1/agents?namespace=a', bob({ body: { name: 'y', namespace: 'b', instructions: 'hi' } }));
      expect(clash.status).to.equal(400);
      expect(clash.json.error).to.contain('differs');
    });
  });

  describe('transport', () => {
    it('serves HTTP/2 (client certificate and repeated headers included)', async () => {
      const session = http2.connect(`https://127.0.0.1:${port}`, { ca, ...certs.frontProxy });
      try {
        const res = await new Promise<Answer>((resolve, reject) => {
          const stream = session.request({
            ':path': `${GV}/namespaces/a/agents/x`,
            'x-remote-user': 'bob',
            'x-remote-group': ['system:authenticated', 'devs'],
          });
          let text = '';
          let headers: http2.IncomingHttpHeaders = {};
          stream.setEncoding('utf8');
          stream.on('response', (h) => (headers = h));
          stream.on('data', (c: string) => (text += c));
          stream.on('end', () => resolve(answer(Number(headers[':status']), headers, text)));
          stream.on('error', reject);
          stream.end();
        });
        expect(res.status, res.text).to.equal(200);
        expect(res.json.httpVersion).to.equal('2.0');
        expect(res.json.user).to.deep.equal({ username: 'bob', groups: ['system:authenticated', 'devs'], extra: {} });
      } finally {
        session.close();
      }
    });

    it('upgrades a WebSocket over HTTP/1.1 on the same TLS port, after authn and authz', async () => {
      const msg = await new Promise<any>((resolve, reject) => {
        const ws = new WebSocket(`wss://127.0.0.1:${port}/api/v1/agents/x/ws?namespace=default`, { ca, ...certs.alice });
        ws.on('message', (m) => {
          resolve(JSON.parse((m as Buffer).toString()));
          ws.close();
        });
        ws.on('error', reject);
      });
      expect(msg).to.deep.equal({ user: 'alice', httpVersion: '1.1' });

      const refused = (opts: WebSocket.ClientOptions, path: string) =>
        new Promise<number>((resolve, reject) => {
          const ws = new WebSocket(`wss://127.0.0.1:${port}${path}`, { ca, ...opts });
          ws.on('unexpected-response', (_req, res) => {
            resolve(res.statusCode!);
            res.resume();
            ws.terminate();
          });
          ws.on('open', () => reject(new Error('upgrade was accepted')));
          ws.on('error', () => undefined);
        });
      expect(await refused({}, '/api/v1/agents/x/ws')).to.equal(401);
      expect(
        await refused(
          { ...certs.frontProxy, headers: { 'X-Remote-User': 'bob', 'X-Remote-Group': 'system:authenticated' } },
          '/api/v1/agents/x/ws?namespace=a',
        ),
      ).to.equal(403);
    });

    it('serves /readyz without credentials (kubelet probes carry none)', async () => {
      expect((await get('/readyz')).status).to.equal(200);
    });
  });

  describe('through the aggregator (APIService)', () => {
    before(async function () {
      this.timeout(120_000);
      await cp.kubectl(['apply', '-f', '-'], { input: apiService(ca, port) });
      await cp.kubectl(['wait', '--for=condition=Available', 'apiservice/v1alpha1.agentplane.io', '--timeout=90s']);
    });

    it('accepts kube-apiserver as the front proxy, with the caller as the user', async () => {
      const res = await cp.kubectl(['get', '--raw', `${GV}/namespaces/a/agents/x`, '--as', 'bob']);
      const body = JSON.parse(res.stdout);
      expect(body.user.username).to.equal('bob');
      expect(body.user.groups).to.include('system:authenticated');
      expect(body.httpVersion, 'kube-apiserver proxies over HTTP/2').to.equal('2.0');

      const admin = JSON.parse((await cp.kubectl(['get', '--raw', `${GV}/namespaces/b/agents/z`])).stdout);
      expect(admin.user.username).to.equal('admin');
      expect(admin.user.groups).to.include('system:masters');
    });

    it('keeps bob out of namespace b', async () => {
      const res = await cp.kubectl(['get', '--raw', `${GV}/namespaces/b/agents/x`, '--as', 'bob'], { allowFail: true });
      expect(res.code).to.not.equal(0);
      expect(res.stderr).to.contain('forbidden');
    });

    it('passes a WebSocket upgrade through kube-apiserver to the HTTP/1.1 side', async () => {
      const kc = new KubeConfig();
      kc.loadFromFile(cp.kubeconfig);
      const server = kc.getCurrentCluster()!.server.replace(/^https/, 'wss');
      const pki = join(cp.dir, 'pki');
      const msg = await new Promise<any>((resolve, reject) => {
        const ws = new WebSocket(`${server}${GV}/namespaces/a/agents/x/log`, {
          ca: readFileSync(join(pki, 'serving-ca.crt')),
          cert: readFileSync(join(pki, 'admin.crt')),
          key: readFileSync(join(pki, 'admin.key')),
        });
        ws.on('message', (m) => {
          resolve(JSON.parse((m as Buffer).toString()));
          ws.close();
        });
        ws.on('unexpected-response', (_req, r) => reject(new Error(`upgrade refused: ${r.statusCode}`)));
        ws.on('error', reject);
      });
      expect(msg).to.deep.equal({ user: 'admin', httpVersion: '1.1' });
    });

    it('agrees with kubectl auth can-i (which needs the discovery the APIService provides)', async () => {
      const can = (args: string[]) => cp.kubectl(['auth', 'can-i', ...args, '--as', 'bob'], { allowFail: true }).then((r) => r.stdout.trim());
      expect(await can(['get', 'agents/x', '-n', 'a'])).to.equal('yes');
      expect(await can(['create', 'agents', '-n', 'a'])).to.equal('no');
      expect(await can(['get', 'agents/x', '-n', 'b'])).to.equal('no');
    });
  });
});

interface RequestOpts {
  cert?: Cert;
  headers?: Record<string, string | string[]>;
  body?: unknown;
}

function answer(status: number, headers: Record<string, string | string[] | number | undefined>, text: string): Answer {
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const h = headers as Record<string, string | string[] | undefined>;
  const u = h['x-test-user'];
  const user = typeof u === 'string' && u !== 'null' ? (JSON.parse(u) as UserInfo) : undefined;
  return { status, headers: h, text, json, ...(user ? { user } : {}) };
}

const RBAC = `
apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: Namespace
metadata: {name: b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: agent-getter, namespace: a}
rules:
- apiGroups: [agentplane.io]
  resources: [agents]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-gets-agents, namespace: a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: agent-getter}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: agentplane-test-everything}
rules:
- apiGroups: [agentplane.io]
  resources: ['*']
  verbs: ['*']
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-everything}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: agentplane-test-everything}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
`;

/** An ExternalName Service to localhost and the APIService, as hack/README.md describes. */
function apiService(caBundle: Buffer, port: number): string {
  return `
apiVersion: v1
kind: Namespace
metadata: {name: agentplane-system}
---
apiVersion: v1
kind: Service
metadata: {name: agentplane, namespace: agentplane-system}
spec:
  type: ExternalName
  externalName: localhost
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.agentplane.io}
spec:
  group: agentplane.io
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {namespace: agentplane-system, name: agentplane, port: ${port}}
  caBundle: ${caBundle.toString('base64')}
`;
}
