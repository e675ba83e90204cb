// Agents against native objects, through kube-apiserver (`make bench`, the "native" section): an
// API-only control plane (etcd + kube-apiserver, test/support/control-plane.ts) with agentplane
// registered as the aggregated API, and the same requests made to ConfigMaps on the same plane in
// the same run as the baseline. Prints figures; asserts nothing.

import { execFile } from 'node:child_process';
import { Agent as HttpsAgent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';

import { controlPlaneUp, REPO, type ControlPlane } from '../test/support/control-plane.js';
import { type Client, letters } from './api-probe.js';
import { kubeClientFigures, type KubeClientRow, printKubeClient } from './kube-client.js';
import { fmt, percentile, table } from './stats.js';

const run = promisify(execFile);

const GETS = 300;
const TABLE_ROUNDS = 100;
const CREATES = 50;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const AGENTS = '/apis/agentplane.io/v1alpha1/namespaces';
const CONFIGMAPS = '/api/v1/namespaces';

/**
 * Keep-alive HTTPS connections as the admin (the kubeconfig's client certificate): to
 * kube-apiserver, or with `direct` to agentplane itself (its serving CA; it accepts the same
 * client certificate), which splits the aggregator's hop from agentplane's own time.
 */
export async function client(kubeconfig: string, direct?: { url: string; ca: Buffer }, maxSockets = 4): Promise<Client> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const opts: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  await kc.applyToHTTPSOptions(opts);
  const agent = new HttpsAgent({ keepAlive: true, maxSockets, ca: direct?.ca ?? opts.ca, cert: opts.cert, key: opts.key });
  const server = direct?.url ?? kc.getCurrentCluster()!.server;
  return {
    call: (method, path, body, accept = 'application/json') =>
      new Promise((resolve, reject) => {
        const req = request(`${server}${path}`, { method, agent, headers: { accept, 'content-type': 'application/json' } }, (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (data += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
        });
        req.on('error', reject);
        req.end(body === undefined ? undefined : JSON.stringify(body));
      }),
    close: () => agent.destroy(),
  };
}

async function timed(c: Client, method: string, path: string, body?: unknown, accept?: string): Promise<number> {
  const t0 = performance.now();
  const res = await c.call(method, path, body, accept);
  const ms = performance.now() - t0;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return ms;
}

const configMap = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { instructions: '@say hi' } });
const agent = (name: string): unknown => ({
  apiVersion: 'agentplane.io/v1alpha1',
  kind: 'Agent',
  metadata: { name },
  spec: { instructions: '@say hi', role: 'worker' },
});

export interface NativeFigures {
  /** agentplane's own client to kube-apiserver, with and without kept-alive connections. */
  client: KubeClientRow[];
  rows: { label: string; agent: number[]; native: number[]; goal: string; met: (a: number[], n: number[]) => boolean }[];
}

const p = (ms: number[], q: number): number =>
  percentile(
    [...ms].sort((a, b) => a - b),
    q,
  );

/** Runs every figure on a fresh API-only plane; `log` prints progress. */
export async function nativeFigures(log: (s: string) => void): Promise<NativeFigures> {
  const cp = await controlPlaneUp();
  try {
    // The per-user rate limit (100/s by default in Kubernetes mode) is off: this measures
    // latency, and kube-apiserver's own flow control does not hold back the ConfigMap baseline.
    const env = { ...process.env, AGENTPLANE_CP_DIR: cp.dir, AGENTPLANE_RATE_LIMIT: '0' };
    const reg = await run('bash', [join(REPO, 'hack/control-plane.sh'), 'register'], { env, timeout: 5 * 60_000 });
    const url = reg.stdout.trim().split('\n').at(-1)!;
    const c = await client(cp.kubeconfig);
    const d = await client(cp.kubeconfig, { url, ca: readFileSync(join(cp.dir, 'pki/serving-ca.crt')) });
    try {
      log("agentplane's client to kube-apiserver");
      const clientRows = await kubeClientFigures(cp.kubeconfig);
      return { ...(await measure(cp, c, d, log)), client: clientRows };
    } finally {
      c.close();
      d.close();
    }
  } finally {
    await cp.down();
  }
}

