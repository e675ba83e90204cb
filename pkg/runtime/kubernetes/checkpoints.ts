// Checkpoints of the Kubernetes runtime (docs/kubernetes-runtime.md "Checkpoints"): a checkpoint
// is a PersistentVolumeClaim of its own, `checkpoint-<agent>.<checkpoint>` in the agent's
// namespace, filled by a short-lived copy pod (./copy-pod.ts) from the agent's workspace claim
// (a squad member's too: each member has its own claim). A fork's workspace claim is filled
// from it the same way before the fork's first pod starts. The engine keeps its session under the
// workspace, mounted at the same path in every pod (/workspace), so the session directory
// (.claude/projects/-workspace) needs no renaming.
//
// The checkpoint's claim carries no agent label: removing the agent leaves its checkpoints
// (forks may still be made from them); deleting the checkpoint deletes the claim. An annotation
// written after the copy succeeded marks it complete (with the bytes copied).

import { type CoreV1Api, setHeaderOptions, type V1OwnerReference, type V1PersistentVolumeClaim, type V1Pod } from '@kubernetes/client-node';
import type { ObjectRef } from '../../api/meta.js';
import type { CheckpointStorage } from '../runtime.js';
import { ignoreExisting, ignoreMissing } from './api-errors.js';
import { type CopyIdentity, type CopyRunnerOptions, runCopy } from './copy-pod.js';
import { componentSelector, labelsFor, objectNames } from './names.js';
import type { Placement } from './pod-index.js';
import type { WorkerTemplate } from './template.js';

/** On a checkpoint's claim: its id ("<namespace>/<checkpoint object name>"). */
export const CHECKPOINT_ANNOTATION = 'agentplane.io/checkpoint';
/** On a checkpoint's claim once its copy is complete: the bytes copied. */
export const CHECKPOINT_BYTES_ANNOTATION = 'agentplane.io/checkpoint-bytes';
/** On a checkpoint's claim once complete: the engine session written last in the copy. */
export const CHECKPOINT_SESSION_ANNOTATION = 'agentplane.io/checkpoint-session';
/** On a checkpoint's claim: who copied it (image, user, group), so a restore reads it as the same user. */
export const CHECKPOINT_IDENTITY_ANNOTATION = 'agentplane.io/checkpoint-identity';

export const checkpointClaimName = (objectName: string): string => `checkpoint-${objectName}`;

export interface KubernetesCheckpointsOptions extends Omit<CopyRunnerOptions, 'core'> {
  core: CoreV1Api;
  /** The agent's workspace claim (found by label: a warm-pool slot's keeps the slot's name). */
  claimOf(ref: ObjectRef): Promise<string | undefined>;
  /** The agent's live placement, whose container's image and user the copy takes. */
  live(ref: ObjectRef): Placement | undefined;
  /** The default template: the copy's image and user when the agent runs no pod. */
  defaults(): WorkerTemplate | undefined;
  /** Resolves once the runtime's pod watch runs (what `live` reads). */
  ready(): Promise<void>;
  /** The owner of a fork's workspace claim (its agent), as for every claim the runtime makes. */
  owner?: (ref: ObjectRef, uid: string) => V1OwnerReference | undefined;
}

export class KubernetesCheckpoints implements CheckpointStorage {
  constructor(private readonly o: KubernetesCheckpointsOptions) {}

