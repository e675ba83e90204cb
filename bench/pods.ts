// Agents as pods, timed on the local cluster's real node (`make bench-pods`): how long from a
// create to the agent's pod Running, to `task_started` reaching a WebSocket client and to the
// task's first model request (also when the template keeps a warm pool of pods), and from a task
// sent to a sleeping agent to the same two, beside the floor every pod pays: a bare pod of the same worker image, created and watched the same way in the same run. Then what a pod's
// model-proxy sidecar adds to one model request, beside the same request sent straight to the
// model from the same pod in the same run. Prints figures; asserts nothing.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, Watch, type V1Pod } from '@kubernetes/client-node';
import WebSocket from 'ws';

import { MODEL_PROXY_PORT, workerPod } from '../pkg/runtime/kubernetes/objects.js';
import { BUILTIN_TEMPLATE } from '../pkg/runtime/kubernetes/template.js';
import { type ScriptedModel, startScriptedModel } from '../pkg/scriptedmodel/index.js';
import { type Cluster, clusterUp, registerAgentplane, type Tls } from '../test/support/pods.js';
import { fmt, summarize, table } from './stats.js';

const NS = 'bench-pods';
const ROUNDS = 5;
const WATCHDOG_MS = 20 * 60_000;
/** Model requests per path (sidecar, direct), alternated, after a warm-up. */
const MODEL_REQUESTS = 200;

/** When each pod (by a label's value) was first seen Running, from one watch of the namespace. */
class PodClock {
  private readonly running = new Map<string, number>();
  private readonly waiters = new Map<string, (t: number) => void>();
  private abort?: AbortController;

  constructor(
    private readonly c: Cluster,
    private readonly label: string,
  ) {}

  async start(): Promise<void> {
    this.abort = await new Watch(this.c.kc).watch(
      `/api/v1/namespaces/${NS}/pods`,
      { labelSelector: this.label },
      (_type: string, pod: V1Pod) => {
        const key = pod.metadata?.labels?.[this.label];
        if (!key || pod.status?.phase !== 'Running' || this.running.has(`${key}/${pod.metadata?.uid}`)) return;
        const t = performance.now();
        this.running.set(`${key}/${pod.metadata?.uid}`, t);
        this.waiters.get(key)?.(t);
        this.waiters.delete(key);
      },
      () => undefined,
    );
  }

  /** Resolves with the time the next pod labelled `key` runs. */
  next(key: string): Promise<number> {
    return new Promise((resolve) => this.waiters.set(key, resolve));
  }

  stop(): void {
    this.abort?.abort();
  }
}

/**
 * ms from `sentAt` (Date.now()) to the first model request of the task with these instructions,
 * as the scripted model behind agentplane's model proxy saw it: where the task reached the model.
 */
function firstRequest(model: ScriptedModel, instructions: string, sentAt: number): number {
  const first = model.requests.find((r) => r.hasTools && r.receivedAt >= sentAt && r.lastUserText === instructions);
  if (!first) throw new Error(`no model request seen for "${instructions}"`);
  return first.receivedAt - sentAt;
}

/** A WebSocket on the agent's stream; `next(type)` resolves with the time that event arrives. */
function follow(url: string, tls: Tls, name: string): Promise<{ next: (type: string) => Promise<number>; close: () => void }> {
  return new Promise((resolve, reject) => {
    const waiters = new Map<string, (t: number) => void>();
    const ws = new WebSocket(`${url.replace('https', 'wss')}/api/v1/agents/${name}/ws?namespace=${NS}`, tls);
    ws.on('message', (m) => {
      const t = performance.now();
      const { type } = JSON.parse((m as Buffer).toString()) as { type: string };
      waiters.get(type)?.(t);
      waiters.delete(type);
    });
    ws.on('open', () => resolve({ next: (type) => new Promise((r) => waiters.set(type, r)), close: () => ws.close() }));
    ws.on('error', reject);
  });
}

/** A template keeping one pod ready in the bench's namespace (for managers, the agents' default role). */
const POOL_TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata: {name: agentplane-template-pooled, namespace: agentplane-system, labels: {agentplane.io/template: pooled}}
data:
  template.yaml: |
    warmPool: {size: 1, namespaces: [${NS}]}
