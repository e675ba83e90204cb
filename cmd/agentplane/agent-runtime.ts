// Where agents run (runtimes.ts builds it): local workers or pods, wired to the model proxy's
// credentials. Workers dial the control channel once its listener is bound (listeners.ts).

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL_PROXY_PATH } from '../../pkg/modelproxy/index.js';
import type { Sandbox } from '../../pkg/runtime/local/sandbox.js';
import { DEFAULT_SECRET_NAME as DEFAULT_MIRROR_SECRET } from '../../plugins/credential-mirror/credential-mirror.js';
import type { ChannelEndpoint } from './endpoints.js';
import type { Home } from './homes.js';
import type { ModelSide } from './model.js';
import { type BuiltRuntime, buildRuntime } from './runtimes.js';
import type { Wiring } from './wiring.js';

/** The worker's entry script, which the local runtime runs for each agent. */
const WORKER_MAIN = fileURLToPath(new URL('../agentplane-worker/main.js', import.meta.url));

export interface AgentRuntimeParts {
  built: BuiltRuntime;
  /** Sandboxed local workers' one way to the server (they get a network of their own). */
  workerSocket?: string;
}

export function wireRuntime(w: Wiring, home: Home, sandbox: Sandbox, channel: ChannelEndpoint, m: ModelSide): AgentRuntimeParts {
  const { o, child, metrics, dataDir } = w;
  const mirrorOptions = (o.pluginOptions?.['credential-mirror'] ?? {}) as { secretName?: unknown };
  const workerSocket = w.runtimeKind === 'local' && sandbox.kind === 'bwrap' ? join(dataDir, 'run', 'workers.sock') : undefined;
  const built = buildRuntime({
    kind: w.runtimeKind,
    logger: child('runtime'),
    model: {
      baseUrl: () => `${channel.url}${MODEL_PROXY_PATH}`,
      issue: (ref, uid) => m.credentials.issue(ref, uid),
      issueReport: (ref) => m.credentials.issueReport(ref),
      restore: (ref, uid, credential, report) => m.credentials.adopt(ref, uid, credential, report),
      rebind: (from, to, uid) => m.credentials.rebind(from, to, uid),
      revoke: (ref) => {
        m.credentials.revoke(ref);
        m.usageMeter.forget(ref);
      },
    },
    channelUrl: () => channel.url,
    templates: w.templates,
    local: {
      dataDir,
      sandbox,
      ...(workerSocket ? { workerSocket } : {}),
      workerMain: o.workerMain ?? WORKER_MAIN,
      ...(o.workerChannelLimits ? { channelLimits: o.workerChannelLimits } : {}),
      ...(o.workerLogSink ? { logSink: o.workerLogSink } : {}),
      warmPool: o.warmPool ?? 0,
      ...(o.workerNiceness !== undefined ? { niceness: o.workerNiceness } : {}),
    },
    warmPoolMetrics: { ready: (n) => metrics.warmPoolSlots.set(n), claim: (result) => metrics.warmPoolClaims.inc({ result }) },
    ...(home.cluster ? { cluster: home.cluster } : {}),
    pods: { ...o.pods, modelProxy: m.mode },
    modelSidecar: {
      secretName: typeof mirrorOptions.secretName === 'string' ? mirrorOptions.secretName : DEFAULT_MIRROR_SECRET,
      // The server's own endpoint, when the mirrored Secret names none (not the demo's loopback model).
      ...(!o.demo && m.modelEnv.baseUrl ? { upstream: m.modelEnv.baseUrl } : {}),
      ...(o.modelRetry ? { retry: JSON.stringify(o.modelRetry) } : {}),
    },
  });
  w.manager.onStop('runtime', () => built.stop());
  return { built, ...(workerSocket ? { workerSocket } : {}) };
}
