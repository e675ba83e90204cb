// Warm-pool slots in the cluster home: each a pod made ahead of any agent, with its Secret,
// ConfigMap and claim (./pod-pool.ts keeps their number). This makes and discards a slot's
// objects, removes an earlier run's, and hands a ready slot to a new solo agent.

import { setHeaderOptions } from '@kubernetes/client-node';
import type { Role } from '../../api/agent.js';
import type { WorkerHub } from '../channel/hub.js';
import type { WorkerSpec } from '../runtime.js';
import { slotSettings } from '../warm-pool.js';
import { ignoreExisting, ignoreMissing } from './api-errors.js';
import type { KubernetesRuntimeOptions } from './kubernetes-options.js';
import { AGENT_LABEL, slotNames, UID_ANNOTATION, UNCLAIMED_POOL_SELECTOR, WARM_POOL_LABEL } from './names.js';
import { slotHolder, slotPodSpec, workerSecret, workspaceClaim } from './objects.js';
import type { PodIndex } from './pod-index.js';
import type { PodPool, PodSlot, PoolWant } from './pod-pool.js';
import type { WorkerObjects } from './worker-objects.js';
import { ATTR_WARM } from '../../observability/trace-attributes.js';
import { annotateSpan } from '../../observability/tracing.js';

export class WarmSlots {
  constructor(
    private readonly o: KubernetesRuntimeOptions,
    private readonly hub: WorkerHub,
    private readonly objects: WorkerObjects,
    private readonly pods: PodIndex,
    private readonly pool: () => PodPool,
  ) {}

  /** What each template's `warmPool` asks for, per namespace. */
  poolWants(): PoolWant[] {
    const t = this.o.templates;
    const wants: PoolWant[] = [];
    for (const templateName of t.names?.() ?? []) {
      const template = t.resolve(templateName);
      const pool = template?.warmPool;
      if (!template || !pool || pool.size === 0) continue;
      for (const namespace of pool.namespaces) wants.push({ namespace, templateName, template, role: pool.role, size: pool.size });
    }
    return wants;
  }

  /** A warm-pool slot's Secret (its slot token and model credential), ConfigMap, claim and pod. */
  async createSlot(slot: PodSlot, want: PoolWant): Promise<string> {
    const h = slotHolder(slot.namespace, slot.id, slot.templateName);
    const creds = this.objects.credentials(slot.ref, this.hub.issueToken(slot.ref, slot.uid, { slot: true }), this.o.model.issue(slot.ref, slot.uid));
    await this.objects.writeSettings(h, workerSecret(h, slot.uid, creds), this.objects.sidecarFor([want.template]));
    await ignoreExisting(this.objects.core.createNamespacedPersistentVolumeClaim({ namespace: slot.namespace, body: workspaceClaim(h, want.template) }));
    if (slot.role === 'manager') await this.objects.ensureManagerAccess(slot.namespace);
    const pod = await this.objects.createPod(slot.namespace, slotPodSpec(h, slot.templateName, want.template, slotSettings(slot.role)));
    this.o.logger.info({ namespace: slot.namespace, slot: slot.id, template: slot.templateName, pod }, 'warm pool: slot pod created');
    return pod;
  }