`;

/** Waits until the pool has a pod no agent took whose containers are all ready. */
async function readyPoolPod(c: Cluster): Promise<void> {
  const core = c.kc.makeApiClient(CoreV1Api);
  for (let t = 0; ; t++) {
    const { items } = await core.listNamespacedPod({ namespace: NS, labelSelector: 'agentplane.io/warm-pool=pooled,!agentplane.io/agent' });
    const ready = items.some(
      (p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((s) => s.ready),
    );
    if (ready) return;
    if (t > 3000) throw new Error('no ready warm-pool pod after 150 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function barePods(c: Cluster, clock: PodClock): Promise<number[]> {
  const core = c.kc.makeApiClient(CoreV1Api);
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const key = `bare-${i}`;
    const running = clock.next(key);
    const t0 = performance.now();
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: key, labels: { bench: key } },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'w', image: c.workerImage, imagePullPolicy: 'Never', command: ['sleep', '300'] }],
        },
      },
    });
    samples.push((await running) - t0);
    await core.deleteNamespacedPod({ namespace: NS, name: key, gracePeriodSeconds: 0 });
  }
  return samples;
}

/**
 * One pod built as the runtime builds an agent's (workerPod with the sidecar), its worker
 * container replaced by a client that times streamed requests from inside the pod: to the
 * sidecar on loopback (credential in, key out, usage reported to a stand-in for the server on
 * the host) and straight to the scripted model on the host with the key, alternating.
 */
async function sidecarLatency(c: Cluster): Promise<{ sidecar: number[]; direct: number[] }> {
  const key = `sk-bench-${Math.random().toString(36).slice(2)}`;
  const credential = 'apmc_bench-sidecar-credential';
  const model = await startScriptedModel({ host: c.gateway, apiKey: key });
  const reports = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((r) => reports.listen(0, c.gateway, r));
  const core = c.kc.makeApiClient(CoreV1Api);
  try {
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'agentplane-model' }, stringData: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: model.url } },
    });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'agent-probe-worker' }, stringData: { 'model-credential': credential } } });
    const template = { ...BUILTIN_TEMPLATE, image: c.workerImage, imagePullPolicy: 'Never' as const };
    const pod = workerPod({
      namespace: NS,
      agent: 'probe',
      generateName: 'sidecar-bench-',
      members: [{ name: 'probe', template }],
      modelProxy: { secretName: 'agentplane-model', serverUrl: `http://${c.gateway}:${(reports.address() as AddressInfo).port}` },
    });
    const spec = pod.spec!;
    spec.volumes = spec.volumes!.filter((v) => v.name.startsWith('model-'));
    spec.containers = [
      { name: 'probe', image: c.workerImage, imagePullPolicy: 'Never', command: ['sleep', '600'], securityContext: spec.initContainers![0].securityContext! },
    ];
    const made = await core.createNamespacedPod({ namespace: NS, body: pod });
    const name = made.metadata!.name!;
    await c.kubectl(['wait', '--for=condition=Ready', `pod/${name}`, '-n', NS, '--timeout=120s']);
    // The script (with the key) goes in on stdin: no command line holds it.
    const script = `
const body = JSON.stringify({ model: 'claude-bench', max_tokens: 64, stream: true, messages: [{ role: 'user', content: '@say hello' }] });
const paths = { sidecar: ['http://127.0.0.1:${MODEL_PROXY_PORT}', ${JSON.stringify(credential)}], direct: [${JSON.stringify(model.url)}, ${JSON.stringify(key)}] };
const one = async ([base, k]) => {
  const t0 = performance.now();
  const r = await fetch(base + '/v1/messages', { method: 'POST', headers: { 'x-api-key': k, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body });
  if (r.status !== 200) throw new Error(base + ': HTTP ' + r.status);
  await r.text();
  return performance.now() - t0;
};
const out = { sidecar: [], direct: [] };
for (let i = 0; i < 20; i++) { await one(paths.sidecar); await one(paths.direct); }
for (let i = 0; i < ${MODEL_REQUESTS}; i++) for (const p of i % 2 ? ['direct', 'sidecar'] : ['sidecar', 'direct']) out[p].push(await one(paths[p]));
console.log(JSON.stringify(out));
`;
    const res = await c.kubectl(['exec', '-i', name, '-n', NS, '-c', 'probe', '--', 'node', '--input-type=module', '-'], { input: script });
    await core.deleteNamespacedPod({ namespace: NS, name, gracePeriodSeconds: 0 });
    return JSON.parse(res.stdout.trim().split('\n').at(-1)!) as { sidecar: number[]; direct: number[] };
  } finally {
    reports.close();
    await model.close();
  }
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error('bench-pods: watchdog fired');
    process.exit(1);
  }, WATCHDOG_MS);
  console.log('agentplane pods benchmark: the local cluster, one real node (containerd, kubelet), scripted model\n');
  const c = await clusterUp();
  // The model behind agentplane's own proxy (instead of the server's built-in demo model), so
  // that each task's first model request is seen when it arrives.
  const upstreamKey = 'bench-pods-upstream-key';
  const upstream = await startScriptedModel({ host: '127.0.0.1', apiKey: upstreamKey });
  try {
    const { url, tls, rest } = await registerAgentplane(c, {
      AGENTPLANE_CP_MODEL_URL: upstream.url,
      ANTHROPIC_API_KEY: upstreamKey,
      AGENTPLANE_MODEL_PROXY: 'server',
    });
    await c.kubectl(['create', 'namespace', NS]);

    const bareClock = new PodClock(c, 'bench');
    await bareClock.start();
    const bare = await barePods(c, bareClock);
    bareClock.stop();

    type Stream = Awaited<ReturnType<typeof follow>>;
    /**
     * POSTs a task (creating the agent, or to an existing one whose stream is `open`) and waits
     * for its end: when it was sent, and ms to `task_started` on the stream and to the task's
     * first model request. A name's stream is refused until the agent exists, so a create opens
     * it after the POST, long before the pod can run.
     */
    const timedTask = async (body: { name: string; instructions: string; templateRef?: string }, open?: Stream) => {
      const waitFor = (s: Stream) => ({ started: s.next('task_started'), completed: s.next('task_completed') });
      const early = open && waitFor(open);
      const [t0, w0] = [performance.now(), Date.now()];
      const { status } = await rest('POST', '/api/v1/agents', { namespace: NS, ...body });
      if (status >= 300) throw new Error(`POST ${body.name}: HTTP ${status}`);
      const stream = open ?? (await follow(url, tls, body.name));
      const { started, completed } = early || waitFor(stream);
      const startedMs = (await started) - t0;
      await completed;
      return { stream, t0, started: startedMs, model: firstRequest(upstream, body.instructions, w0) };
    };

    const clock = new PodClock(c, 'agentplane.io/agent');
    await clock.start();
    const create = { running: [] as number[], started: [] as number[], model: [] as number[] };
    const wake = { started: [] as number[], model: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      const name = `agent-${i}`;
      const running = clock.next(name);
      const first = await timedTask({ name, instructions: `@say first ${name}` });
      create.running.push((await running) - first.t0);
      create.started.push(first.started);
      create.model.push(first.model);

      // Sleep (the pod goes, the claim stays), then wake with a task.
      await rest('PATCH', `/api/v1/agents/${name}?namespace=${NS}`, { lifecycle: 'Sleep' });
      const core = c.kc.makeApiClient(CoreV1Api);
      for (let t = 0; ; t++) {
        const { items } = await core.listNamespacedPod({ namespace: NS, labelSelector: `agentplane.io/agent=${name}` });
        if (items.length === 0) break;
        if (t > 600) throw new Error(`${name}: pod still there after sleep`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const again = await timedTask({ name, instructions: `@say again ${name}` }, first.stream);
      wake.started.push(again.started);
      wake.model.push(again.model);
      first.stream.close();
    }

    // The same create when the agent's template keeps a warm pool (docs/kubernetes-runtime.md
    // "Warm pool"): each round waits for a ready pool pod first, as a burst of creates no larger
    // than the pool would find one.
    await c.kubectl(['apply', '-f', '-'], { input: POOL_TEMPLATE });
    const pooled = { started: [] as number[], model: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      await readyPoolPod(c);
      const name = `pooled-${i}`;
      const run = await timedTask({ name, templateRef: 'pooled', instructions: `@say first ${name}` });
      pooled.started.push(run.started);
      pooled.model.push(run.model);
      run.stream.close();
    }
    clock.stop();

    const row = (label: string, samples: number[]): string[] => {
      const s = summarize(samples);
      return [label, String(s.n), fmt(s.min, 0), fmt(s.median, 0), fmt(s.p90, 0), fmt(s.max, 0)];
    };
    console.log(
      table(
        ['ms (one at a time)', 'n', 'min', 'median', 'p90', 'max'],
        [
          row('baseline: bare pod of the worker image -> Running', bare),
          row('create agent -> its pod Running', create.running),
          row('create agent -> task_started on the WebSocket', create.started),
          row('create agent -> first model request', create.model),
          row('create agent, warm pool -> task_started', pooled.started),
          row('create agent, warm pool -> first model request', pooled.model),
          row('task to a sleeping agent -> task_started', wake.started),
          row('task to a sleeping agent -> first model request', wake.model),
        ],
      ),
    );
    console.log('\nThe agent rows include what the baseline pays (scheduling, the sandbox, the container) plus');
    console.log("agentplane's part: its Secret, ConfigMap and claim (a local-path volume made by a helper pod),");
    console.log('then the worker starting the engine, dialing back and receiving the task. With a warm pool the');
    console.log('agent takes a Running pod whose engine has started: its objects are relabelled, the task sent.');

    const lat = await sidecarLatency(c);
    const ms = (label: string, samples: number[]): string[] => {
      const s = summarize(samples);
      return [label, String(s.n), fmt(s.min, 2), fmt(s.median, 2), fmt(s.p90, 2), fmt(s.max, 2)];
    };
    console.log('');
    console.log(
      table(
        ['ms per streamed model request, from inside a pod', 'n', 'min', 'median', 'p90', 'max'],
        [ms('baseline: straight to the model (the key in the pod)', lat.direct), ms("through the pod's model-proxy sidecar", lat.sidecar)],
      ),
    );
    console.log(
      `\nThe sidecar adds ${fmt(summarize(lat.sidecar).median - summarize(lat.direct).median, 2)} ms at the median: a loopback hop, the credential check,`,
    );
    console.log('and the usage report to the server, which the stream waits for before its last event.');
  } finally {
    clearTimeout(watchdog);
    await c.down();
    await upstream.close();
  }
}

await main();
