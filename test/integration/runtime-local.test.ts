// The local runtime passes the runtime conformance suite with everything real: worker processes
// (solo, and under a squad's group supervisor), the control channel over a loopback WebSocket, the
// Claude Agent SDK engine, and the scripted model server for the model's words.

import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import websocket from '@fastify/websocket';
import Fastify from 'fastify';

import { createLogger } from '../../pkg/observability/logger.js';
import type { LocalRuntimeOptions } from '../../pkg/runtime/local/local-options.js';
import { LocalRuntime, WORKER_NICENESS } from '../../pkg/runtime/local/local-runtime.js';
import { resolveSandbox } from '../../pkg/runtime/local/sandbox.js';
import { autogroupsEnabled, sessionNiceness } from '../../pkg/runtime/local/session-niceness.js';
import { startScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { modelProxyRoutes } from '../../pkg/server/routes/model-proxy.js';
import { workerChannelRoutes } from '../../pkg/server/routes/worker-channel.js';
import { CredentialRegistry, MODEL_PROXY_PATH, ModelProxy, UsageMeter } from '../../pkg/modelproxy/index.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { runtimeConformance } from '../conformance/runtime.js';
import { busyFor, eventually, TEST_API_KEY } from '../support/harness.js';

const WORKER_MAIN = fileURLToPath(new URL('../../cmd/agentplane-worker/main.js', import.meta.url));
const task = { model: 'claude-sonnet-4-5', role: 'worker' as const, mcpServers: [] };

/** With `warmPool`, the fixture returns once the pool is ready, so the first new agent takes a slot. */
const fixtureWith =
  (warmPool = 0, more: Partial<LocalRuntimeOptions> = {}): Parameters<typeof runtimeConformance>[1] =>
  async () => {
    const model = await startScriptedModel({ apiKey: TEST_API_KEY });
    const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-runtime-'));
    const logger = createLogger({ level: 'silent' });
    let channelUrl = '';
    const credentials = new CredentialRegistry();
    const proxy = new ModelProxy({ upstream: model.url, apiKey: TEST_API_KEY, credentials, meter: new UsageMeter(new Metrics()), logger });
    const runtime = new LocalRuntime({
      dataDir,
      logger,
      model: {
        baseUrl: () => `${channelUrl}${MODEL_PROXY_PATH}`,
        issue: (ref, uid) => credentials.issue(ref, uid),
        rebind: (from, to, uid) => credentials.rebind(from, to, uid),
        revoke: (ref) => credentials.revoke(ref),
      },
      warmPool,
      stopGraceMs: 2000,
      logSink: () => {},
      workerMain: WORKER_MAIN,
      channelUrl: () => channelUrl,
      ...more,
    });
    // The worker channel route alone, on loopback: what the server serves workers.
    const app = Fastify({ forceCloseConnections: true });
    await app.register(websocket);
    await app.register(workerChannelRoutes(runtime.channel));
    await app.register(modelProxyRoutes(proxy));
    await app.listen({ host: '127.0.0.1', port: 0 });
    channelUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    runtime.startPool();
    if (warmPool) await eventually(async () => runtime.poolReady === warmPool, 60_000, 'the warm pool ready');

    return {
      runtime,
      workspaceExists: async (ref) => existsSync(runtime.workspace(ref)),
      groupExists: async (group) => runtime.groups().includes(group),
      crash: async (ref) => {
        const pid = runtime.pid(ref);
        if (pid === undefined) throw new Error(`no worker process for ${ref.name}`);
        process.kill(pid, 'SIGKILL');
      },
      quickTask: () => ({ ...task, instructions: '@say done' }),
      longTask: () => ({ ...task, instructions: `@bash ${busyFor(600)}\n@say finished` }),
      close: async () => {
        await runtime.close();
        proxy.close();
        await app.close();
        await model.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  };

runtimeConformance('LocalRuntime', fixtureWith());
// A new agent takes over a pre-started worker: everything the runtime promises still holds.
runtimeConformance('LocalRuntime with a warm pool', fixtureWith(1));

describe('LocalRuntime worker priority', function () {
  this.timeout(30_000);

  it('runs workers and squad group supervisors niced below the server (WORKER_NICENESS), so the API keeps the CPU', async () => {
    const f = await fixtureWith()();
    const rt = f.runtime as LocalRuntime;
    try {
      const want = Math.min(19, getPriority(0) + WORKER_NICENESS);
      // Once a worker has dialed in, its process is the worker itself (nice(1) exec'ed it).
      const ready = (name: string) => eventually(async () => (await rt.status({ namespace: 'default', name })).phase === 'Ready', 20_000, `${name} ready`);
      await rt.ensure({ ref: { namespace: 'default', name: 'nicer' }, uid: 'uid-nicer' });
      await ready('nicer');
      expect(getPriority(rt.pid({ namespace: 'default', name: 'nicer' }))).to.equal(want);
      await rt.ensure({ ref: { namespace: 'default', name: 'member' }, uid: 'uid-member', group: 'crew', peers: [] });
      await ready('member');
      expect(getPriority(rt.pid({ namespace: 'default', name: 'member' }))).to.equal(want);
      expect(getPriority(0), 'the server itself is untouched').to.be.lessThan(want);
      // With the kernel's autogroups each worker's session is a scheduling group of its own: niced too.
      if (autogroupsEnabled()) {
        for (const name of ['nicer', 'member']) {
          const pid = rt.pid({ namespace: 'default', name })!;
          await eventually(async () => sessionNiceness(pid) === WORKER_NICENESS, 5_000, `${name}'s session niced`);
        }
        expect(sessionNiceness(process.pid), "the server's session is untouched").to.be.lessThan(WORKER_NICENESS);
      }
    } finally {
      await f.close();
    }
  });
});

describe('LocalRuntime stop while a sandboxed worker starts', function () {
  // Far below the stop grace: a worker that ignored the stop would be SIGKILLed only after it.
  this.timeout(30_000);

  it("a worker stopped while it loads ends on SIGTERM, though the sandbox's bubblewrap ignores SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-sandbox-stop-'));
    const f = await fixtureWith(0, { stopGraceMs: 120_000, sandbox: resolveSandbox('bwrap', dataDir, createLogger({ level: 'silent' })) })();
    const rt = f.runtime as LocalRuntime;
    const ref = { namespace: 'default', name: 'brief' };
    try {
      await rt.ensure({ ref, uid: 'uid-brief' });
      await eventually(async () => rt.pid(ref) !== undefined, 10_000, 'the worker spawned');
      await rt.stop(ref);
      expect(rt.isRunning(ref)).to.equal(false);
    } finally {
      await f.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