  async take(id: string, ref: ObjectRef): Promise<{ bytes: number; sessionId?: string }> {
    const { namespace, objectName } = parseId(id);
    await this.o.ready();
    const name = checkpointClaimName(objectName);
    // A copy removed just before (a squad's checkpoint taken again) may still be going.
    const existing = await this.settledClaim(namespace, name);
    const ann = existing?.metadata?.annotations ?? {};
    const done = ann[CHECKPOINT_BYTES_ANNOTATION];
    if (done !== undefined) return { bytes: Number(done), ...(ann[CHECKPOINT_SESSION_ANNOTATION] ? { sessionId: ann[CHECKPOINT_SESSION_ANNOTATION] } : {}) };
    const source = await this.o.claimOf(ref);
    const sourceClaim = source ? await this.readClaim(namespace, source) : undefined;
    const who = this.identity(ref);
    if (!existing) {
      const body: V1PersistentVolumeClaim = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          namespace,
          labels: labelsFor('checkpoint'),
          annotations: { [CHECKPOINT_ANNOTATION]: id, [CHECKPOINT_IDENTITY_ANNOTATION]: JSON.stringify(who) },
        },
        // The source's size and storage class: the copy fits, and a fork's workspace is alike.
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: sourceClaim?.spec?.resources?.requests?.storage ?? this.o.defaults()?.storage.size ?? '1Gi' } },
          ...(sourceClaim?.spec?.storageClassName ? { storageClassName: sourceClaim.spec.storageClassName } : {}),
        },
      };
      await ignoreExisting(this.o.core.createNamespacedPersistentVolumeClaim({ namespace, body }));
    }
    const copied = await runCopy(this.o, { namespace, ...(source ? { from: source } : {}), to: name, who, purpose: `checkpoint ${id}` });
    const annotations = {
      [CHECKPOINT_BYTES_ANNOTATION]: String(copied.bytes),
      ...(copied.sessionId ? { [CHECKPOINT_SESSION_ANNOTATION]: copied.sessionId } : {}),
    };
    await this.o.core.patchNamespacedPersistentVolumeClaim({ namespace, name, body: { metadata: { annotations } } }, mergePatch);
    return copied;
  }

  async restore(id: string, to: ObjectRef, uid?: string): Promise<void> {
    const { namespace, objectName } = parseId(id);
    await this.o.ready();
    const name = checkpointClaimName(objectName);
    const checkpoint = await this.readClaim(namespace, name);
    if (checkpoint?.metadata?.annotations?.[CHECKPOINT_BYTES_ANNOTATION] === undefined) throw new Error(`checkpoint ${id} is not complete`);
    let target = await this.o.claimOf(to);
    if (!target) {
      // The fork's own workspace claim, as the runtime would make it; its first pod then finds it.
      target = objectNames(to.name).claim;
      const owner = uid ? this.o.owner?.(to, uid) : undefined;
      const body: V1PersistentVolumeClaim = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: target, namespace, labels: labelsFor('workspace', to.name), ...(owner ? { ownerReferences: [owner] } : {}) },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: checkpoint.spec?.resources?.requests?.storage ?? '1Gi' } },
          ...(checkpoint.spec?.storageClassName ? { storageClassName: checkpoint.spec.storageClassName } : {}),
        },
      };
      await ignoreExisting(this.o.core.createNamespacedPersistentVolumeClaim({ namespace, body }));
    }
    const who = readIdentity(checkpoint) ?? this.identity(to);
    await runCopy(this.o, { namespace, from: name, to: target, who, purpose: `restore of checkpoint ${id} for agent ${to.name}` });
  }

  async remove(id: string): Promise<void> {
    const { namespace, objectName } = parseId(id);
    await ignoreMissing(this.o.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: checkpointClaimName(objectName) }));
  }

  async list(): Promise<string[]> {
    const { items } = await this.o.core.listPersistentVolumeClaimForAllNamespaces({ labelSelector: componentSelector('checkpoint') });
    return items.map((c) => c.metadata?.annotations?.[CHECKPOINT_ANNOTATION]).filter((id): id is string => !!id);
  }

  /** The image and user of the agent's running container, else of the default template. */
  private identity(ref: ObjectRef): CopyIdentity {
    const p = this.o.live(ref);
    const container = p?.pod.spec?.containers.find((c) => c.name === p.container);
    const pod = p?.pod.spec?.securityContext;
    if (p && container?.image) {
      return {
        image: container.image,
        ...(container.imagePullPolicy ? { imagePullPolicy: container.imagePullPolicy } : {}),
        runAsUser: container.securityContext?.runAsUser ?? pod?.runAsUser ?? 10001,
        runAsGroup: container.securityContext?.runAsGroup ?? pod?.runAsGroup ?? 10001,
        ...nodeSelectorOf(p.pod),
      };
    }
    const t = this.o.defaults();
    if (!t) throw new Error('no default pod template to copy with');
    return {
      image: t.image,
      ...(t.imagePullPolicy ? { imagePullPolicy: t.imagePullPolicy } : {}),
      runAsUser: t.runAsUser,
      runAsGroup: t.runAsGroup,
      ...(t.nodeSelector ? { nodeSelector: t.nodeSelector } : {}),
    };
  }

  /** The claim, once any deletion of it has finished (undefined when gone). */
  private async settledClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim | undefined> {
    const deadline = Date.now() + this.o.timeoutMs;
    for (;;) {
      const c = await this.readClaim(namespace, name, true);
      if (!c?.metadata?.deletionTimestamp) return c;
      if (Date.now() > deadline) throw new Error(`the claim ${name} of an earlier copy is still being deleted`);
      await new Promise((r) => setTimeout(r, this.o.pollMs ?? 500));
    }
  }

  private async readClaim(namespace: string, name: string, deleting = false): Promise<V1PersistentVolumeClaim | undefined> {
    try {
      const c = await this.o.core.readNamespacedPersistentVolumeClaim({ namespace, name });
      return c.metadata?.deletionTimestamp && !deleting ? undefined : c;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }
}

const mergePatch = setHeaderOptions('Content-Type', 'application/merge-patch+json');

function nodeSelectorOf(pod: V1Pod): { nodeSelector?: Record<string, string> } {
  return pod.spec?.nodeSelector ? { nodeSelector: pod.spec.nodeSelector } : {};
}

function readIdentity(c: V1PersistentVolumeClaim): CopyIdentity | undefined {
  const raw = c.metadata?.annotations?.[CHECKPOINT_IDENTITY_ANNOTATION];
  try {
    return raw ? (JSON.parse(raw) as CopyIdentity) : undefined;
  } catch {
    return undefined;
  }
}

function parseId(id: string): { namespace: string; objectName: string } {
  const [namespace, objectName, ...rest] = id.split('/');
  if (!namespace || !objectName || rest.length) throw new Error(`invalid checkpoint id "${id}"`);
  return { namespace, objectName };
}
