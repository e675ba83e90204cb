// agentplane's own client to kube-apiserver (`make bench`, in the "native" section): the same
// requests through the client library's KubeConfig (a new connection and TLS handshake per
// request) and through cmd/agentplane/kube-config.ts's KeepAliveKubeConfig (what the cluster
// home uses), against the same kube-apiserver in the same run. Prints figures; asserts nothing.

import { performance } from 'node:perf_hooks';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

import { KeepAliveKubeConfig } from '../cmd/agentplane/kube-config.js';
import { fmt, percentile, table } from './stats.js';

const ONE_BY_ONE = 300;
const PARALLEL = 16;
const EACH = 40;

export interface KubeClientRow {
  label: string;
  /** Latency of each request made one after another, ms. */
  sequential: number[];
  /** Wall time per request with PARALLEL loops at once, ms. */
  parallelMsPerRequest: number;
  /** This process's CPU (user + system) per request over both, ms. */
  cpuMsPerRequest: number;
}

async function measure(label: string, kc: KubeConfig): Promise<KubeClientRow> {
  const api = kc.makeApiClient(CoreV1Api);
  await api.readNamespace({ name: 'default' });
  const cpu0 = process.cpuUsage();
  const sequential: number[] = [];
  for (let i = 0; i < ONE_BY_ONE; i++) {
    const t = performance.now();
    await api.readNamespace({ name: 'default' });
    sequential.push(performance.now() - t);
  }
  const t = performance.now();
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let i = 0; i < EACH; i++) await api.readNamespace({ name: 'default' });
    }),
  );
  const parallelMsPerRequest = (performance.now() - t) / (PARALLEL * EACH);
  const cpu = process.cpuUsage(cpu0);
  return { label, sequential, parallelMsPerRequest, cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / (ONE_BY_ONE + PARALLEL * EACH) };
}

/** Both clients against the plane `kubeconfig` names, the library's first (the baseline). */
export async function kubeClientFigures(kubeconfig: string): Promise<KubeClientRow[]> {
  const plain = new KubeConfig();
  plain.loadFromFile(kubeconfig);
  const kept = new KeepAliveKubeConfig();
  kept.loadFromFile(kubeconfig);
  try {
    return [await measure("client library's KubeConfig (baseline)", plain), await measure('KeepAliveKubeConfig (agentplane)', kept)];
  } finally {
    kept.close();
  }
}

export function printKubeClient(rows: KubeClientRow[]): void {
  console.log(
    `agentplane's client to kube-apiserver: GET /api/v1/namespaces/default, ${ONE_BY_ONE} one after another, then ${PARALLEL} loops of ${EACH} at once (same plane, same run)`,
  );
  const sorted = (ms: number[]): number[] => [...ms].sort((a, b) => a - b);
  console.log(
    table(
      ['client', 'one by one p50 ms', 'one by one p99 ms', `${PARALLEL} at once, ms per request`, 'client CPU ms per request'],
      rows.map((r) => [
        r.label,
        fmt(percentile(sorted(r.sequential), 50), 2),
        fmt(percentile(sorted(r.sequential), 99), 2),
        fmt(r.parallelMsPerRequest, 2),
        fmt(r.cpuMsPerRequest, 2),
      ]),
    ) + '\n',
  );
}
