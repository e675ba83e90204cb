// The Kubernetes runtime passes the runtime conformance suite on a real node: pods from the
// worker image on containerd, claims from local-path-provisioner, the control channel and the
// model proxy served from the host on the pods' bridge, the real engine in the containers, and
// the scripted model server for the model's words.

import type { AddressInfo } from 'node:net';

import websocket from '@fastify/websocket';
import { CoreV1Api } from '@kubernetes/client-node';
import Fastify from 'fastify';

import type { ObjectRef } from '../../pkg/api/meta.js';
import { CredentialRegistry, MODEL_PROXY_PATH, ModelProxy, UsageMeter } from '../../pkg/modelproxy/index.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { KubernetesRuntime } from '../../pkg/runtime/kubernetes/kubernetes-runtime.js';
import { groupLabel, objectNames } from '../../pkg/runtime/kubernetes/names.js';
import { BUILTIN_TEMPLATE } from '../../pkg/runtime/kubernetes/template.js';
import { startScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { modelProxyRoutes } from '../../pkg/server/routes/model-proxy.js';
import { workerChannelRoutes } from '../../pkg/server/routes/worker-channel.js';
import { runtimeConformance } from '../conformance/runtime.js';
import { busyFor, eventually, TEST_API_KEY } from '../support/harness.js';
import { type Cluster, clusterUp, livePods } from '../support/pods.js';

const task = { model: 'claude-sonnet-4-5', role: 'worker' as const, mcpServers: [] };
const NS = 'conformance';

describe('KubernetesRuntime on a real node', () => {
  let cluster: Cluster | undefined;

  before(async function () {
    this.timeout(45 * 60_000); // a cold machine builds the cluster and the images first
    cluster = await clusterUp();
    await cluster.kubectl(['create', 'namespace', NS]);
  });

  after(async function () {
    this.timeout(120_000);
    await cluster?.down();
  });

  runtimeConformance(
    'KubernetesRuntime (real node)',
    async () => {
      const c = cluster!;
      const model = await startScriptedModel({ apiKey: TEST_API_KEY });
      const logger = createLogger({ level: 'silent' });
      const credentials = new CredentialRegistry();
      const proxy = new ModelProxy({ upstream: model.url, apiKey: TEST_API_KEY, credentials, meter: new UsageMeter(new Metrics()), logger });
      // The worker listener, where pods reach the host.
      const app = Fastify({ forceCloseConnections: true });
      let channelUrl = '';
      const runtime = new KubernetesRuntime({
        kubeConfig: c.kc,
        logger,
        model: {
          baseUrl: () => `${channelUrl}${MODEL_PROXY_PATH}`,
          issue: (ref, uid) => credentials.issue(ref, uid),
          restore: (ref, uid, cred) => credentials.adopt(ref, uid, cred),
          revoke: (ref) => credentials.revoke(ref),
        },
        channelUrl: () => channelUrl,
        templates: { resolve: () => ({ ...BUILTIN_TEMPLATE, image: c.workerImage, imagePullPolicy: 'Never' }) },
      });
      await app.register(websocket);
      await app.register(workerChannelRoutes(runtime.channel));
      await app.register(modelProxyRoutes(proxy));
      await app.listen({ host: c.gateway, port: 0 });
      channelUrl = `http://${c.gateway}:${(app.server.address() as AddressInfo).port}`;
      await runtime.started();
      const core = c.kc.makeApiClient(CoreV1Api);

      return {
        runtime,
        workspaceExists: async (ref: ObjectRef) => {
          try {
            const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: ref.namespace, name: objectNames(ref.name).claim });
            return !claim.metadata?.deletionTimestamp;
          } catch {
            return false;
          }
        },
        groupExists: async (group: string) => (await livePods(c, NS, `agentplane.io/squad=${groupLabel(group)}`)).length > 0,
        // The worker's process is killed inside its container, behind Kubernetes' back.
        crash: async (ref: ObjectRef) => {
          // The worker has dialled in, but the kubelet's report of its container can lag behind
          // on a loaded node: wait for the container's id before killing it.
          const id = await eventually(
            async () => {
              const [pod] = await livePods(c, ref.namespace, `agentplane.io/agent=${ref.name}`);
              return pod?.status.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '');
            },
            30_000,
            `a running container for ${ref.name}`,
          );
          await c.ctr(['tasks', 'kill', '--signal', 'SIGKILL', id]);
        },
        quickTask: () => ({ ...task, instructions: '@say done' }),
        longTask: () => ({ ...task, instructions: `@bash ${busyFor(600)}\n@say finished` }),
        close: async () => {
          await runtime.close();
          // What the cases left (stopped workers' claims, Secrets): the next fixture starts clean.
          await c.kubectl(
            ['delete', 'pods,pvc,secrets,configmaps', '-n', NS, '-l', 'app.kubernetes.io/managed-by=agentplane', '--wait=true', '--timeout=60s'],
            { allowFail: true },
          );
          proxy.close();
          await app.close();
          await model.close();
        },
      };
    },
    { waitMs: 90_000, quietMs: 1_500 },
  );
});
