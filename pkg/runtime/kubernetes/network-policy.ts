// Each agent pod's NetworkPolicy (docs/kubernetes-runtime.md "Network policy"): it selects
// exactly that pod (by its `agentplane.io/pod-id` label), admits no ingress, and lets it reach
// only the cluster's DNS, agentplane's worker listener and, when its templates' egress is `Open`,
// public addresses: never link-local (the cloud metadata address), private or shared ranges,
// where the API server and the cluster's pods and services live. A NetworkPolicy cannot name
// hosts, so `Proxy` and `None` both leave no direct way out. Pure functions of their inputs.
//
// A NetworkPolicy is only as good as the cluster's network plugin: one that does not enforce
// policies (the plain CNI bridge plugin of the test node) ignores these objects entirely.

import { isIP } from 'node:net';

import type { V1NetworkPolicy, V1NetworkPolicyPeer, V1NetworkPolicyPort, V1Pod } from '@kubernetes/client-node';
import { EGRESS_MODES, type EgressMode, egressPolicy, type TemplateSettings } from '../../api/template-settings.js';
import { COMPONENT_LABEL, POD_ID_LABEL } from './names.js';

/** Where the cloud providers' instance metadata answers (AWS, GCP, Azure, OpenStack, …). */
export const METADATA_ADDRESS = '169.254.169.254/32';

/**
 * Never reachable through an `Open` pod's general rule: link-local (the metadata address),
 * private and shared (carrier-grade NAT) ranges, loopback, and their IPv6 counterparts with the
 * NAT64 range (which could spell a private IPv4 address). Not the IPv4-mapped ::ffff:0:0/96:
 * kube-apiserver reads it as IPv4 and refuses it inside ::/0, and a connection to such an
 * address leaves as IPv4, which the IPv4 rule governs.
 */
export const NON_PUBLIC_V4 = [METADATA_ADDRESS, '169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '127.0.0.0/8'];
export const NON_PUBLIC_V6 = ['fc00::/7', 'fe80::/10', '::1/128', '64:ff9b::/96'];

/** The labels of agentplane's own pods in the manifests (manifests/deployment.yaml). */
export const SERVER_POD_LABELS = { 'app.kubernetes.io/name': 'agentplane', 'app.kubernetes.io/component': 'apiserver' };
/** The cluster DNS pods' label (CoreDNS and kube-dns both carry it) in kube-system. */
export const DNS_POD_LABELS = { 'k8s-app': 'kube-dns' };

/** Where every agent pod may connect, whatever its egress: fixed per server. */
export interface EgressTargets {
  /** agentplane's worker listener as pods reach it (after any Service's address translation). */
  server: { peers: V1NetworkPolicyPeer[]; ports: number[] };
  /** The cluster DNS (UDP and TCP 53). */
  dns: V1NetworkPolicyPeer[];
  /** Pods with the model-proxy sidecar: the model API when its address is known (an IP literal). */
  model?: { peers: V1NetworkPolicyPeer[]; ports: number[] };
  /** Addresses `Open` never reaches besides the non-public ranges: the API server's, a public pod or service range. */
  deny?: string[];
}

export interface EgressTargetInputs {
  /** The URL pods dial (`--worker-url`). */
  workerUrl: string;
  /** The worker listener's own port (what a Service in front of it forwards to). */
  listenPort: number;
  /** Where agentplane runs in the cluster (the install namespace). */
  installNamespace: string;
  /** kube-apiserver's URL as the server reaches it. */
  apiServerUrl?: string;
  /** The model API the sidecars call when the mirrored Secret names none. */
  modelUpstream?: string;
}

/**
 * The targets for a server: its worker listener by address when pods dial an IP (the test
 * node's bridge address), else agentplane's pods in the install namespace on the listener's
 * port; DNS in kube-system.
 */
export function egressTargets(i: EgressTargetInputs): EgressTargets {
  const worker = new URL(i.workerUrl);
  const workerIp = literalIp(worker.hostname);
  const server = workerIp
    ? { peers: [{ ipBlock: { cidr: hostCidr(workerIp) } }], ports: [...new Set([urlPort(worker), i.listenPort])] }
    : {
        peers: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': i.installNamespace } }, podSelector: { matchLabels: { ...SERVER_POD_LABELS } } },
        ],
        ports: [i.listenPort],
      };
  const targets: EgressTargets = {
    server,
    dns: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { ...DNS_POD_LABELS } } }],
  };
  const model = i.modelUpstream ? new URL(i.modelUpstream) : undefined;
  const modelIp = model ? literalIp(model.hostname) : undefined;
  if (model && modelIp) targets.model = { peers: [{ ipBlock: { cidr: hostCidr(modelIp) } }], ports: [urlPort(model)] };
  const api = i.apiServerUrl ? literalIp(new URL(i.apiServerUrl).hostname) : undefined;
  if (api && !api.startsWith('127.') && api !== '::1') targets.deny = [hostCidr(api)];
  return targets;
}