  /** Revokes a slot's credentials and deletes its objects (by name: they may be an agent's by label already). */
  async discardSlot(slot: PodSlot): Promise<void> {
    this.hub.revoke(slot.ref);
    this.o.model.revoke(slot.ref);
    const names = slotNames(slot.id);
    const namespace = slot.namespace;
    // Taken and then lost, the pod may carry an agent's label: its going is not that agent's crash.
    const uid = slot.pod ? this.pods.get(namespace, slot.pod)?.metadata?.uid : undefined;
    if (uid) this.objects.deleting.add(uid);
    await Promise.all([
      ...(slot.pod
        ? [
            ignoreMissing(this.objects.core.deleteNamespacedPod({ namespace, name: slot.pod, gracePeriodSeconds: 5 })),
            this.objects.deletePolicy(namespace, slot.pod),
          ]
        : []),
      ignoreMissing(this.objects.core.deleteNamespacedSecret({ namespace, name: names.secret })),
      ignoreMissing(this.objects.core.deleteNamespacedConfigMap({ namespace, name: names.config })),
      ignoreMissing(this.objects.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: names.claim })),
    ]);
  }

  /** Deletes every untaken slot's objects (an earlier run's: their credentials died with it). */
  async sweepSlots(): Promise<void> {
    const labelSelector = UNCLAIMED_POOL_SELECTOR;
    const [pods, secrets, configs, claims, policies] = await Promise.all([
      this.objects.core.listPodForAllNamespaces({ labelSelector }),
      this.objects.core.listSecretForAllNamespaces({ labelSelector }),
      this.objects.core.listConfigMapForAllNamespaces({ labelSelector }),
      this.objects.core.listPersistentVolumeClaimForAllNamespaces({ labelSelector }),
      this.o.egress ? this.objects.net.listNetworkPolicyForAllNamespaces({ labelSelector }) : { items: [] },
    ]);
    const at = (o: { metadata?: { namespace?: string; name?: string } }) => ({ namespace: o.metadata!.namespace!, name: o.metadata!.name! });
    await Promise.all([
      ...pods.items.map((o) => ignoreMissing(this.objects.core.deleteNamespacedPod({ ...at(o), gracePeriodSeconds: 5 }))),
      ...secrets.items.map((o) => ignoreMissing(this.objects.core.deleteNamespacedSecret(at(o)))),
      ...configs.items.map((o) => ignoreMissing(this.objects.core.deleteNamespacedConfigMap(at(o)))),
      ...claims.items.map((o) => ignoreMissing(this.objects.core.deleteNamespacedPersistentVolumeClaim(at(o)))),
      ...policies.items.map((o) => ignoreMissing(this.objects.net.deleteNamespacedNetworkPolicy(at(o)))),
    ]);
    const n = pods.items.length + secrets.items.length + configs.items.length + claims.items.length + policies.items.length;
    if (n) this.o.logger.info({ objects: n }, 'warm pool: removed the untaken slots of an earlier run');
  }

  /**
   * Makes a ready warm-pool pod the new agent's: the pod, its Secret, ConfigMap and claim are
   * relabelled as the agent's and owned by it (names kept: a pod's volumes and environment
   * cannot change), the slot's model credential and control connection are re-bound to the
   * agent, and the worker is told. False (the agent starts cold) when the template keeps no pool
   * for it here, none is ready, or the slot was lost while being taken.
   */
  async takeSlot(spec: WorkerSpec, templateName: string): Promise<boolean> {
    const { ref, uid } = spec;
    const role: Role = spec.role ?? 'manager';
    if (!this.pool().serves(ref.namespace, templateName, role)) return false;
    const slot = this.pool().take(ref.namespace, templateName, role);
    this.o.warmPoolMetrics?.claim(slot ? 'hit' : 'miss');
    annotateSpan({ [ATTR_WARM]: slot !== undefined });
    if (!slot) return false;
    const owner = this.o.owner?.(ref, uid);
    const names = slotNames(slot.id);
    const namespace = ref.namespace;
    const body = (extra: Record<string, unknown> = {}) => ({
      metadata: { labels: { [AGENT_LABEL]: ref.name, [WARM_POOL_LABEL]: null }, ...(owner ? { ownerReferences: [owner] } : {}), ...extra },
    });
    const merge = setHeaderOptions('Content-Type', 'application/merge-patch+json');
    try {
      // All at once (one round trip): the agent's runtime calls are serialised, so nothing looks
      // for its objects in between, and a take that fails part-way discards the slot by name.
      // The pod's NetworkPolicy (named after it) goes with the agent's label too.
      await Promise.all([
        ...(this.o.egress ? [this.objects.net.patchNamespacedNetworkPolicy({ namespace, name: slot.pod!, body: body() }, merge)] : []),
        this.objects.core.patchNamespacedPod({ namespace, name: slot.pod!, body: body() }, merge),
        this.objects.core.patchNamespacedSecret({ namespace, name: names.secret, body: body({ annotations: { [UID_ANNOTATION]: uid } }) }, merge),
        this.objects.core.patchNamespacedConfigMap({ namespace, name: names.config, body: body() }, merge),
        this.objects.core.patchNamespacedPersistentVolumeClaim({ namespace, name: names.claim, body: body() }, merge),
      ]);
    } catch (err) {
      this.o.logger.warn({ namespace, name: ref.name, slot: slot.id, err: String(err) }, 'warm pool: could not take the slot; starting cold');
      await this.discardSlot(slot);
      return false;
    }
    // The credential first: once the hub reports the agent connected, a task may reach the model.
    if (this.o.model.rebind?.(slot.ref, ref, uid) && this.hub.assign(slot.ref, ref, uid)) {
      this.o.logger.info({ namespace, name: ref.name, slot: slot.id, pod: slot.pod }, 'worker taken from the warm pool');
      return true;
    }
    this.o.model.revoke(ref);
    this.o.logger.warn({ namespace, name: ref.name, slot: slot.id }, 'warm pool: the slot was lost while taken; starting cold');
    await this.discardSlot(slot);
    return false;
  }
}
