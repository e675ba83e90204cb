// The dashboard's icon (pkg/server/routes/ui.ts): /favicon.ico answers the SVG the build wrote
// beside the bundle, without a token while the API needs one, so no page of the server logs a
// missing icon; a server without a built dashboard says how to build it.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';

import { createApp } from '../../pkg/server/app.js';
import { installAuthFilter } from '../../pkg/server/auth/filter.js';
import { uiRoutes } from '../../pkg/server/routes/ui.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';

const ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>';

describe('dashboard icon', () => {
  let dir: string;
  let app: FastifyInstance;
  let bare: FastifyInstance;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-ui-icon-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><link rel="icon" href="assets/favicon-0a1b2c3d.svg">');
    writeFileSync(join(dir, 'assets', 'favicon-0a1b2c3d.svg'), ICON);
    app = await createApp({ logger: createLogger({ level: 'silent' }), metrics: new Metrics() });
    // Nobody is authenticated: only the open paths answer.
    installAuthFilter(app, {
      authenticator: { authenticate: async () => ({ errors: ['no token'] }), isIdentityHeader: () => false },
      authorizer: { authorize: async () => ({ allowed: true, reason: '' }) },
    });
    await app.register(uiRoutes({ dir }));
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

  it('answers /favicon.ico with the built icon, an image, without a token', async () => {
    const r = await app.inject({ url: '/favicon.ico' });
    expect(r.statusCode).to.equal(200);
    expect(r.headers['content-type']).to.equal('image/svg+xml');
    expect(r.headers['cache-control']).to.equal('public, max-age=86400');
    expect(r.headers['x-content-type-options']).to.equal('nosniff');
    expect(r.body).to.equal(ICON);
    // The name the page links, as any asset.
    const linked = await app.inject({ url: '/ui/assets/favicon-0a1b2c3d.svg' });
    expect(linked.statusCode).to.equal(200);
    expect(linked.headers['content-type']).to.equal('image/svg+xml');
  });

  it('opens only that path: its neighbours are not the icon', async () => {
    for (const url of ['/favicon.ico/x', '/favicon.icox', '/x/favicon.ico', '/favicon.svg', '/ui/favicon.ico']) {
      const r = await app.inject({ url });
      // 401 where the filter saw it, 404 where no route matched first: never the icon.
      expect(r.statusCode, url).to.be.oneOf([401, 404]);
      expect(r.body, url).to.not.equal(ICON);
    }
  });

  it('says how to build the dashboard when it is not built', async () => {
    const r = await bare.inject({ url: '/favicon.ico' });
    expect(r.statusCode).to.equal(404);
    expect(r.json().error).to.contain('make build');
  });
});
