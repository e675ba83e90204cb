// `agentplane-worker model-proxy`: the worker image's model-proxy sidecar (pkg/modelproxy/
// sidecar.ts), with its settings in the environment the Kubernetes runtime gives it
// (pkg/runtime/kubernetes/objects.ts, modelProxyContainer).

import { takeOverSignals } from './early-signals.js';
import { startSidecar } from '../../pkg/modelproxy/sidecar.js';
import type { RetryPolicy } from '../../pkg/modelproxy/retry.js';
import { componentLogger, createLogger } from '../../pkg/observability/logger.js';

export async function runModelProxy(env: NodeJS.ProcessEnv): Promise<void> {
  const required = (name: string): string => {
    const v = env[name];
    if (!v) {
      process.stderr.write(`agentplane-worker model-proxy: ${name} must be set\n`);
      process.exit(2);
    }
    return v;
  };
  const logger = componentLogger(createLogger(), 'model-proxy', { namespace: env.AGENTPLANE_NAMESPACE });
  let retry: Partial<RetryPolicy> | undefined;
  if (env.AGENTPLANE_MODEL_RETRY) retry = JSON.parse(env.AGENTPLANE_MODEL_RETRY) as Partial<RetryPolicy>;
  const sidecar = await startSidecar({
    namespace: required('AGENTPLANE_NAMESPACE'),
    serverUrl: required('AGENTPLANE_SERVER_URL'),
    port: Number(required('AGENTPLANE_MODEL_PROXY_PORT')),
    keyDir: required('AGENTPLANE_MODEL_KEY_DIR'),
    credentialsDir: required('AGENTPLANE_MODEL_CREDENTIALS_DIR'),
    ...(env.AGENTPLANE_MODEL_UPSTREAM ? { upstream: env.AGENTPLANE_MODEL_UPSTREAM } : {}),
    ...(retry ? { retry } : {}),
    logger,
  });
  // Streams still open when the pod goes are cut after a moment rather than holding it up.
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 2000).unref();
    void sidecar.close().then(() => process.exit(0));
  };
  takeOverSignals(shutdown);
}
