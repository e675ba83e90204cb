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
//
// Its parts: the workers' objects (./worker-objects.ts), squads' pods (./squad-pods.ts), the
// warm pool's slots (./warm-slots.ts); this file decides when, and reads the pods' status.

import type { V1Pod } from '@kubernetes/client-node';
import { type ObjectRef, refKey } from '../../api/meta.js';
import { KeyedSerializer } from '../../registry/serializer.js';
import { ChannelRuntime } from '../channel/channel-runtime.js';
import type { AgentRuntime, CheckpointStorage, WorkerSpec, WorkerStatus } from '../runtime.js';
import { KubernetesCheckpoints } from './checkpoints.js';
import type { KubernetesRuntimeOptions } from './kubernetes-options.js';
import { AGENT_LABEL, componentSelector, objectNames, POD_ID_LABEL, UID_ANNOTATION, WORKER_STATE_ANNOTATION } from './names.js';
import { containerStatus, isCurrent, isSlotPod, PERMANENT_WAITING, PodIndex, type PodChange, placementIn } from './pod-index.js';
import { PodPool } from './pod-pool.js';
import { member, SquadPods } from './squad-pods.js';
import { WarmSlots } from './warm-slots.js';
import { readCredentials, WorkerObjects } from './worker-objects.js';

export type { KubernetesRuntimeOptions };

export class KubernetesRuntime extends ChannelRuntime implements AgentRuntime {
  readonly name = 'kubernetes';
  private readonly pods: PodIndex;
  private readonly serial = new KeyedSerializer();
  /** The workers' Kubernetes objects (worker-objects.ts). */
  private readonly objects: WorkerObjects;
  private readonly slots: WarmSlots;
  private readonly squads: SquadPods;
  /** Pods created and not yet seen by the watch: agent key -> group (null when solo). */
  private readonly pending = new Map<string, string | null>();
  /** Failures already reported, so an unchanged pod status is not reported twice. */
  private readonly reported = new Set<string>();
  private ready?: Promise<void>;
  private readonly pool: PodPool;
  /** Checkpoints as claims of their own, filled by copy pods (./checkpoints.ts). */
  readonly checkpoints: CheckpointStorage;

  constructor(private readonly o: KubernetesRuntimeOptions) {
    super(o.logger);
    this.objects = new WorkerObjects(o, this.hub);
    this.pods = new PodIndex(o.kubeConfig, o.logger, (c) => this.onPodChange(c));
    this.slots = new WarmSlots(o, this.hub, this.objects, this.pods, () => this.pool);
    this.squads = new SquadPods(o, this.objects, this.pending);
    this.pool = new PodPool({
      logger: o.logger,
      wanted: () => this.slots.poolWants(),
      create: (slot, want) => this.slots.createSlot(slot, want),
      discard: (slot) => this.slots.discardSlot(slot),
      pods: () => this.pods.slotPods(),
      sweep: () => this.slots.sweepSlots(),
      ...(o.warmPoolMetrics ? { onReady: (n: number) => o.warmPoolMetrics!.ready(n) } : {}),
    });
    this.hub.on('slotReady', (ref) => this.pool.ready(ref));
    this.checkpoints = new KubernetesCheckpoints({
      core: this.objects.core,
      net: this.objects.net,
      policies: o.egress !== undefined,
      timeoutMs: o.checkpointCopyTimeoutMs ?? 10 * 60_000,
      claimOf: async (ref) => (await this.objects.claims(ref.namespace, [ref.name])).get(ref.name),
      live: (ref) => this.pods.live(ref),
      defaults: () => o.templates.resolve('default'),
      ready: () => this.started(),
      ...(o.owner ? { owner: o.owner } : {}),
    });
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
    const { items } = await this.objects.core.listSecretForAllNamespaces({ labelSelector: componentSelector('credentials') });
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
    await this.sweepCopies();
  }

