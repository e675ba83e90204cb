// The Kubernetes runtime (cluster home): an agent's worker is a container in a pod, its
// workspace a PersistentVolumeClaim, its credentials a Secret and its settings a ConfigMap, all
// labelled `agentplane.io/agent=<name>` and owned by the agent's storage record, so that removing
// the agent (or the garbage collector, if the server dies mid-way) leaves nothing behind.
//
// Solo agents run in a pod of their own. A squad runs in one pod with a container per member:
// the members ensured together (within `groupGatherMs`) form the pod; a member that joins while
// the squad's pod runs gets a pod of its own beside it, labelled with the squad (pods cannot
// gain containers with volumes; docs/kubernetes-runtime.md "Joining a running squad"). A
// member's container stays in the pod while it sleeps; when every member is stopped the pod goes
// and the claims stay.
//
// Workers dial the server (the control channel, ../channel/hub.ts). Their credentials live in
// the Secret, so workers outlive a server restart: on start the runtime adopts the stored
// credentials of every worker it still wants, and those workers reconnect.
//
// A template may keep a warm pool of pods made ahead (./pod-pool.ts): a new solo agent takes one,
// and the slot's objects become the agent's (relabelled, names kept), so an agent's claim,
// Secret and ConfigMap are found by label, not only by name.

import { CoreV1Api, type KubeConfig, NetworkingV1Api, RbacAuthorizationV1Api, setHeaderOptions, type V1OwnerReference, type V1Pod, type V1Secret } from '@kubernetes/client-node';
import type { Role } from '../../api/agent.js';
import { type ObjectRef, refKey } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import { KeyedSerializer } from '../../registry/serializer.js';
import { ChannelRuntime } from '../channel/channel-runtime.js';
import type { AgentRuntime, ModelCredentialIssuer, WorkerSpec, WorkerStatus } from '../runtime.js';
import { slotSettings } from '../warm-pool.js';
import { AGENT_LABEL, agentSelector, componentSelector, groupPodPrefix, newPodId, objectNames, POD_ID_LABEL, slotNames, UID_ANNOTATION, UNCLAIMED_POOL_SELECTOR, WARM_POOL_LABEL, WORKER_STATE_ANNOTATION } from './names.js';
import {
  agentHolder,
  type Credentials,
  type Holder,
  managerAccess,
  type ModelSidecar,
  type PodMember,
  MODEL_CREDENTIAL_KEY,
  REPORT_CREDENTIAL_KEY,
  MODEL_PROXY_PORT,
  slotHolder,
  slotPodSpec,
  TOKEN_KEY,
  workerConfigMap,
  workerPod,
  workerSecret,
  workspaceClaim,
} from './objects.js';
import { containerStatus, isCurrent, isSlotPod, PERMANENT_WAITING, PodIndex, type PodChange, placementIn } from './pod-index.js';
import { type EgressTargets, podEgress, podNetworkPolicy } from './network-policy.js';
import { PodPool, type PodSlot, type PoolWant } from './pod-pool.js';
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
}

/** Members ensured together, made into one pod when the gathering window closes. */
interface Gathering {
  namespace: string;
  members: Map<string, { spec: WorkerSpec; template: WorkerTemplate }>;
  done: Promise<void>;
}

export class KubernetesRuntime extends ChannelRuntime implements AgentRuntime {
  readonly name = 'kubernetes';
  private readonly core: CoreV1Api;
  private readonly rbac: RbacAuthorizationV1Api;
  private readonly net: NetworkingV1Api;
  private readonly pods: PodIndex;
  private readonly serial = new KeyedSerializer();
  private readonly gathering = new Map<string, Gathering>();
  /** Pods created and not yet seen by the watch: agent key -> group (null when solo). */
  private readonly pending = new Map<string, string | null>();
  /** Pods this runtime deleted (uid): their disappearance is not a crash. */
  private readonly deleting = new Set<string>();
  /** Failures already reported, so an unchanged pod status is not reported twice. */
  private readonly reported = new Set<string>();
  private ready?: Promise<void>;
  private readonly pool: PodPool;

