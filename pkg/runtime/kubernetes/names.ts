// What the Kubernetes runtime names and labels. Every object made for an agent carries
// `agentplane.io/agent=<name>` (so one label selector finds them all, and DELETE can prove none
// is left); a squad's pod carries `agentplane.io/squad=<squad>`. Pods are named by the API
// server (generateName), so a new incarnation never waits for the old pod's name to be free.

import { createHash, randomInt } from 'node:crypto';
import { COMPONENT_LABEL, MANAGED_BY, MANAGED_BY_LABEL } from '../../api/labels.js';

export { COMPONENT_LABEL, MANAGED_BY, MANAGED_BY_LABEL };
export const AGENT_LABEL = 'agentplane.io/agent';
export const SQUAD_LABEL = 'agentplane.io/squad';
/** On a warm-pool slot's objects until an agent takes them: the template the pool is for. */
export const WARM_POOL_LABEL = 'agentplane.io/warm-pool';
/** On a warm-pool slot's pod: the role it was made for (a manager's pod has a service account). */
export const POOL_ROLE_ANNOTATION = 'agentplane.io/warm-pool-role';

/**
 * On a pod: its own id, which its NetworkPolicy selects (./network-policy.ts). The pod is named
 * `<prefix><id>` and its policy after it, so the policy can exist before the pod does.
 */
export const POD_ID_LABEL = 'agentplane.io/pod-id';

/** The runtime's group key (WorkerSpec.group), kept on the pod: labels cannot hold "/" or ":". */
export const GROUP_ANNOTATION = 'agentplane.io/group';
/** The agent incarnation a Secret's credentials belong to. */
export const UID_ANNOTATION = 'agentplane.io/agent-uid';
/** "running" while the runtime wants the worker; "stopped" after stop (not adopted on restart). */
export const WORKER_STATE_ANNOTATION = 'agentplane.io/worker-state';

export type Component = 'worker' | 'workspace' | 'credentials' | 'config' | 'manager-access' | 'network-policy' | 'checkpoint' | 'checkpoint-copy';

/** Every managed pod, claim, Secret and ConfigMap. */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

/** The managed objects of one component (worker pods, workspace claims, credentials...). */
export const componentSelector = (c: Component): string => `${MANAGED_SELECTOR},${COMPONENT_LABEL}=${c}`;

/** What an agent's (or a warm-pool slot's) objects are called. */
export interface ObjectNames {
  podPrefix: string;
  claim: string;
  secret: string;
  config: string;
}

export const objectNames = (agent: string): ObjectNames => ({
  /** generateName of the agent's solo pod (or of its own pod beside a running squad pod). */
  podPrefix: `agent-${agent}-`,
  claim: `agent-${agent}-workspace`,
  secret: `agent-${agent}-worker`,
  config: `agent-${agent}-config`,
});

/**
 * A warm-pool slot's objects (`warm-<id>`): never an agent's names (those start with `agent-`).
 * The agent that takes the slot keeps them, relabelled, for as long as it lives.
 */
export const slotNames = (id: string): ObjectNames => ({
  podPrefix: `${id}-`,
  claim: `${id}-workspace`,
  secret: `${id}-worker`,
  config: `${id}-config`,
});

// As kube-apiserver's generateName suffixes: no vowels (no words), no look-alike characters.
const ID_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A new pod's id: 8 characters (40 bits), a pod name's suffix and its NetworkPolicy's selector. */
export function newPodId(): string {
  let id = '';
  for (let i = 0; i < 8; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

/** Every managed object of one agent, of any component. */
export const agentSelector = (agent: string): string => `${MANAGED_SELECTOR},${AGENT_LABEL}=${agent}`;

/** Warm-pool slots' objects not yet taken by an agent. */
export const UNCLAIMED_POOL_SELECTOR = `${MANAGED_SELECTOR},${WARM_POOL_LABEL},!${AGENT_LABEL}`;

const SQUAD_GROUP = /^squad:[^/]+\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/;

/**
 * The label value and pod name prefix of a group: the squad's name for the server's squads
 * (`squad:<namespace>/<name>`); any other group key (tests, plugins) is made a valid label.
 */
export function groupLabel(group: string): string {
  const squad = SQUAD_GROUP.exec(group)?.[1];
  if (squad) return squad;
  const hash = createHash('sha256').update(group).digest('hex').slice(0, 8);
  const base = group
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  return `${base || 'group'}-${hash}`;
}

export const groupPodPrefix = (group: string): string => `squad-${groupLabel(group)}-`;

export function labelsFor(component: Component, agent?: string, group?: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [COMPONENT_LABEL]: component,
    ...(agent ? { [AGENT_LABEL]: agent } : {}),
    ...(group ? { [SQUAD_LABEL]: groupLabel(group) } : {}),
  };
}
