// Squads in the cluster home: the members ensured together (within `groupGatherMs`) form one
// pod with a container per member; a member that joins while the squad's pod runs gets a pod of
// its own beside it, labelled with the squad (pods cannot gain containers with volumes;
// docs/kubernetes-runtime.md "Joining a running squad").

import { refKey } from '../../api/meta.js';
import type { WorkerSpec } from '../runtime.js';
import type { KubernetesRuntimeOptions } from './kubernetes-options.js';
import { groupPodPrefix, objectNames } from './names.js';
import type { PodMember } from './objects.js';
import type { WorkerTemplate } from './template.js';
import type { WorkerObjects } from './worker-objects.js';

/** Members ensured together, made into one pod when the gathering window closes. */
interface Gathering {
  namespace: string;
  members: Map<string, { spec: WorkerSpec; template: WorkerTemplate }>;
  done: Promise<void>;
}

export class SquadPods {
  private readonly gathering = new Map<string, Gathering>();

  constructor(
    private readonly o: KubernetesRuntimeOptions,
    private readonly objects: WorkerObjects,
    /** Pods created and not yet seen by the watch: agent key -> group (the runtime's). */
    private readonly pending: Map<string, string | null>,
  ) {}

  /** Collects the squad's members ensured within the window, then makes their pod. */
  gather(spec: WorkerSpec, template: WorkerTemplate): Promise<void> {
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
    const claims = await this.objects.claims(namespace, [...new Set([...names, ...peersOf(members.map((m) => m.spec))])]);
    // One network, one model proxy for the pod: every member's ConfigMap must say the same.
    const sidecar = this.objects.sidecarFor(members.map((m) => m.template));
    const made = await Promise.all(
      members.map(async (m) => member(m.spec, m.template, await this.objects.prepare(m.spec, m.template, claims.get(m.spec.ref.name), sidecar))),
    );
    const peers = new Map([...claims].filter(([n]) => !names.includes(n)));
    await this.objects.createPod(namespace, {
      namespace,
      group,
      generateName: groupPodPrefix(group),
      members: made,
      peers,
      owners: this.objects.owners(members.map((m) => m.spec)),
    });
    for (const m of members) this.pending.set(refKey(m.spec.ref), group);
    this.o.logger.info({ namespace, group, members: names }, 'squad pod created');
  }

  /** A member joining a running squad: a pod of its own beside the squad's, with the squad's label. */
  async joinBeside(spec: WorkerSpec, template: WorkerTemplate): Promise<void> {
    const claims = await this.objects.claims(spec.ref.namespace, [...new Set([spec.ref.name, ...(spec.peers ?? [])])]);
    const made = member(spec, template, await this.objects.prepare(spec, template, claims.get(spec.ref.name), this.objects.sidecarFor([template])));
    claims.delete(spec.ref.name);
    await this.objects.createPod(spec.ref.namespace, {
      namespace: spec.ref.namespace,
      agent: spec.ref.name,
      group: spec.group!,
      generateName: objectNames(spec.ref.name).podPrefix,
      members: [made],
      peers: claims,
      owners: this.objects.owners([spec]),
    });
    this.pending.set(refKey(spec.ref), spec.group!);
    this.o.logger.info({ namespace: spec.ref.namespace, name: spec.ref.name, group: spec.group }, 'joined a running squad in a pod of its own');
  }
}

/** A container of the pod for the worker `spec`, whose workspace is `claim`. */
export function member(spec: WorkerSpec, template: WorkerTemplate, claim: string): PodMember {
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