async function measure(cp: ControlPlane, c: Client, direct: Client, log: (s: string) => void): Promise<Omit<NativeFigures, 'client'>> {
  for (const ns of ['bench-get', 'bench-table', 'bench-create', 'bench-start']) await cp.kubectl(['create', 'namespace', ns]);

  log('GET of one object');
  await timed(c, 'POST', `${AGENTS}/bench-get/agents`, agent('one'));
  await timed(c, 'POST', `${CONFIGMAPS}/bench-get/configmaps`, configMap('one'));
  await sleep(2_000); // the agent's first task settles
  const getAgent: number[] = [];
  const getCm: number[] = [];
  const getDirect: number[] = [];
  const getRecord: number[] = [];
  for (let i = 0; i < GETS; i++) {
    getCm.push(await timed(c, 'GET', `${CONFIGMAPS}/bench-get/configmaps/one`));
    getAgent.push(await timed(c, 'GET', `${AGENTS}/bench-get/agents/one`));
    getDirect.push(await timed(direct, 'GET', `${AGENTS}/bench-get/agents/one`));
    getRecord.push(await timed(c, 'GET', `/apis/internal.agentplane.io/v1alpha1/namespaces/bench-get/agentrecords/one`));
  }

  log('Table of 50');
  for (let i = 0; i < 50; i++) {
    await timed(c, 'POST', `${CONFIGMAPS}/bench-table/configmaps`, configMap(letters(i)));
    await timed(c, 'POST', `${AGENTS}/bench-table/agents`, {
      ...(agent(letters(i)) as object),
      spec: { instructions: '@say hi', role: 'worker', lifecycle: 'Sleep' },
    });
  }
  await sleep(3_000);
  const tableAgent: number[] = [];
  const tableCm: number[] = [];
  for (let i = 0; i < TABLE_ROUNDS; i++) {
    tableCm.push(await timed(c, 'GET', `${CONFIGMAPS}/bench-table/configmaps`, undefined, TABLE));
    tableAgent.push(await timed(c, 'GET', `${AGENTS}/bench-table/agents`, undefined, TABLE));
  }

  const gets = [
    { label: 'GET one object', agent: getAgent, native: getCm, goal: 'p50 <= 2x', met: (a: number[], n: number[]) => p(a, 50) <= 2 * p(n, 50) },
    { label: '  agent GET straight to agentplane', agent: getDirect, native: getCm, goal: '(where time goes)', met: () => true },
    { label: '  its storage record GET (CRD)', agent: getRecord, native: getCm, goal: '(where time goes)', met: () => true },
    { label: 'Table of 50 (kubectl get)', agent: tableAgent, native: tableCm, goal: 'p50 <= 2x', met: (a: number[], n: number[]) => p(a, 50) <= 2 * p(n, 50) },
  ];
  // BENCH_NATIVE_QUICK=1: reads only (for a quick look while working on them).
  if (process.env.BENCH_NATIVE_QUICK) return { rows: gets };

  log('50 creates in a row');
  const createCm: number[] = [];
  for (let i = 0; i < CREATES; i++) createCm.push(await timed(c, 'POST', `${CONFIGMAPS}/bench-create/configmaps`, configMap(letters(i))));
  const createAgent: number[] = [];
  for (let i = 0; i < CREATES; i++) createAgent.push(await timed(c, 'POST', `${AGENTS}/bench-create/agents`, agent(letters(i))));

  log('GET while 50 agents start');
  // Quiet first: the agents of the previous step finish their tasks.
  await sleep(5_000);
  const quiet: number[] = [];
  for (let i = 0; i < 100; i++) quiet.push(await timed(c, 'GET', `${AGENTS}/bench-get/agents/one`));
  const starting: number[] = [];
  const creates = (async () => {
    for (let i = 0; i < CREATES; i++) await timed(c, 'POST', `${AGENTS}/bench-start/agents`, agent(letters(i)));
  })();
  let done = false;
  void creates.finally(() => (done = true));
  const until = performance.now() + 60_000;
  // GETs every 10 ms while the creates run and for 5 s after (the workers are still starting).
  while (!done && performance.now() < until) {
    starting.push(await timed(c, 'GET', `${AGENTS}/bench-get/agents/one`));
    await sleep(10);
  }
  const tail = performance.now() + 5_000;
  while (performance.now() < tail) {
    starting.push(await timed(c, 'GET', `${AGENTS}/bench-get/agents/one`));
    await sleep(10);
  }
  await creates;

  return {
    rows: [
      ...gets,
      {
        label: `${CREATES} creates in a row`,
        agent: createAgent,
        native: createCm,
        goal: 'p50 <= 3x, p99 <= 200 ms',
        met: (a, n) => p(a, 50) <= 3 * p(n, 50) && p(a, 99) <= 200,
      },
      { label: `agent GET while ${CREATES} agents start (vs quiet)`, agent: starting, native: quiet, goal: 'p99 <= 50 ms', met: (a) => p(a, 99) <= 50 },
    ],
  };
}

export function printNative(f: NativeFigures): void {
  console.log('Agents vs native objects through kube-apiserver (API-only plane; baseline: ConfigMaps, same plane, same run)');
  const rows = f.rows.map((r) => [
    r.label,
    String(r.agent.length),
    fmt(p(r.agent, 50), 2),
    fmt(p(r.agent, 99), 2),
    fmt(p(r.native, 50), 2),
    fmt(p(r.native, 99), 2),
    fmt(p(r.agent, 50) / p(r.native, 50), 2),
    r.goal,
    r.goal.startsWith('(') ? '' : r.met(r.agent, r.native) ? 'met' : 'NOT met',
  ]);
  console.log(table(['ms', 'n', 'agent p50', 'agent p99', 'base p50', 'base p99', 'p50 ratio', 'goal', ''], rows) + '\n');
  printKubeClient(f.client);
}