/** The most closed of the members' egress modes: a pod has one network, its members share it. */
export function podEgress(members: readonly (TemplateSettings | undefined)[]): EgressMode {
  const modes = members.map((t) => egressPolicy(t).mode);
  // EGRESS_MODES runs from the most open to the most closed.
  return EGRESS_MODES[Math.max(0, ...modes.map((m) => EGRESS_MODES.indexOf(m)))];
}

/**
 * The pod's NetworkPolicy: named and labelled like the pod (component `network-policy`), owned by
 * the pod's owners, selecting only the pod (its pod-id label). No ingress: the kubelet's probes
 * come from the node, which NetworkPolicy always admits.
 */
export function podNetworkPolicy(pod: V1Pod, mode: EgressMode, t: EgressTargets): V1NetworkPolicy {
  const meta = pod.metadata!;
  const id = meta.labels?.[POD_ID_LABEL];
  if (!meta.name || !id) throw new Error('a pod needs its name and pod-id label before its NetworkPolicy is made');
  const tcp = (ports: number[]): V1NetworkPolicyPort[] => ports.map((port) => ({ protocol: 'TCP', port }));
  const egress: NonNullable<V1NetworkPolicy['spec']>['egress'] = [
    {
      to: t.dns,
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    },
    { to: t.server.peers, ports: tcp(t.server.ports) },
  ];
  if (t.model) egress.push({ to: t.model.peers, ports: tcp(t.model.ports) });
  if (mode === 'Open') {
    const deny = t.deny ?? [];
    egress.push({
      to: [
        { ipBlock: { cidr: '0.0.0.0/0', except: [...new Set([...NON_PUBLIC_V4, ...deny.filter((c) => !c.includes(':'))])] } },
        { ipBlock: { cidr: '::/0', except: [...new Set([...NON_PUBLIC_V6, ...deny.filter((c) => c.includes(':'))])] } },
      ],
    });
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: meta.name,
      namespace: meta.namespace!,
      labels: { ...meta.labels, [COMPONENT_LABEL]: 'network-policy' },
      annotations: { [EGRESS_ANNOTATION]: mode },
      ...(meta.ownerReferences?.length ? { ownerReferences: meta.ownerReferences } : {}),
    },
    spec: {
      podSelector: { matchLabels: { [POD_ID_LABEL]: id } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress,
    },
  };
}

/** On a pod's NetworkPolicy: the egress mode it was made for. */
export const EGRESS_ANNOTATION = 'agentplane.io/egress';

function literalIp(host: string): string | undefined {
  const h = host.startsWith('[') ? host.slice(1, -1) : host;
  return isIP(h) ? h : undefined;
}

const hostCidr = (ip: string): string => (ip.includes(':') ? `${ip}/128` : `${ip}/32`);

function urlPort(u: URL): number {
  return u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}
