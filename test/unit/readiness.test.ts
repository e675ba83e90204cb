// /readyz: 200 while every check passes; 503 naming the failing checks (a store that rejects, or
// one that does not answer in time) and back to 200 once they pass; /healthz stays 200.

import { expect } from 'chai';

import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { createApp } from '../../pkg/server/app.js';
import { systemRoutes } from '../../pkg/server/routes/system.js';

describe('/readyz', function () {
  this.timeout(10_000);

  it('fails while a store is unreachable or hangs, and recovers', async () => {
    let redis: 'up' | 'down' | 'hung' = 'up';
    const app = await createApp({ logger: createLogger({ level: 'silent' }), metrics: new Metrics() });
    await app.register(
      systemRoutes(new Metrics(), [
        { name: 'informers', check: async () => {} },
        {
          name: 'event-store',
          check: () =>
            redis === 'up'
              ? Promise.resolve()
              : redis === 'down'
                ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'))
                : new Promise<void>(() => {}),
        },
      ]),
    );
    try {
      expect((await app.inject({ url: '/readyz' })).statusCode).to.equal(200);
      redis = 'down';
      const down = await app.inject({ url: '/readyz' });
      expect(down.statusCode).to.equal(503);
      expect(down.json()).to.deep.include({
        reason: 'ServiceUnavailable',
        code: 503,
        error: 'not ready: event-store: connect ECONNREFUSED 127.0.0.1:6379',
        details: { causes: [{ field: 'event-store', message: 'connect ECONNREFUSED 127.0.0.1:6379' }] },
      });
      expect((await app.inject({ url: '/healthz' })).statusCode, 'liveness is not readiness').to.equal(200);
      redis = 'hung';
      const hung = await app.inject({ url: '/readyz' });
      expect(hung.statusCode).to.equal(503);
      expect(hung.json().details.causes[0].message).to.match(/no answer within/);
      redis = 'up';
      expect((await app.inject({ url: '/readyz' })).statusCode).to.equal(200);
    } finally {
      await app.close();
    }
  });
});
