// The storage CRDs (one "XRecord" per agentplane kind) as plain wire-format JSON, and
// ensureCrds, which the server calls at start-up in Kubernetes mode. manifests/crds/*.yaml hold
// the same definitions for installs where the server may not create CRDs; a unit test keeps
// the two in agreement.

import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_GROUP, RECORD_VERSION, recordNames } from './records.js';
import { statusOf } from './errors.js';

/** The agentplane kinds persisted in Kubernetes mode. */
export const RECORD_KINDS = ['Agent', 'Squad', 'Connector', 'AgentCheckpoint', 'Budget', 'Schedule', 'Trigger', 'Webhook', 'Skill', 'Memory'] as const;

export type Crd = {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string>; resourceVersion?: string };
  spec: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
};

// Opaque to Kubernetes: strategies and JSON Schemas validate these, not the CRD.
const opaque = { 'x-kubernetes-preserve-unknown-fields': true, nullable: true };

export function recordCrd(kind: string, group = DEFAULT_GROUP): Crd {
  const names = recordNames(kind);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${names.plural}.${group}`,
      labels: { 'app.kubernetes.io/name': 'agentplane', 'app.kubernetes.io/component': 'storage' },
    },
    spec: {
      group,
      scope: 'Namespaced',
      names,
      versions: [
        {
          name: RECORD_VERSION,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              description: `Internal storage of one agentplane ${kind}; read and write ${kind.replace(/y$/, 'ie')}s through agentplane.io instead.`,
              type: 'object',
              required: ['spec'],
              properties: {
                spec: {
                  type: 'object',
                  required: ['generation', 'object'],
                  // The object's uid is the update precondition the record's uid used to be: a
                  // write from before a delete and re-create is refused (see errors.ts).
                  'x-kubernetes-validations': [
                    {
                      rule: '!has(oldSelf.uid) || (has(self.uid) && self.uid == oldSelf.uid)',
                      message: 'the object was deleted and re-created',
                      fieldPath: '.uid',
                    },
                  ],
                  properties: {
                    uid: { type: 'string', description: `The ${kind}'s metadata.uid (not the record's).` },
                    generation: { type: 'integer', format: 'int64', description: `The ${kind}'s metadata.generation.` },
                    deletionTimestamp: {
                      type: 'string',
                      description: `The ${kind}'s metadata.deletionTimestamp: agentplane is finalizing it.`,
                    },
                    finalizers: {
                      type: 'array',
                      items: { type: 'string' },
                      description: `The ${kind}'s metadata.finalizers (not the record's: those would hold the record).`,
                    },
                    ownerReferences: {
                      type: 'array',
                      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                      description: `The ${kind}'s metadata.ownerReferences (not the record's: kube's garbage collector would delete the record).`,
                    },
                    managedFields: {
                      type: 'array',
                      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                      description: `The ${kind}'s metadata.managedFields (field ownership of server-side apply).`,
                    },
                    object: {
                      type: 'object',
                      required: ['apiVersion', 'kind'],
                      properties: {
                        apiVersion: { type: 'string' },
                        kind: { type: 'string' },
                        spec: opaque,
                        status: opaque,
                      },
                    },
                  },
                },
              },
            },
          },
          additionalPrinterColumns: [
            { name: 'Generation', type: 'integer', jsonPath: '.spec.generation' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}

const CRD_API = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' };

/**
 * Creates or updates the storage CRDs and waits until each is Established (served).
 * Goes through CustomObjectsApi so the body is sent as written (the typed CRD client would
 * drop the x-kubernetes-* keys it only knows in camelCase).
 */
export async function ensureCrds(kc: KubeConfig, kinds: readonly string[] = RECORD_KINDS, opts: { group?: string; timeoutMs?: number } = {}): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const wanted = kinds.map((k) => recordCrd(k, opts.group));
  await Promise.all(wanted.map((crd) => apply(api, crd)));
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (const crd of wanted) {
    for (;;) {
      const cur = (await api.getClusterCustomObject({ ...CRD_API, name: crd.metadata.name })) as Crd;
      const conds = cur.status?.conditions ?? [];
      const bad = conds.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
      if (bad) throw new Error(`CRD ${crd.metadata.name}: names not accepted: ${bad.message}`);
      if (conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} is not Established`);
      await sleep(100);
    }
  }
}

async function apply(api: CustomObjectsApi, crd: Crd): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await api.createClusterCustomObject({ ...CRD_API, body: crd });
      return;
    } catch (err) {
      if (statusOf(err)?.code !== 409) throw err;
    }
    // It exists: replace the spec (keeping any other labels), retried on a concurrent writer.
    const cur = (await api.getClusterCustomObject({ ...CRD_API, name: crd.metadata.name })) as Crd;
    const next = {
      ...cur,
      metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, ...crd.metadata.labels } },
      spec: crd.spec,
    };
    try {
      await api.replaceClusterCustomObject({ ...CRD_API, name: crd.metadata.name, body: next });
      return;
    } catch (err) {
      if (statusOf(err)?.code !== 409 || i >= 5) throw err;
    }
  }
}
