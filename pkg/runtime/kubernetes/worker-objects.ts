// The Kubernetes objects of agents' workers: the Secret of credentials, the ConfigMap of
// settings, the workspace claim, the manager's access, and the pod with its NetworkPolicy. The
// Kubernetes runtime (kubernetes-runtime.ts) decides when; this makes, replaces and deletes them.

import {
  CoreV1Api,
  NetworkingV1Api,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1OwnerReference,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node';
import type { ObjectRef } from '../../api/meta.js';
import type { WorkerHub } from '../channel/hub.js';
import type { WorkerSpec } from '../runtime.js';
import { ignoreExisting, ignoreMissing, httpStatus, upsert } from './api-errors.js';
import type { KubernetesRuntimeOptions } from './kubernetes-options.js';
import { AGENT_LABEL, agentSelector, componentSelector, newPodId, objectNames, WORKER_STATE_ANNOTATION } from './names.js';
import {
  agentHolder,
  type Credentials,
  type Holder,
  managerAccess,
  MODEL_CREDENTIAL_KEY,
  MODEL_PROXY_PORT,
  REPORT_CREDENTIAL_KEY,
  TOKEN_KEY,
  workerConfigMap,
  workerPod,
  workerSecret,
  workspaceClaim,
} from './objects.js';
import { podEgress, podNetworkPolicy } from './network-policy.js';
import type { WorkerTemplate } from './template.js';

export class WorkerObjects {
  readonly core: CoreV1Api;
  readonly net: NetworkingV1Api;
  private readonly rbac: RbacAuthorizationV1Api;
  /** Pods this runtime deleted (uid): their disappearance is not a crash. */
  readonly deleting = new Set<string>();

  constructor(
    private readonly o: KubernetesRuntimeOptions,
    private readonly hub: WorkerHub,
  ) {
    this.core = o.kubeConfig.makeApiClient(CoreV1Api);
    this.rbac = o.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.net = o.kubeConfig.makeApiClient(NetworkingV1Api);
  }

  /**
   * Fresh credentials in the agent's Secret, its ConfigMap, and its workspace claim (`claim`, the
   * one it has; made when it has none). Resolves with the claim's name.
   */
  async prepare(spec: WorkerSpec, template: WorkerTemplate, claim: string | undefined, sidecar: boolean): Promise<string> {
    const { ref, uid } = spec;
    const owner = this.o.owner?.(ref, uid);
    const h = agentHolder(ref);
    // A new worker gets new credentials; an earlier worker's stop working now.
    const creds = this.credentials(ref, this.hub.issueToken(ref, uid), this.o.model.issue(ref, uid));
    await this.writeSettings(h, workerSecret(h, uid, creds, owner), sidecar, owner);
    // The claim outlives workers (sleep keeps it); only remove deletes it.
    if (!claim) await ignoreExisting(this.core.createNamespacedPersistentVolumeClaim({ namespace: ref.namespace, body: workspaceClaim(h, template, owner) }));
    if (spec.role === 'manager') await this.ensureManagerAccess(ref.namespace);
    return claim ?? h.names.claim;
  }

  /** Creates or replaces the holder's Secret (`secret`) and its ConfigMap of settings (`sidecar`: its pod has the model-proxy sidecar). */
  async writeSettings(h: Holder, secret: V1Secret, sidecar: boolean, owner?: V1OwnerReference): Promise<void> {
    const namespace = h.namespace;
    await upsert(
      () => this.core.createNamespacedSecret({ namespace, body: secret }),
      () => this.core.replaceNamespacedSecret({ namespace, name: h.names.secret, body: secret }),
    );
    const modelBaseUrl = sidecar ? `http://127.0.0.1:${MODEL_PROXY_PORT}` : this.o.model.baseUrl();
    const config = workerConfigMap(h, { serverUrl: this.o.channelUrl(), modelBaseUrl }, owner);
    await upsert(
      () => this.core.createNamespacedConfigMap({ namespace, body: config }),
      () => this.core.replaceNamespacedConfigMap({ namespace, name: h.names.config, body: config }),
    );
  }

  /** A worker's Secret values; with a model-proxy sidecar, also the report credential only the sidecar mounts. */
  credentials(ref: ObjectRef, token: string, modelCredential: string): Credentials {
    const reportCredential = this.o.modelSidecar ? this.o.model.issueReport?.(ref) : undefined;
    return { token, modelCredential, ...(reportCredential ? { reportCredential } : {}) };
  }

  /** The namespace's manager service account and its Role (shared by its managers; kept). */
  async ensureManagerAccess(namespace: string): Promise<void> {
    const [account, role, binding] = managerAccess(namespace);
    await ignoreExisting(this.core.createNamespacedServiceAccount({ namespace, body: account }));
    await upsert(
      () => this.rbac.createNamespacedRole({ namespace, body: role }),
      () => this.rbac.replaceNamespacedRole({ namespace, name: role.metadata!.name!, body: role }),
    );
    await ignoreExisting(this.rbac.createNamespacedRoleBinding({ namespace, body: binding }));
  }

  async markStopped(ref: ObjectRef): Promise<void> {
    // The model and report credentials go from the Secret too: a squad pod's sidecar, which reads
    // them from its mount, stops accepting and sending them once the kubelet updates the volume.
    const patch = {
      metadata: { annotations: { [WORKER_STATE_ANNOTATION]: 'stopped' } },
      data: { [MODEL_CREDENTIAL_KEY]: null, [REPORT_CREDENTIAL_KEY]: null },
    };
    const namespace = ref.namespace;
    const own = objectNames(ref.name);
    const agent = agentSelector(ref.name);
    await Promise.all([
      // A merge patch keeps the other annotations.
      ignoreMissing(
        this.core.patchNamespacedSecret({ namespace, name: own.secret, body: patch }, setHeaderOptions('Content-Type', 'application/merge-patch+json')),
      ),
      // A Secret and ConfigMap taken over from a warm-pool slot go with the slot's pod: the next
      // worker gets the agent's own.
      this.core.deleteCollectionNamespacedSecret({ namespace, labelSelector: agent, fieldSelector: `metadata.name!=${own.secret}` }),
      this.core.deleteCollectionNamespacedConfigMap({ namespace, labelSelector: agent, fieldSelector: `metadata.name!=${own.config}` }),
    ]);
  }

  /**
   * Whether a pod of these members' templates gets the model-proxy sidecar: only when its egress
   * is `Open`. A NetworkPolicy cannot allow the model API by name, so a closed pod's engines use
   * the server's proxy over the worker listener, which every pod may reach.
   */
  sidecarFor(templates: WorkerTemplate[]): boolean {
    return this.o.modelSidecar !== undefined && podEgress(templates) === 'Open';
  }

  /**
   * Makes the pod's NetworkPolicy, then the pod (so the pod never runs without it); the two are
   * named `<prefix><id>`. Resolves with the pod's name.
   */
  async createPod(namespace: string, spec: Parameters<typeof workerPod>[0]): Promise<string> {
    const templates = spec.members.map((m) => m.template);
    const modelProxy = this.sidecarFor(templates) && this.o.modelSidecar ? { ...this.o.modelSidecar, serverUrl: this.o.channelUrl() } : undefined;
    for (let attempt = 1; ; attempt++) {
      const body = workerPod({ ...spec, podId: newPodId(), ...(modelProxy ? { modelProxy } : {}) });
      const name = body.metadata!.name!;
      try {
        if (this.o.egress) {
          const policy = podNetworkPolicy(body, podEgress(templates), modelProxy ? this.o.egress : { ...this.o.egress, model: undefined });
          await this.net.createNamespacedNetworkPolicy({ namespace, body: policy });
        }
        try {
          await this.core.createNamespacedPod({ namespace, body });
        } catch (err) {
          await this.deletePolicy(namespace, name).catch(() => undefined);
          throw err;
        }
        return name;
      } catch (err) {
        // The name is taken (a random id met an existing pod or policy): another id.
        if (httpStatus(err) !== 409 || attempt >= 3) throw err;
      }
    }
  }

  async deletePod(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid;
    if (uid) this.deleting.add(uid);
    const namespace = pod.metadata!.namespace!;
    const name = pod.metadata!.name!;
    await Promise.all([ignoreMissing(this.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 5 })), this.deletePolicy(namespace, name)]);
  }

  /** The NetworkPolicy of the pod `name` (it shares the pod's name). */
  async deletePolicy(namespace: string, name: string): Promise<void> {
    if (this.o.egress) await ignoreMissing(this.net.deleteNamespacedNetworkPolicy({ namespace, name }));
  }

  /** The workspace claims the agents have: agent -> claim name (one taken from a warm-pool slot keeps its name). */
  async claims(namespace: string, agents: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (!agents.length) return found;
    const labelSelector = `${componentSelector('workspace')},${AGENT_LABEL} in (${agents.join(',')})`;
    const { items } = await this.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector });
    for (const c of items) {
      const agent = c.metadata?.labels?.[AGENT_LABEL];
      if (agent && !c.metadata?.deletionTimestamp) found.set(agent, c.metadata!.name!);
    }
    return found;
  }

  owners(specs: WorkerSpec[]): V1OwnerReference[] {
    const refs = specs.map((s) => this.o.owner?.(s.ref, s.uid)).filter((o): o is V1OwnerReference => o !== undefined);
    // A squad's pod has several owners; it goes when the last is gone. Only a solo pod has a controller.
    return refs.length === 1 ? refs : refs.map((r) => ({ ...r, controller: false }));
  }

  /** Deletes the agent's Secrets, ConfigMaps, claims and NetworkPolicies (by label: ones taken from a warm-pool slot keep the slot's name). */
  async removeAll(ref: ObjectRef): Promise<void> {
    const ns = ref.namespace;
    const labelSelector = agentSelector(ref.name);
    await Promise.all([
      this.core.deleteCollectionNamespacedSecret({ namespace: ns, labelSelector }),
      this.core.deleteCollectionNamespacedConfigMap({ namespace: ns, labelSelector }),
      this.core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector }),
      ...(this.o.egress ? [this.net.deleteCollectionNamespacedNetworkPolicy({ namespace: ns, labelSelector })] : []),
    ]);
  }
}

/** The credentials stored in a worker's Secret, or undefined when it holds none. */
export function readCredentials(s: V1Secret): Credentials | undefined {
  const token = s.data?.[TOKEN_KEY];
  const modelCredential = s.data?.[MODEL_CREDENTIAL_KEY];
  if (!token || !modelCredential) return undefined;
  const report = s.data?.[REPORT_CREDENTIAL_KEY];
  return {
    token: Buffer.from(token, 'base64').toString(),
    modelCredential: Buffer.from(modelCredential, 'base64').toString(),
    ...(report ? { reportCredential: Buffer.from(report, 'base64').toString() } : {}),
  };
}
