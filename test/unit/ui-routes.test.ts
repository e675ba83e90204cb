// The dashboard's static route (pkg/server/routes/ui.ts) and the files route without a local
// runtime, on a real fastify app with the auth filter: content types, cache headers, the
// redirect to /ui/, nothing but built files served, /ui open while the API needs a token, and
// 501 NotImplemented where workspaces are out of reach.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';

import { createApp } from '../../pkg/server/app.js';
import { installAuthFilter } from '../../pkg/server/auth/filter.js';
import { agentFileRoutes } from '../../pkg/server/routes/agent-files.js';
import { uiRoutes } from '../../pkg/server/routes/ui.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import type { Agent } from '../../pkg/api/agent.js';
import { notFound } from '../../pkg/api/errors.js';

const TOKEN = 'ui-test-token';

describe('dashboard routes', () => {
  let dir: string;
  let app: FastifyInstance;
  let bare: FastifyInstance;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-ui-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="assets/app-ABC.js"></script>');
    writeFileSync(join(dir, 'assets', 'app-ABC.js'), 'console.log(1)');
    writeFileSync(join(dir, 'assets', 'app-ABC.css'), 'body{}');
    writeFileSync(join(dir, 'assets', 'notes.unknown'), 'not served');
    writeFileSync(join(dir, 'secret.txt'), 'outside assets');

    app = await createApp({ logger: createLogger({ level: 'silent' }), metrics: new Metrics() });
    // Every caller with the one token is allowed; anyone else is not authenticated.
    installAuthFilter(app, {
      authenticator: {
        authenticate: async ({ rawHeaders }: { rawHeaders: string[] }) => {
          const i = rawHeaders.findIndex((h: string) => h.toLowerCase() === 'authorization');
          return i >= 0 && rawHeaders[i + 1] === `Bearer ${TOKEN}` ? { user: { username: 'u', groups: [] }, method: 'token' } : { errors: ['no token'] };
        },
        isIdentityHeader: () => false,
      } as never,
      authorizer: { authorize: async () => ({ allowed: true, reason: '' }) },
    });
    await app.register(uiRoutes({ dir }));
    const service = {
      get: async (namespace: string, name: string): Promise<Agent> => {
        if (name !== 'known') throw notFound('agent', name, namespace);
        return {} as Agent;
      },
    };
    await app.register(agentFileRoutes(service, undefined));
    await app.ready();

    bare = await createApp({ logger: createLogger({ level: 'silent' }), metrics: new Metrics() });
    await bare.register(uiRoutes({ dir: join(dir, 'missing') }));
    await bare.ready();
  });
  after(async () => {
    await app?.close();
    await bare?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('redirects /ui to /ui/ (the page names its files relative to it), keeping the query', async () => {
    const r = await app.inject({ url: '/ui?x=1' });
    expect(r.statusCode).to.equal(308);
    expect(r.headers.location).to.equal('/ui/?x=1');
  });

  it('serves index.html without a token, never cached, with a strict CSP', async () => {
    const r = await app.inject({ url: '/ui/' });
    expect(r.statusCode).to.equal(200);
    expect(r.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(r.headers['cache-control']).to.equal('no-cache');
    expect(r.headers['content-security-policy']).to.contain("script-src 'self'");
    expect(r.headers['x-content-type-options']).to.equal('nosniff');
    expect(r.body).to.contain('assets/app-ABC.js');
  });

  it('serves the hashed bundle with its type, cached for a year', async () => {
    const js = await app.inject({ url: '/ui/assets/app-ABC.js' });
    expect(js.statusCode).to.equal(200);
    expect(js.headers['content-type']).to.equal('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    const css = await app.inject({ url: '/ui/assets/app-ABC.css' });
    expect(css.headers['content-type']).to.equal('text/css; charset=utf-8');
    expect((await app.inject({ method: 'HEAD', url: '/ui/assets/app-ABC.js' })).statusCode).to.equal(200);
  });

  it('serves nothing but the built files: unknown names, other types and paths out are refused', async () => {
    for (const url of ['/ui/assets/nope.js', '/ui/assets/notes.unknown', '/ui/assets/..%2Fsecret.txt', '/ui/secret.txt', '/ui/assets/%2e%2e%2fsecret.txt']) {
      const r = await app.inject({ url });
      // 401 when the path is not one the dashboard serves openly (it never reaches a route).
      expect(r.statusCode, url).to.be.oneOf([401, 404]);
      expect(r.body, url).to.not.contain('outside assets');
    }
  });

  it('keeps the API behind the token while /ui is open', async () => {
    const refused = await app.inject({ url: '/api/v1/agents/known/files' });
    expect(refused.statusCode).to.equal(401);
    // Only the dashboard's own paths are open, not whatever starts with /ui.
    for (const url of ['/ui/../api/v1/agents/known/files', '/ui/%2e%2e/api/v1/agents/known/files', '/ui/assets/../../api/v1/agents/known/files']) {
      expect((await app.inject({ url })).statusCode, url).to.be.oneOf([401, 404]);
    }
  });

  it('answers 501 NotImplemented for workspace files where agents are not local processes', async () => {
    const r = await app.inject({ url: '/api/v1/agents/known/files?path=a.txt', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.statusCode).to.equal(501);
    expect(r.json()).to.include({ reason: 'NotImplemented', code: 501 });
    expect(r.json().error).to.contain('kubectl exec');
    // An unknown agent is still a 404 first.
    const ghost = await app.inject({ url: '/api/v1/agents/ghost/files', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ghost.statusCode).to.equal(404);
  });

  it('says how to build the dashboard when it is not built', async () => {
    const r = await bare.inject({ url: '/ui/' });
    expect(r.statusCode).to.equal(404);
    expect(r.json().error).to.contain('make build');
    expect((await bare.inject({ url: '/ui/assets/app.js' })).statusCode).to.equal(404);
  });
});