  constructor(private readonly o: KubernetesRuntimeOptions) {
    super(o.logger);
    this.core = o.kubeConfig.makeApiClient(CoreV1Api);
    this.rbac = o.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.net = o.kubeConfig.makeApiClient(NetworkingV1Api);
    this.pods = new PodIndex(o.kubeConfig, o.logger, (c) => this.onPodChange(c));
    this.pool = new PodPool({
      logger: o.logger,
      wanted: () => this.poolWants(),
      create: (slot, want) => this.createSlot(slot, want),
      discard: (slot) => this.discardSlot(slot),
      pods: () => this.pods.slotPods(),
      sweep: () => this.sweepSlots(),
      ...(o.warmPoolMetrics ? { onReady: (n: number) => o.warmPoolMetrics!.ready(n) } : {}),
    });
    this.hub.on('slotReady', (ref) => this.pool.ready(ref));
  }

  /**
   * Starts the pod watch and adopts the stored credentials, once; resolves when done, rejects
   * when it cannot. The first verb starts it too. With several replicas only the leader calls
   * it (docs/high-availability.md), so it adopts the credentials of every worker its
   * predecessor started.
   */
  started(): Promise<void> {
    if (!this.ready) {
      this.ready = this.start();
      this.ready.catch(() => undefined);
    }
    return this.ready;
  }

  private async start(): Promise<void> {
    await this.pods.start();
    // Workers that were wanted when the server stopped still run: accept their credentials again.
    const { items } = await this.core.listSecretForAllNamespaces({ labelSelector: componentSelector('credentials') });
    for (const s of items) {
      const ann = s.metadata?.annotations ?? {};
      const agent = s.metadata?.labels?.[AGENT_LABEL];
      const uid = ann[UID_ANNOTATION];
      if (!agent || !uid || ann[WORKER_STATE_ANNOTATION] !== 'running') continue;
      const creds = readCredentials(s);
      if (!creds) continue;
      const ref = { namespace: s.metadata!.namespace!, name: agent };
      this.hub.adopt(ref, uid, creds.token);
      this.o.model.restore(ref, uid, creds.modelCredential, creds.reportCredential);
    }
    await this.pool.start();
  }

  async status(ref: ObjectRef): Promise<WorkerStatus> {
    const absent: WorkerStatus = { phase: 'Absent', group: null };
    // Not started: a follower replica, which runs no workers (steering through it asks).
    if (!this.ready) return absent;
    await this.ready;
    if (!this.hub.hasGrant(ref)) return absent;
    const live = this.pods.live(ref);
    if (!live) {
      const group = this.pending.get(refKey(ref));
      return group === undefined ? absent : { phase: 'Starting', group };
    }
    const runningTask = this.hub.runningTask(ref);
    const restarts = containerStatus(live.pod, live.container)?.restartCount ?? 0;
    return {
      phase: this.hub.isConnected(ref) ? 'Ready' : 'Starting',
      group: live.group,
      ...(runningTask !== undefined ? { runningTask } : {}),
      // The pod and the container's restarts: a member whose pod and count are unchanged ran on.
      incarnation: `${live.pod.metadata?.uid}/${live.container}/${restarts}`,
    };
  }

  async ensure(spec: WorkerSpec): Promise<void> {
    await this.started();
    const key = refKey(spec.ref);
    await this.serial.run(key, async () => {
      if (this.hub.hasGrant(spec.ref) && (this.pods.live(spec.ref) || this.pending.has(key))) return;
      const templateName = spec.template ?? 'default';
      const template = this.o.templates.resolve(templateName);
      if (!template) throw new Error(`agent ${key}: pod template "${templateName}" not found`);
      if (!spec.group) {
        const claim = (await this.claims(spec.ref.namespace, [spec.ref.name])).get(spec.ref.name);
        // A new agent (no workspace yet) may take a warm-pool pod; a waking one keeps its claim.
        if (!claim && !spec.wakeIdle && (await this.takeSlot(spec, templateName))) return;
        await this.createPod(spec.ref.namespace, {
          namespace: spec.ref.namespace,
          agent: spec.ref.name,
          generateName: objectNames(spec.ref.name).podPrefix,
          members: [member(spec, template, await this.prepare(spec, template, claim, this.sidecarFor([template])))],
          owners: this.owners([spec]),
        });
        this.pending.set(key, null);
        return;
      }
      if (this.pods.groupPod(spec.ref.namespace, spec.group)) return this.joinBeside(spec, template);
      await this.gather(spec, template);
    });
  }

