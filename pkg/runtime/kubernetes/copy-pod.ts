// The short-lived pod that copies one workspace claim into another: a checkpoint's own claim
// filled from an agent's workspace (read-only), or a fork's workspace filled from a checkpoint's
// claim. Confined as agent pods are (no service-account token, non-root, no capabilities, a
// read-only root filesystem) and with no network at all: its NetworkPolicy admits nothing in
// and lets nothing out. The runner makes the policy and the pod, waits for the pod with a
// deadline, reads what it reports (its termination message: the bytes copied, or the end of its
// log when it failed) and deletes both, whatever happened.

import type { CoreV1Api, NetworkingV1Api, V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import { ignoreMissing } from './api-errors.js';
import { labelsFor, newPodId, POD_ID_LABEL } from './names.js';
import { WORKSPACE_PATH } from './objects.js';
import { PERMANENT_WAITING } from './pod-index.js';

/** Who the copy runs as and with which image: the agent's own (its files are its user's). */
export interface CopyIdentity {
  image: string;
  imagePullPolicy?: string;
  runAsUser: number;
  runAsGroup: number;
  nodeSelector?: Record<string, string>;
}

export interface CopySpec {
  namespace: string;
  /** The claim copied from, mounted read-only; absent: an empty workspace (an agent that never ran). */
  from?: string;
  /** The claim copied into: emptied first, so a copy interrupted half-way is simply done again. */
  to: string;
  who: CopyIdentity;
  /** What the pod copies for (a checkpoint or a fork), in its labels' stead: its annotation. */
  purpose: string;
}

const FROM = '/from';
const TO = '/to';
/** Where the engine keeps its sessions in a workspace mounted at /workspace (as in every agent pod). */
const SESSIONS = `.claude/projects/${WORKSPACE_PATH.replace(/[^a-zA-Z0-9]/g, '-')}`;

/**
 * Empties the target, copies the source's entries (not the mount point itself, which belongs to
 * the volume's provisioner), and reports the bytes of the regular files copied and the engine
 * session written last ("<bytes> <session id>").
 */
const SCRIPT = [
  'set -eu',
  `find ${TO} -mindepth 1 -delete`,
  `if [ -d ${FROM} ]; then cd ${FROM} && find . -mindepth 1 -maxdepth 1 -exec cp -a -t ${TO}/ {} +; fi`,
  `session=$(ls -t ${TO}/${SESSIONS}/*.jsonl 2>/dev/null | head -n 1)`,
  `echo "$(( $(find ${TO} -type f -printf '%s+')0 )) $(basename "\${session:-none}" .jsonl)" > /dev/termination-log`,
].join('\n');

export interface CopyResult {
  bytes: number;
  /** The engine session written last in the copy, if it holds any. */
  sessionId?: string;
}

/** What the copy pod's termination message says. */
export function parseCopyReport(message: string | undefined): CopyResult {
  const [bytes, session] = (message ?? '').trim().split(/\s+/);
  return { bytes: Number(bytes) || 0, ...(session && session !== 'none' ? { sessionId: session } : {}) };
}

export function copyPod(s: CopySpec, podId: string): V1Pod {
  const name = `checkpoint-copy-${podId}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: s.namespace,
      labels: { ...labelsFor('checkpoint-copy'), [POD_ID_LABEL]: podId },
      annotations: { 'agentplane.io/copy-for': s.purpose },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 5,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: s.who.runAsUser,
        runAsGroup: s.who.runAsGroup,
        fsGroup: s.who.runAsGroup,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      ...(s.who.nodeSelector ? { nodeSelector: s.who.nodeSelector } : {}),
      containers: [
        {
          name: 'copy',
          image: s.who.image,
          ...(s.who.imagePullPolicy ? { imagePullPolicy: s.who.imagePullPolicy } : {}),
          command: ['/bin/bash', '-c', SCRIPT],
          terminationMessagePolicy: 'FallbackToLogsOnError',
          resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { memory: '256Mi' } },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            runAsUser: s.who.runAsUser,
            runAsGroup: s.who.runAsGroup,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [...(s.from ? [{ name: 'from', mountPath: FROM, readOnly: true }] : []), { name: 'to', mountPath: TO }],
        },
      ],
      volumes: [
        ...(s.from ? [{ name: 'from', persistentVolumeClaim: { claimName: s.from, readOnly: true } }] : []),
        { name: 'to', persistentVolumeClaim: { claimName: s.to } },
      ],
    },
  };
}

/** The copy pod's NetworkPolicy: it selects only that pod and allows no traffic either way. */
export function copyPodPolicy(pod: V1Pod): V1NetworkPolicy {
  const meta = pod.metadata!;
  const id = meta.labels?.[POD_ID_LABEL];
  if (!meta.name || !id) throw new Error('a copy pod needs its name and pod-id label before its NetworkPolicy is made');
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: meta.name, namespace: meta.namespace!, labels: { ...labelsFor('network-policy'), [POD_ID_LABEL]: id } },
    spec: { podSelector: { matchLabels: { [POD_ID_LABEL]: id } }, policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [] },
  };
}

export interface CopyRunnerOptions {
  core: CoreV1Api;
  net: NetworkingV1Api;
  /** Make the pod's NetworkPolicy (as for agent pods: when the runtime makes policies at all). */
  policies: boolean;
  /** How long a copy may take, from the pod's creation to its end. */
  timeoutMs: number;
  /** How often the pod's status is read. */
  pollMs?: number;
}

/** Runs one copy to its end: resolves with what it copied, rejects with why it failed. */
export async function runCopy(o: CopyRunnerOptions, s: CopySpec): Promise<CopyResult> {
  const pod = copyPod(s, newPodId());
  const { namespace } = s;
  const name = pod.metadata!.name!;
  try {
    if (o.policies) await o.net.createNamespacedNetworkPolicy({ namespace, body: copyPodPolicy(pod) });
    // The deadline also bounds the pod itself, should this server go away while it runs.
    pod.spec!.activeDeadlineSeconds = Math.ceil(o.timeoutMs / 1000);
    await o.core.createNamespacedPod({ namespace, body: pod });
    return await waitForCopy(o, namespace, name);
  } finally {
    await Promise.all([
      ignoreMissing(o.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 })).catch(() => undefined),
      o.policies ? ignoreMissing(o.net.deleteNamespacedNetworkPolicy({ namespace, name })).catch(() => undefined) : undefined,
    ]);
  }
}

async function waitForCopy(o: CopyRunnerOptions, namespace: string, name: string): Promise<CopyResult> {
  const deadline = Date.now() + o.timeoutMs;
  let last = 'not scheduled yet';
  while (Date.now() < deadline) {
    const pod = await o.core.readNamespacedPod({ namespace, name });
    const cs = pod.status?.containerStatuses?.[0];
    const ended = cs?.state?.terminated;
    if (pod.status?.phase === 'Succeeded' && ended) return parseCopyReport(ended.message);
    if (pod.status?.phase === 'Failed' || (ended && ended.exitCode !== 0)) {
      const why = ended
        ? `exit code ${ended.exitCode}${ended.message ? `: ${ended.message.trim().split('\n').slice(-3).join('; ')}` : ''}`
        : pod.status?.reason;
      throw new Error(`the copy pod ${name} failed (${why ?? pod.status?.message ?? 'no reason given'})`);
    }
    const waiting = cs?.state?.waiting;
    if (waiting?.reason && PERMANENT_WAITING.has(waiting.reason))
      throw new Error(`the copy pod ${name} cannot start: ${waiting.reason}: ${waiting.message ?? ''}`);
    const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    last = waiting?.reason ?? (unscheduled ? `unschedulable: ${unscheduled.message ?? unscheduled.reason}` : (pod.status?.phase ?? last));
    await new Promise((r) => setTimeout(r, o.pollMs ?? 500));
  }
  throw new Error(`the copy pod ${name} did not finish within ${Math.round(o.timeoutMs / 1000)} s (last seen: ${last})`);
}
