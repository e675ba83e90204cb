// A worker's control channel across a change of leader, with real parts: the worker client
// (pkg/worker/agent-worker.ts) dials one URL, as it dials the agentplane-workers Service; the
// replica behind it dies, another takes the address, refuses workers (503) while it does not
// lead, and once it leads (having adopted the worker's stored token) the worker is back,
// saying it resumes.

import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';

import type { ObjectRef } from '../../pkg/api/meta.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { WorkerHub } from '../../pkg/runtime/channel/hub.js';
import { createApp } from '../../pkg/server/app.js';
import { installLeaderOnly } from '../../pkg/server/leader-only.js';
import { workerChannelRoutes } from '../../pkg/server/routes/worker-channel.js';
import { AgentWorker } from '../../pkg/worker/agent-worker.js';
import { until } from '../support/waiting.js';

const logger = createLogger({ level: 'silent' });
const ref: ObjectRef = { namespace: 'default', name: 'alpha' };

interface Replica {
  app: FastifyInstance;
  hub: WorkerHub;
  leading: boolean;
  connected: { runningTaskId?: number }[];
  resumed: number;
  refused: number;
}

async function replica(port: number, leading: boolean): Promise<Replica> {
  const hub = new WorkerHub(logger);
  const app = await createApp({ logger, metrics: new Metrics() });
  const r: Replica = { app, hub, leading, connected: [], resumed: 0, refused: 0 };
  installLeaderOnly(app, () => r.leading);
  app.addHook('onResponse', async (_req, reply) => {
    if (reply.statusCode === 503) r.refused++;
  });
  await app.register(workerChannelRoutes(hub));
  hub.on('connected', (_ref, runningTaskId) => r.connected.push(runningTaskId === undefined ? {} : { runningTaskId }));
  hub.on('resumed', () => r.resumed++);
  await app.listen({ host: '127.0.0.1', port });
  return r;
}

describe('worker control channel across a change of leader', function () {
  this.timeout(15_000);
  let workspace: string;
  let worker: AgentWorker | undefined;
  const replicas: Replica[] = [];

  before(() => {
    workspace = mkdtempSync(join(tmpdir(), 'agentplane-failover-'));
  });

  after(async () => {
    await worker?.stop();
    for (const r of replicas) await r.app.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('reconnects through the same address to the next leader, which counts it as resumed', async () => {
    const a = await replica(0, true);
    replicas.push(a);
    const port = (a.app.server.address() as AddressInfo).port;
    const token = a.hub.issueToken(ref, 'uid-1');
    worker = new AgentWorker({ serverUrl: `http://127.0.0.1:${port}`, token, engine: { workspace }, logger });
    worker.start();
    await until('the worker connected to the first leader', () => a.hub.isConnected(ref));
    expect(a.resumed, 'a first connection is not a reconnect').to.equal(0);

    await a.app.close(); // the leader's pod dies
    const b = await replica(port, false); // the Service's other endpoint: not leading yet
    replicas.push(b);
    b.hub.adopt(ref, 'uid-1', token); // as the Kubernetes runtime does on taking the lead
    await until('the follower refused the worker', () => b.refused > 0, 5000);
    expect(b.hub.isConnected(ref)).to.equal(false);

    b.leading = true; // it took the Lease
    await until('the worker said hello to the new leader', () => b.connected.length > 0, 5000);
    expect(b.resumed).to.equal(1);
    expect(b.connected).to.deep.equal([{}]);
  });

  it('answers a worker at a follower with 503 and Retry-After, naming the leader as the one to reach', async () => {
    const f = await replica(0, false);
    replicas.push(f);
    const res = await f.app.inject({ method: 'GET', url: '/internal/v1/workers/connect' });
    expect(res.statusCode).to.equal(503);
    expect(res.headers['retry-after']).to.equal('1');
    expect(res.body).to.contain('does not lead');
  });
});