  async stop(ref: ObjectRef): Promise<void> {
    await this.started();
    await this.serial.run(refKey(ref), () => this.stopNow(ref));
  }

  async remove(ref: ObjectRef): Promise<void> {
    await this.started();
    await this.serial.run(refKey(ref), async () => {
      await this.stopNow(ref);
      const ns = ref.namespace;
      // By label: a claim, Secret or ConfigMap taken over from a warm-pool slot keeps the slot's name.
      const labelSelector = agentSelector(ref.name);
      await Promise.all([
        this.core.deleteCollectionNamespacedSecret({ namespace: ns, labelSelector }),
        this.core.deleteCollectionNamespacedConfigMap({ namespace: ns, labelSelector }),
        this.core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector }),
        ...(this.o.egress ? [this.net.deleteCollectionNamespacedNetworkPolicy({ namespace: ns, labelSelector })] : []),
      ]);
      this.o.logger.info({ namespace: ns, name: ref.name }, 'worker objects removed');
    });
  }

  async close(): Promise<void> {
    // Agents' pods keep running: their workers reconnect to the next server (or another replica).
    // Untaken warm-pool pods go: their credentials die with this server.
    await this.pool.close();
    this.pods.stop();
    this.hub.closeAll();
  }

  private async stopNow(ref: ObjectRef): Promise<void> {
    // The credentials go first: the worker's connection closes and cannot come back, its engine
    // can no longer reach the model, and a restarted server does not adopt them.
    this.hub.revoke(ref);
    this.o.model.revoke(ref);
    this.pending.delete(refKey(ref));
    await this.markStopped(ref);
    for (const p of this.pods.placements(ref)) {
      if (p.pod.metadata?.deletionTimestamp) continue;
      // A squad's pod goes with its last running member; a member's container otherwise ends
      // by itself (the revoked worker exits 0) and stays ended.
      if (p.own || !this.othersRunIn(p.pod, ref.name)) await this.deletePod(p.pod);
    }
    this.o.logger.info({ namespace: ref.namespace, name: ref.name }, 'worker stopped');
  }

  private othersRunIn(pod: V1Pod, except: string): boolean {
    const ns = pod.metadata!.namespace!;
    return (pod.spec?.containers ?? []).some((c) => c.name !== except && this.hub.hasGrant({ namespace: ns, name: c.name }));
  }

  /** Collects the squad's members ensured within the window, then makes their pod. */
  private gather(spec: WorkerSpec, template: WorkerTemplate): Promise<void> {
    const group = spec.group!;
    let g = this.gathering.get(group);
    if (!g) {
      const members = new Map<string, { spec: WorkerSpec; template: WorkerTemplate }>();
      const done = new Promise<void>((resolve, reject) => {
        setTimeout(() => {
          this.gathering.delete(group);
          this.buildGroup(spec.ref.namespace, group, [...members.values()]).then(resolve, reject);
        }, this.o.groupGatherMs ?? 300);
      });
      g = { namespace: spec.ref.namespace, members, done };
      this.gathering.set(group, g);
    }
    g.members.set(refKey(spec.ref), { spec, template });
    return g.done;
  }

  private async buildGroup(namespace: string, group: string, members: { spec: WorkerSpec; template: WorkerTemplate }[]): Promise<void> {
    const names = members.map((m) => m.spec.ref.name);
    const claims = await this.claims(namespace, [...new Set([...names, ...peersOf(members.map((m) => m.spec))])]);
    // One network, one model proxy for the pod: every member's ConfigMap must say the same.
    const sidecar = this.sidecarFor(members.map((m) => m.template));
    const made = await Promise.all(members.map(async (m) => member(m.spec, m.template, await this.prepare(m.spec, m.template, claims.get(m.spec.ref.name), sidecar))));
    const peers = new Map([...claims].filter(([n]) => !names.includes(n)));
    await this.createPod(namespace, {
      namespace,
      group,
      generateName: groupPodPrefix(group),
      members: made,
      peers,
      owners: this.owners(members.map((m) => m.spec)),
    });
    for (const m of members) this.pending.set(refKey(m.spec.ref), group);
    this.o.logger.info({ namespace, group, members: names }, 'squad pod created');
  }

  /** A member joining a running squad: a pod of its own beside the squad's, with the squad's label. */
  private async joinBeside(spec: WorkerSpec, template: WorkerTemplate): Promise<void> {
    const claims = await this.claims(spec.ref.namespace, [...new Set([spec.ref.name, ...(spec.peers ?? [])])]);
    const made = member(spec, template, await this.prepare(spec, template, claims.get(spec.ref.name), this.sidecarFor([template])));
    claims.delete(spec.ref.name);
    await this.createPod(spec.ref.namespace, {
      namespace: spec.ref.namespace,
      agent: spec.ref.name,
      group: spec.group!,
      generateName: objectNames(spec.ref.name).podPrefix,
      members: [made],
      peers: claims,
      owners: this.owners([spec]),
    });
    this.pending.set(refKey(spec.ref), spec.group!);
    this.o.logger.info({ namespace: spec.ref.namespace, name: spec.ref.name, group: spec.group }, 'joined a running squad in a pod of its own');
  }

  /**
   * Fresh credentials in the agent's Secret, its ConfigMap, and its workspace claim (`claim`, the
   * one it has; made when it has none). Resolves with the claim's name.
   */
  private async prepare(spec: WorkerSpec, template: WorkerTemplate, claim: string | undefined, sidecar: boolean): Promise<string> {
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
  private async writeSettings(h: Holder, secret: V1Secret, sidecar: boolean, owner?: V1OwnerReference): Promise<void> {
    const namespace = h.namespace;
    await this.upsert(
      () => this.core.createNamespacedSecret({ namespace, body: secret }),
      () => this.core.replaceNamespacedSecret({ namespace, name: h.names.secret, body: secret }),
    );
    const modelBaseUrl = sidecar ? `http://127.0.0.1:${MODEL_PROXY_PORT}` : this.o.model.baseUrl();
    const config = workerConfigMap(h, { serverUrl: this.o.channelUrl(), modelBaseUrl }, owner);
    await this.upsert(
      () => this.core.createNamespacedConfigMap({ namespace, body: config }),
      () => this.core.replaceNamespacedConfigMap({ namespace, name: h.names.config, body: config }),
    );
  }

  /** What each template's `warmPool` asks for, per namespace. */
  private poolWants(): PoolWant[] {
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
  private async createSlot(slot: PodSlot, want: PoolWant): Promise<string> {
    const h = slotHolder(slot.namespace, slot.id, slot.templateName);
    const creds = this.credentials(slot.ref, this.hub.issueToken(slot.ref, slot.uid, { slot: true }), this.o.model.issue(slot.ref, slot.uid));
    await this.writeSettings(h, workerSecret(h, slot.uid, creds), this.sidecarFor([want.template]));
    await ignoreExisting(this.core.createNamespacedPersistentVolumeClaim({ namespace: slot.namespace, body: workspaceClaim(h, want.template) }));
    if (slot.role === 'manager') await this.ensureManagerAccess(slot.namespace);
    const pod = await this.createPod(slot.namespace, slotPodSpec(h, slot.templateName, want.template, slotSettings(slot.role)));
    this.o.logger.info({ namespace: slot.namespace, slot: slot.id, template: slot.templateName, pod }, 'warm pool: slot pod created');
    return pod;
  }

  /** Revokes a slot's credentials and deletes its objects (by name: they may be an agent's by label already). */
  private async discardSlot(slot: PodSlot): Promise<void> {
    this.hub.revoke(slot.ref);
    this.o.model.revoke(slot.ref);
    const names = slotNames(slot.id);
    const namespace = slot.namespace;
    // Taken and then lost, the pod may carry an agent's label: its going is not that agent's crash.
    const uid = slot.pod ? this.pods.get(namespace, slot.pod)?.metadata?.uid : undefined;
    if (uid) this.deleting.add(uid);
    await Promise.all([
      ...(slot.pod ? [ignoreMissing(this.core.deleteNamespacedPod({ namespace, name: slot.pod, gracePeriodSeconds: 5 })), this.deletePolicy(namespace, slot.pod)] : []),
      ignoreMissing(this.core.deleteNamespacedSecret({ namespace, name: names.secret })),
      ignoreMissing(this.core.deleteNamespacedConfigMap({ namespace, name: names.config })),
      ignoreMissing(this.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: names.claim })),
    ]);
  }

  /** Deletes every untaken slot's objects (an earlier run's: their credentials died with it). */
  private async sweepSlots(): Promise<void> {
    const labelSelector = UNCLAIMED_POOL_SELECTOR;
    const [pods, secrets, configs, claims, policies] = await Promise.all([
      this.core.listPodForAllNamespaces({ labelSelector }),
      this.core.listSecretForAllNamespaces({ labelSelector }),
      this.core.listConfigMapForAllNamespaces({ labelSelector }),
      this.core.listPersistentVolumeClaimForAllNamespaces({ labelSelector }),
      this.o.egress ? this.net.listNetworkPolicyForAllNamespaces({ labelSelector }) : { items: [] },
    ]);
    const at = (o: { metadata?: { namespace?: string; name?: string } }) => ({ namespace: o.metadata!.namespace!, name: o.metadata!.name! });
    await Promise.all([
      ...pods.items.map((o) => ignoreMissing(this.core.deleteNamespacedPod({ ...at(o), gracePeriodSeconds: 5 }))),
      ...secrets.items.map((o) => ignoreMissing(this.core.deleteNamespacedSecret(at(o)))),
      ...configs.items.map((o) => ignoreMissing(this.core.deleteNamespacedConfigMap(at(o)))),
      ...claims.items.map((o) => ignoreMissing(this.core.deleteNamespacedPersistentVolumeClaim(at(o)))),
      ...policies.items.map((o) => ignoreMissing(this.net.deleteNamespacedNetworkPolicy(at(o)))),
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
  private async takeSlot(spec: WorkerSpec, templateName: string): Promise<boolean> {
    const { ref, uid } = spec;
    const role: Role = spec.role ?? 'manager';
    if (!this.pool.serves(ref.namespace, templateName, role)) return false;
    const slot = this.pool.take(ref.namespace, templateName, role);
    this.o.warmPoolMetrics?.claim(slot ? 'hit' : 'miss');
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
        ...(this.o.egress ? [this.net.patchNamespacedNetworkPolicy({ namespace, name: slot.pod!, body: body() }, merge)] : []),
        this.core.patchNamespacedPod({ namespace, name: slot.pod!, body: body() }, merge),
        this.core.patchNamespacedSecret({ namespace, name: names.secret, body: body({ annotations: { [UID_ANNOTATION]: uid } }) }, merge),
        this.core.patchNamespacedConfigMap({ namespace, name: names.config, body: body() }, merge),
        this.core.patchNamespacedPersistentVolumeClaim({ namespace, name: names.claim, body: body() }, merge),
      ]);
    } catch (err) {
      this.o.logger.warn({ namespace, name: ref.name, slot: slot.id, err: String(err) }, 'warm pool: could not take the slot; starting cold');
      await this.discardSlot(slot);
      return false;
    }
    // The credential first: once the hub reports the agent connected, a task may reach the model.
    if (this.o.model.rebind?.(slot.ref, ref, uid) && this.hub.assign(slot.ref, ref, uid)) {
      this.pending.set(refKey(ref), null);
      this.o.logger.info({ namespace, name: ref.name, slot: slot.id, pod: slot.pod }, 'worker taken from the warm pool');
      return true;
    }
    this.o.model.revoke(ref);
    this.o.logger.warn({ namespace, name: ref.name, slot: slot.id }, 'warm pool: the slot was lost while taken; starting cold');
    await this.discardSlot(slot);
    return false;
  }

  /** The namespace's manager service account and its Role (shared by its managers; kept). */
  private async ensureManagerAccess(namespace: string): Promise<void> {
    const [account, role, binding] = managerAccess(namespace);
    await ignoreExisting(this.core.createNamespacedServiceAccount({ namespace, body: account }));
    await this.upsert(
      () => this.rbac.createNamespacedRole({ namespace, body: role }),
      () => this.rbac.replaceNamespacedRole({ namespace, name: role.metadata!.name!, body: role }),
    );
    await ignoreExisting(this.rbac.createNamespacedRoleBinding({ namespace, body: binding }));
  }

  private async upsert(create: () => Promise<unknown>, replace: () => Promise<unknown>): Promise<void> {
    try {
      await create();
    } catch (err) {
      if (httpStatus(err) !== 409) throw err;
      await replace();
    }
  }

  /** A worker's Secret values; with a model-proxy sidecar, also the report credential only the sidecar mounts. */
  private credentials(ref: ObjectRef, token: string, modelCredential: string): Credentials {
    const reportCredential = this.o.modelSidecar ? this.o.model.issueReport?.(ref) : undefined;
    return { token, modelCredential, ...(reportCredential ? { reportCredential } : {}) };
  }

  private async markStopped(ref: ObjectRef): Promise<void> {
    // The model and report credentials go from the Secret too: a squad pod's sidecar, which reads
    // them from its mount, stops accepting and sending them once the kubelet updates the volume.
    const patch = { metadata: { annotations: { [WORKER_STATE_ANNOTATION]: 'stopped' } }, data: { [MODEL_CREDENTIAL_KEY]: null, [REPORT_CREDENTIAL_KEY]: null } };
    const namespace = ref.namespace;
    const own = objectNames(ref.name);
    const agent = agentSelector(ref.name);
    await Promise.all([
      // A merge patch keeps the other annotations.
      ignoreMissing(this.core.patchNamespacedSecret({ namespace, name: own.secret, body: patch }, setHeaderOptions('Content-Type', 'application/merge-patch+json'))),
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
  private sidecarFor(templates: WorkerTemplate[]): boolean {
    return this.o.modelSidecar !== undefined && podEgress(templates) === 'Open';
  }

  /**
   * Makes the pod's NetworkPolicy, then the pod (so the pod never runs without it); the two are
   * named `<prefix><id>`. Resolves with the pod's name.
   */
  private async createPod(namespace: string, spec: Parameters<typeof workerPod>[0]): Promise<string> {
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

  private async deletePod(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid;
    if (uid) this.deleting.add(uid);
    const namespace = pod.metadata!.namespace!;
    const name = pod.metadata!.name!;
    await Promise.all([ignoreMissing(this.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 5 })), this.deletePolicy(namespace, name)]);
  }

  /** The NetworkPolicy of the pod `name` (it shares the pod's name). */
  private async deletePolicy(namespace: string, name: string): Promise<void> {
    if (this.o.egress) await ignoreMissing(this.net.deleteNamespacedNetworkPolicy({ namespace, name }));
  }

  /** The workspace claims the agents have: agent -> claim name (one taken from a warm-pool slot keeps its name). */
  private async claims(namespace: string, agents: string[]): Promise<Map<string, string>> {
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

  private owners(specs: WorkerSpec[]): V1OwnerReference[] {
    const refs = specs.map((s) => this.o.owner?.(s.ref, s.uid)).filter((o): o is V1OwnerReference => o !== undefined);
    // A squad's pod has several owners; it goes when the last is gone. Only a solo pod has a controller.
    return refs.length === 1 ? refs : refs.map((r) => ({ ...r, controller: false }));
  }

  /**
   * What the pods' status says about workers: an agent's own pod that ended (its worker crashed
   * or exited; the pod is removed, and the next ensure makes a new one), a squad member's
   * container that restarted, a start that cannot succeed, a pod someone else deleted. Only
   * workers the runtime still wants are reported.
   */
  private onPodChange(c: PodChange): void {
    const { pod } = c;
    if (isSlotPod(pod)) return this.pool.kick();
    const ns = pod.metadata?.namespace ?? '';
    const uid = pod.metadata?.uid ?? '';
    // An agent's own pod names it in its label (a pod taken from the warm pool has a container
    // named otherwise); a squad's pod has a container per member.
    const own = pod.metadata?.labels?.[AGENT_LABEL];
    for (const name of own ? [own] : (pod.spec?.containers ?? []).map((ct) => ct.name)) {
      const ref = { namespace: ns, name };
      const p = placementIn(pod, name);
      if (!p) continue;
      if (c.type !== 'delete') this.pending.delete(refKey(ref));
      const wanted = this.hub.hasGrant(ref);
      if (c.type === 'delete') {
        if (wanted && !this.deleting.has(uid) && !this.pods.live(ref)) this.exited(ref, null, null, `pod ${pod.metadata?.name} was deleted`);
        continue;
      }
      const cs = containerStatus(pod, p.container);
      const ended = cs?.state?.terminated;
      const current = isCurrent(pod, this.pods.live(ref), this.deleting);
      if (p.own && (ended || pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded')) {
        if (wanted && current && this.once(`${uid}/${name}/ended`)) {
          this.exited(ref, ended?.exitCode ?? null, ended?.signal ? String(ended.signal) : null, `pod ended (${ended?.reason ?? pod.status?.reason ?? pod.status?.phase})`);
        }
        if (!pod.metadata?.deletionTimestamp && !this.deleting.has(uid)) void this.deletePod(pod).catch(() => undefined);
        continue;
      }
      if (!wanted || !current) continue;
      const restarts = cs?.restartCount ?? 0;
      if (restarts > 0 && this.once(`${uid}/${name}/restart/${restarts}`)) {
        const t = cs?.lastState?.terminated;
        this.exited(ref, t?.exitCode ?? null, t?.signal ? String(t.signal) : null, `container restarted (${t?.reason ?? 'exited'})`);
      }
      const waiting = cs?.state?.waiting?.reason;
      if (waiting && PERMANENT_WAITING.has(waiting) && this.once(`${uid}/${name}/waiting/${waiting}`)) {
        this.exited(ref, null, null, `${waiting}: ${cs?.state?.waiting?.message ?? ''}`);
        // Replaced, so the next start is tried (and counted) afresh; a squad's pod is not
        // replaced for one member.
        if (p.own) void this.deletePod(pod).catch(() => undefined);
      }
    }
    if (c.type === 'delete') {
      // However the pod went (the runtime, kubectl, the node), its NetworkPolicy goes with it.
      if (pod.metadata?.labels?.[POD_ID_LABEL]) void this.deletePolicy(ns, pod.metadata.name!).catch((err) => this.o.logger.warn({ namespace: ns, pod: pod.metadata?.name, err: String(err) }, 'pod NetworkPolicy not deleted'));
      this.deleting.delete(uid);
      for (const k of [...this.reported]) if (k.startsWith(`${uid}/`)) this.reported.delete(k);
    }
  }

  private once(key: string): boolean {
    if (this.reported.has(key)) return false;
    this.reported.add(key);
    return true;
  }
}

/** A container of the pod for the worker `spec`, whose workspace is `claim`. */
function member(spec: WorkerSpec, template: WorkerTemplate, claim: string): PodMember {
  return {
    name: spec.ref.name,
    template,
    names: { ...objectNames(spec.ref.name), claim },
    ...(spec.wakeIdle ? { wakeIdle: true } : {}),
    ...(spec.role === 'manager' ? { manager: true } : {}),
  };
}

/** The names of everyone in the members' squads (their `peers`), de-duplicated. */
function peersOf(specs: WorkerSpec[]): string[] {
  return [...new Set(specs.flatMap((s) => s.peers ?? []))];
}

function readCredentials(s: V1Secret): Credentials | undefined {
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

function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

async function ignoreMissing(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (httpStatus(err) !== 404) throw err;
  }
}

async function ignoreExisting(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (httpStatus(err) !== 409) throw err;
  }
}

