// Legacy discovery documents: /apis (APIGroupList), /apis/agentplane.io (APIGroup) and
// /apis/agentplane.io/v1alpha1 (APIResourceList). Aggregated discovery (apidiscovery.k8s.io/v2)
// is not served: a request for it gets the legacy document with Content-Type application/json,
// and kube-apiserver's aggregator then falls back to the legacy per-version document.

import { API_VERSION, GROUP, VERSION } from '../../api/meta.js';
import { type ResourceDef, VERBS } from './resources.js';

const groupVersion = { groupVersion: API_VERSION, version: VERSION };

const group = () => ({ name: GROUP, versions: [groupVersion], preferredVersion: groupVersion });

export const apiGroupList = () => ({ kind: 'APIGroupList', apiVersion: 'v1', groups: [group()] });

export const apiGroup = () => ({ kind: 'APIGroup', apiVersion: 'v1', ...group() });

export function apiResourceList(resources: ResourceDef[]) {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: API_VERSION,
    resources: resources.flatMap((r) => [
      {
        name: r.plural,
        singularName: r.singular,
        namespaced: true,
        kind: r.kind,
        verbs: VERBS,
        shortNames: r.shortNames,
        categories: r.categories,
      },
      ...r.subresources.map((s) => ({ name: `${r.plural}/${s.name}`, singularName: '', namespaced: true, kind: s.kind, verbs: s.verbs })),
    ]),
  };
}
