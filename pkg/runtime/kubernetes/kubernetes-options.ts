// What the Kubernetes runtime (kubernetes-runtime.ts) is built with.

import type { KubeConfig, V1OwnerReference } from '@kubernetes/client-node';
import type { ObjectRef } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import type { ModelCredentialIssuer } from '../runtime.js';
import type { EgressTargets } from './network-policy.js';
import type { ModelSidecar } from './objects.js';
import type { WorkerTemplate } from './template.js';

export interface KubernetesRuntimeOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Per-agent model credentials; `restore` must be implemented (workers outlive the server). */
  model: ModelCredentialIssuer & Required<Pick<ModelCredentialIssuer, 'restore'>>;
  /** Where pods dial the control channel (the worker listener as pods reach it). */
  channelUrl: () => string;
  /** The pod templates agents name (`spec.templateRef`); with `names`, their warm pools are kept. */
  templates: { resolve(name: string): WorkerTemplate | undefined; names?(): string[] };
  /** The owner of an agent's objects (its storage record), for the garbage collector. */
  owner?: (ref: ObjectRef, uid: string) => V1OwnerReference | undefined;
  /** How long a squad's first member waits for the others before the squad's pod is made; default 300 ms. */
  groupGatherMs?: number;
  /**
   * Each pod gets its own model proxy, a native sidecar that holds the mirrored key; engines use
   * it on loopback. Absent: engines use the server's proxy (`model.baseUrl()`).
   */
  modelSidecar?: Omit<ModelSidecar, 'serverUrl'>;
  /** The warm pool's ready slots and takes (Prometheus). */
  warmPoolMetrics?: { ready(n: number): void; claim(result: 'hit' | 'miss'): void };
  /**
   * Where pods may connect: each pod gets a NetworkPolicy made from these and its templates'
   * `egress` (./network-policy.ts). Absent: pods get none (a runtime built alone, in tests).
   */
  egress?: EgressTargets;
  /** How long a checkpoint's (or a fork's) copy pod may take; default 10 minutes. */
  checkpointCopyTimeoutMs?: number;
}
