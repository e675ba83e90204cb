#!/usr/bin/env node
// agentplane-worker: the process that runs one agent's tasks. Started by a runtime (a local
// process or a container in a pod) with its settings in the environment. With the argument
// `model-proxy` it is instead a pod's model-proxy sidecar (./model-proxy.ts): the same image,
// another entry point.

// First: SIGTERM ends a worker that is still loading (./early-signals.ts says why).
import { takeOverSignals } from './early-signals.js';
import type { PrestartSettings } from '../../pkg/api/worker-protocol.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { runModelProxy } from './model-proxy.js';

if (process.argv[2] === 'model-proxy') await runModelProxy(process.env);
else await runWorker();

async function runWorker(): Promise<void> {
  // Before any engine starts (engine-session.ts says why).
  const { excludeNetworkFromReports } = await import('../../pkg/worker/engine-session.js');
  excludeNetworkFromReports();
  // Loaded here only: the sidecar needs neither the engine nor its SDK (its memory per pod).
  const { AgentWorker } = await import('../../pkg/worker/agent-worker.js');
  const { startHealthServer } = await import('../../pkg/worker/health.js');
  const { startRelay, PLACEHOLDER_API_KEY } = await import('../../pkg/worker/server-relay.js');
  const { workerSecrets } = await import('../../pkg/worker/launch.js');
  function required(name: string): string {
    const v = process.env[name];
    if (!v) {
      process.stderr.write(`agentplane-worker: ${name} must be set\n`);
      process.exit(2);
    }
    return v;
  }

  // The task's spans (pkg/worker/task-trace.ts) export with the server's OTEL_* settings; off when unset.
  const { startTracing } = await import('../../pkg/observability/tracing.js');
  const tracing = await startTracing('agentplane-worker');
  const logger = createLogger().child({
    component: 'worker',
    namespace: process.env.AGENTPLANE_NAMESPACE,
    name: process.env.AGENTPLANE_AGENT_NAME,
  });

  const { token, credential } = await workerSecrets();
  if (!token) {
    process.stderr.write('agentplane-worker: AGENTPLANE_AGENT_TOKEN must be set (or sent over IPC)\n');
    process.exit(2);
  }
  // In a sandbox whose network is its own, the server is a Unix socket away, and the engine and
  // its tools reach it through this worker's relay, which adds the credential they never see.
  const socketPath = process.env.AGENTPLANE_SERVER_SOCKET;
  const relay = socketPath && credential ? await startRelay({ socketPath, credential: () => credential }) : undefined;
  const modelPath = new URL(process.env.ANTHROPIC_BASE_URL ?? 'http://localhost/internal/v1/model').pathname;

  const worker = new AgentWorker({
    serverUrl: required('AGENTPLANE_SERVER_URL'),
    ...(socketPath ? { socketPath } : {}),
    token,
    engine: {
      workspace: required('AGENTPLANE_WORKSPACE'),
      ...(relay
        ? {
            apiKey: PLACEHOLDER_API_KEY,
            baseUrl: `${relay.url}${modelPath}`,
            // Connectors through the server's gateway, by way of the relay, which adds the credential.
            serverUrl: relay.url,
            // Tools and the engine's own fetches leave through agentplane's egress proxy.
            extraEnv: {
              HTTP_PROXY: relay.url,
              HTTPS_PROXY: relay.url,
              http_proxy: relay.url,
              https_proxy: relay.url,
              NO_PROXY: '127.0.0.1,localhost',
              no_proxy: '127.0.0.1,localhost',
            },
          }
        : {
            apiKey: credential,
            baseUrl: process.env.ANTHROPIC_BASE_URL,
            // Connectors are reached through the server's gateway (the worker channel's listener).
            serverUrl: required('AGENTPLANE_SERVER_URL'),
          }),
      ...(process.env.AGENTPLANE_SQUAD_DIR ? { squadDir: process.env.AGENTPLANE_SQUAD_DIR } : {}),
    },
    wakeIdle: process.env.AGENTPLANE_WAKE_IDLE === 'true',
    ...(process.env.AGENTPLANE_PRESTART ? { prestart: JSON.parse(process.env.AGENTPLANE_PRESTART) as PrestartSettings } : {}),
    logger,
  });

  // The token and key are only needed by this process; drop them from the inherited environment.
  delete process.env.AGENTPLANE_AGENT_TOKEN;
  delete process.env.ANTHROPIC_API_KEY;

  // Once: a stop is signalled again until the process is gone (pkg/runtime/local/process-kill.ts).
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    void worker
      .stop()
      .then(() => tracing?.shutdown())
      .catch(() => undefined)
      .then(() => process.exit(0));
  };
  takeOverSignals(shutdown);
  // Started by a local runtime with an IPC channel: when the server goes away, so do we.
  // (A squad's supervisor stops a member so; one stopped while it loaded finds it gone already.)
  if (process.send && !process.connected) return process.exit(0);
  if (process.send) process.on('disconnect', shutdown);

  worker.start();
  // In a pod: the readiness probe's endpoint (the container's one port).
  const healthPort = Number(process.env.AGENTPLANE_HEALTH_PORT);
  if (Number.isInteger(healthPort) && healthPort > 0) startHealthServer(healthPort, () => worker.connected);
}
