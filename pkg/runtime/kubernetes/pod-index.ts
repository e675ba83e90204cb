// The runtime's view of its pods: one watch of every managed pod in every namespace, and the
// answer to "where does this agent's worker run": a solo pod (labelled with the agent), a pod of
// its own beside a running squad pod (labelled with both), or a container named after it in a
// squad's pod.

import { CoreV1Api, type KubeConfig, makeInformer, type V1ContainerStatus, type V1Pod } from '@kubernetes/client-node';
import type { ObjectRef } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import { AGENT_LABEL, componentSelector, GROUP_ANNOTATION, WARM_POOL_LABEL } from './names.js';
import { restartOnError } from './watch.js';

export interface Placement {
  pod: V1Pod;
  container: string;
  /** The group the pod belongs to (a squad's pod or a member's own pod beside it); null when solo. */
  group: string | null;
  /** True when the pod holds only this agent (solo, or beside its squad's pod). */
  own: boolean;
}

export type PodChange = { type: 'add' | 'update' | 'delete'; pod: V1Pod };

const WORKER_SELECTOR = componentSelector('worker');

export class PodIndex {
  private readonly informer;
  private stopWatch?: () => void;

  constructor(
    kubeConfig: KubeConfig,
    private readonly logger: Logger,
    onChange: (c: PodChange) => void,
  ) {
    const core = kubeConfig.makeApiClient(CoreV1Api);
    this.informer = makeInformer<V1Pod>(kubeConfig, '/api/v1/pods', () => core.listPodForAllNamespaces({ labelSelector: WORKER_SELECTOR }), WORKER_SELECTOR);
    this.informer.on('add', (pod) => onChange({ type: 'add', pod }));
    this.informer.on('update', (pod) => onChange({ type: 'update', pod }));
    this.informer.on('delete', (pod) => onChange({ type: 'delete', pod }));
  }

  async start(): Promise<void> {
    this.stopWatch = await restartOnError(this.informer, this.logger, 'worker pods');
  }

  stop(): void {
    this.stopWatch?.();
  }

  /** Every placement of the agent, the live one (not terminating, not ended) first. */
  placements(ref: ObjectRef): Placement[] {
    const found: Placement[] = [];
    for (const pod of this.informer.list(ref.namespace)) {
      const p = placementIn(pod, ref.name);
      if (p) found.push(p);
    }
    const rank = (p: Placement): number => (isLive(p) ? 0 : 1);
    return found.sort((a, b) => rank(a) - rank(b) || created(b.pod) - created(a.pod));
  }

  /** The agent's live placement, if any. */
  live(ref: ObjectRef): Placement | undefined {
    const [p] = this.placements(ref);
    return p && isLive(p) ? p : undefined;
  }

  /** The pod, as the watch last saw it. */
  get(namespace: string, name: string): V1Pod | undefined {
    return this.informer.get(name, namespace);
  }

  /** Warm-pool slots' pods no agent has taken yet, in every namespace. */
  slotPods(): V1Pod[] {
    return this.informer.list().filter(isSlotPod);
  }

  /** The group's live shared pod (the squad's, not a member's own), if any. */
  groupPod(namespace: string, group: string): V1Pod | undefined {
    return this.informer
      .list(namespace)
      .find((pod) => pod.metadata?.annotations?.[GROUP_ANNOTATION] === group && !pod.metadata?.labels?.[AGENT_LABEL] && podIsLive(pod));
  }
}

/** A warm-pool slot's pod that no agent has taken (./pod-pool.ts). */
export function isSlotPod(pod: V1Pod): boolean {
  const labels = pod.metadata?.labels ?? {};
  return labels[WARM_POOL_LABEL] !== undefined && labels[AGENT_LABEL] === undefined;
}

export function placementIn(pod: V1Pod, agent: string): Placement | undefined {
  if (isSlotPod(pod)) return undefined;
  const group = pod.metadata?.annotations?.[GROUP_ANNOTATION] ?? null;
  const owner = pod.metadata?.labels?.[AGENT_LABEL];
  if (owner !== undefined) return owner === agent ? { pod, container: pod.spec?.containers[0]?.name ?? agent, group, own: true } : undefined;
  if (!pod.spec?.containers.some((c) => c.name === agent)) return undefined;
  return { pod, container: agent, group, own: false };
}

/**
 * Whether `pod` still runs the agent's worker: the runtime did not delete it (`deleted`: pod
 * uids), and the agent's live placement, if any, is in it. A pod the agent left for a newer one
 * (woken right after it slept) may end after the new worker took a task; that is not the
 * agent's worker exiting.
 */
export function isCurrent(pod: V1Pod, live: Placement | undefined, deleted: ReadonlySet<string>): boolean {
  const uid = pod.metadata?.uid ?? '';
  return !deleted.has(uid) && (!live || live.pod.metadata?.uid === uid);
}

export function containerStatus(pod: V1Pod, container: string): V1ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find((s) => s.name === container);
}

/** Waiting reasons that do not clear by themselves: the pod is replaced, counting a start failure. */
export const PERMANENT_WAITING = new Set(['ErrImageNeverPull', 'InvalidImageName', 'CreateContainerConfigError', 'ErrImagePull', 'ImagePullBackOff']);

/** A pod that will not run a worker (again): deleted, ended, a container ended, or stuck for good. */
export function podEnded(pod: V1Pod): boolean {
  if (!podIsLive(pod)) return true;
  return (pod.status?.containerStatuses ?? []).some((s) => s.state?.terminated !== undefined || PERMANENT_WAITING.has(s.state?.waiting?.reason ?? ''));
}

/** A pod that is neither being deleted nor ended. */
export function podIsLive(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

/**
 * A placement whose container may still run: a live pod, and not a container that ended cleanly
 * (a revoked worker exits 0, and OnFailure leaves it ended).
 */
export function isLive(p: Placement): boolean {
  if (!podIsLive(p.pod)) return false;
  const t = containerStatus(p.pod, p.container)?.state?.terminated;
  return !(t && t.exitCode === 0);
}

const created = (pod: V1Pod): number => new Date(pod.metadata?.creationTimestamp ?? 0).getTime();