  /** Copy pods a previous server left (it died mid-copy): none is this one's yet, and their copies are taken again. */
  private async sweepCopies(): Promise<void> {
    const { items } = await this.objects.core.listPodForAllNamespaces({ labelSelector: componentSelector('checkpoint-copy') });
    for (const pod of items) {
      if (pod.metadata?.deletionTimestamp) continue;
      this.o.logger.info({ namespace: pod.metadata?.namespace, pod: pod.metadata?.name }, 'removing a copy pod left by an earlier server');
      const { namespace, name } = pod.metadata as { namespace: string; name: string };
      await Promise.all([this.objects.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }), this.objects.deletePolicy(namespace, name)]).catch(
        () => undefined,
      );
    }
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
        const claim = (await this.objects.claims(spec.ref.namespace, [spec.ref.name])).get(spec.ref.name);
        // A new agent (no workspace yet) may take a warm-pool pod; a waking one keeps its claim.
        if (!claim && !spec.wakeIdle && (await this.slots.takeSlot(spec, templateName))) {
          this.pending.set(key, null);
          return;
        }
        await this.objects.createPod(spec.ref.namespace, {
          namespace: spec.ref.namespace,
          agent: spec.ref.name,
          generateName: objectNames(spec.ref.name).podPrefix,
          members: [member(spec, template, await this.objects.prepare(spec, template, claim, this.objects.sidecarFor([template])))],
          owners: this.objects.owners([spec]),
        });
        this.pending.set(key, null);
        return;
      }
      if (this.pods.groupPod(spec.ref.namespace, spec.group)) return this.squads.joinBeside(spec, template);
      await this.squads.gather(spec, template);
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
      // By label: a claim, Secret or ConfigMap taken over from a warm-pool slot keeps the slot's name.
      await this.objects.removeAll(ref);
      this.o.logger.info({ namespace: ref.namespace, name: ref.name }, 'worker objects removed');
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
    await this.objects.markStopped(ref);
    for (const p of this.pods.placements(ref)) {
      if (p.pod.metadata?.deletionTimestamp) continue;
      // A squad's pod goes with its last running member; a member's container otherwise ends
      // by itself (the revoked worker exits 0) and stays ended.
      if (p.own || !this.othersRunIn(p.pod, ref.name)) await this.objects.deletePod(p.pod);
    }
    this.o.logger.info({ namespace: ref.namespace, name: ref.name }, 'worker stopped');
  }

  private othersRunIn(pod: V1Pod, except: string): boolean {
    const ns = pod.metadata!.namespace!;
    return (pod.spec?.containers ?? []).some((c) => c.name !== except && this.hub.hasGrant({ namespace: ns, name: c.name }));
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
        if (wanted && !this.objects.deleting.has(uid) && !this.pods.live(ref)) this.exited(ref, null, null, `pod ${pod.metadata?.name} was deleted`);
        continue;
      }
      const cs = containerStatus(pod, p.container);
      const ended = cs?.state?.terminated;
      const current = isCurrent(pod, this.pods.live(ref), this.objects.deleting);
      if (p.own && (ended || pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded')) {
        if (wanted && current && this.once(`${uid}/${name}/ended`)) {
          this.exited(
            ref,
            ended?.exitCode ?? null,
            ended?.signal ? String(ended.signal) : null,
            `pod ended (${ended?.reason ?? pod.status?.reason ?? pod.status?.phase})`,
          );
        }
        if (!pod.metadata?.deletionTimestamp && !this.objects.deleting.has(uid)) void this.objects.deletePod(pod).catch(() => undefined);
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
        if (p.own) void this.objects.deletePod(pod).catch(() => undefined);
      }
    }
    if (c.type === 'delete') {
      // However the pod went (the runtime, kubectl, the node), its NetworkPolicy goes with it.
      if (pod.metadata?.labels?.[POD_ID_LABEL])
        void this.objects
          .deletePolicy(ns, pod.metadata.name!)
          .catch((err) => this.o.logger.warn({ namespace: ns, pod: pod.metadata?.name, err: String(err) }, 'pod NetworkPolicy not deleted'));
      this.objects.deleting.delete(uid);
      for (const k of [...this.reported]) if (k.startsWith(`${uid}/`)) this.reported.delete(k);
    }
  }

  private once(key: string): boolean {
    if (this.reported.has(key)) return false;
    this.reported.add(key);
    return true;
  }
}
