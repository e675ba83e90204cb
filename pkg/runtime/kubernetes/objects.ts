// The Kubernetes objects of an agent's worker, as plain values: its Secret (the control-channel
// token and the model-proxy credential), its ConfigMap (its settings), its workspace claim, and
// the pod its container runs in (solo, or one container per member in a squad's pod). Pure
// functions of their inputs, so the shapes are unit-tested without a cluster.

import type {
  V1ConfigMap,
  V1Container,
  V1ObjectMeta,
  V1Role,
  V1RoleBinding,
  V1ServiceAccount,
  V1OwnerReference,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { ObjectRef } from '../../api/meta.js';
import { MODEL_PROXY_CONTAINER } from '../../api/agent.js';
import type { PrestartSettings } from '../../api/worker-protocol.js';
import {
  type Component,
  GROUP_ANNOTATION,
  labelsFor,
  type ObjectNames,
  objectNames,
  POD_ID_LABEL,
  POOL_ROLE_ANNOTATION,
  slotNames,
  UID_ANNOTATION,
  WARM_POOL_LABEL,
  WORKER_STATE_ANNOTATION,
} from './names.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../modelproxy/retry.js';
import type { WorkerTemplate } from './template.js';
import { otelEnv } from '../../observability/tracing.js';

/** Where a worker's volumes are mounted in its container. */
export const WORKSPACE_PATH = '/workspace';
export const SQUAD_PATH = '/squad';
/** Members of one pod share its network namespace: each gets its own health port from here. */
export const HEALTH_PORT_BASE = 8080;

/** The model-proxy sidecar's port on the pod's loopback (the engines' ANTHROPIC_BASE_URL). */
export const MODEL_PROXY_PORT = 8070;
/** Where the sidecar finds the mirrored key and the pod's agents' credentials. */
export const MODEL_KEY_PATH = '/var/run/agentplane/model';
export const MODEL_CREDENTIALS_PATH = '/var/run/agentplane/agents';

export const TOKEN_KEY = 'token';
/** The service account, Role and RoleBinding of managers, one set per namespace with managers. */
export const MANAGER_ACCOUNT = 'agentplane-manager';
export const MODEL_CREDENTIAL_KEY = 'model-credential';
/** The sidecar's report credential: mounted into the model-proxy sidecar only, never the worker. */
export const REPORT_CREDENTIAL_KEY = 'report-credential';

export interface Credentials {
  token: string;
  modelCredential: string;
  /** With a model-proxy sidecar: what its reports to the server carry. */
  reportCredential?: string;
}

/**
 * Whose objects these are: an agent's, or a warm-pool slot's until an agent takes them (then
 * relabelled as the agent's, names unchanged: ./pod-pool.ts).
 */
export interface Holder {
  namespace: string;
  names: ObjectNames;
  labels(component: Component): Record<string, string>;
  /** The agent, named in its ConfigMap; a slot's names none (it learns its agent on `assign`). */
  agent?: string;
}

export const agentHolder = (ref: ObjectRef): Holder => ({
  namespace: ref.namespace,
  names: objectNames(ref.name),
  labels: (c) => labelsFor(c, ref.name),
  agent: ref.name,
});

export const slotHolder = (namespace: string, id: string, template: string): Holder => ({
  namespace,
  names: slotNames(id),
  labels: (c) => ({ ...labelsFor(c), [WARM_POOL_LABEL]: template }),
});

/** The metadata every per-agent object shares: its name, namespace, labels and owner. */
function holderMeta(h: Holder, name: string, component: Component, owner?: V1OwnerReference): V1ObjectMeta {
  return {
    name,
    namespace: h.namespace,
    labels: h.labels(component),
    ...(owner ? { ownerReferences: [owner] } : {}),
  };
}

export function workerSecret(h: Holder, uid: string, creds: Credentials, owner?: V1OwnerReference): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...holderMeta(h, h.names.secret, 'credentials', owner),
      annotations: { [UID_ANNOTATION]: uid, [WORKER_STATE_ANNOTATION]: 'running' },
    },
    type: 'Opaque',
    stringData: {
      [TOKEN_KEY]: creds.token,
      [MODEL_CREDENTIAL_KEY]: creds.modelCredential,
      ...(creds.reportCredential ? { [REPORT_CREDENTIAL_KEY]: creds.reportCredential } : {}),
    },
  };
}

export interface WorkerSettings {
  /** Where the worker dials the control channel. */
  serverUrl: string;
  /** The model proxy, the engine's ANTHROPIC_BASE_URL. */
  modelBaseUrl: string;
}

export function workerConfigMap(h: Holder, settings: WorkerSettings, owner?: V1OwnerReference): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: holderMeta(h, h.names.config, 'config', owner),
    data: {
      AGENTPLANE_SERVER_URL: settings.serverUrl,
      ANTHROPIC_BASE_URL: settings.modelBaseUrl,
      AGENTPLANE_NAMESPACE: h.namespace,
      ...(h.agent ? { AGENTPLANE_AGENT_NAME: h.agent } : {}),
      AGENTPLANE_WORKSPACE: WORKSPACE_PATH,
      // The server's OTEL_* settings but its OTLP headers (docs/tracing.md "Cluster home").
      ...otelEnv(process.env, { headers: false }),
    },
  };
}

export function workspaceClaim(h: Holder, template: WorkerTemplate, owner?: V1OwnerReference): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: holderMeta(h, h.names.claim, 'workspace', owner),
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: template.storage.size } },
      ...(template.storage.storageClassName ? { storageClassName: template.storage.storageClassName } : {}),
    },
  };
}

export interface PodMember {
  /** The container's name: the agent's (a warm-pool slot's is `worker`). */
  name: string;
  template: WorkerTemplate;
  /** Its claim, Secret and ConfigMap; default the agent's (`objectNames(name)`). */
  names?: ObjectNames;
  /** A warm-pool slot: start the engine with these settings before any agent (AGENTPLANE_PRESTART). */
  prestart?: PrestartSettings;
  /** A manager gets the namespace's manager service account (the pod's, shared by a squad). */
  manager?: boolean;
  /** Start idle in a rebuilt squad pod (AGENTPLANE_WAKE_IDLE=true). */
  wakeIdle?: boolean;
}

export interface WorkerPodSpec {
  namespace: string;
  /** Solo: the agent (its pod carries its label). A squad's pod: absent. */
  agent?: string;
  /** The group key (WorkerSpec.group): the pod is the squad's, or beside the squad's. */
  group?: string;
  generateName: string;
  /** The pod's id (names::newPodId): its name is then `generateName` + id, and its label selects it for its NetworkPolicy. */
  podId?: string;
  /** Containers, one per member (a solo pod has one). */
  members: PodMember[];
  /** Other members whose workspaces this pod mounts read-only under /squad: name -> claim. */
  peers?: Map<string, string>;
  /** Labels besides the component's, the agent's and the squad's (a warm-pool slot's). */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  owners?: V1OwnerReference[];
  /** The pod's own model proxy (a native sidecar holding the mirrored key); absent: the server's. */
  modelProxy?: ModelSidecar;
}

/** What the model-proxy sidecar needs to know (docs/kubernetes-runtime.md "Model proxy sidecar"). */
export interface ModelSidecar {
  /** The mirrored model Secret in the pod's namespace (credential-mirror's secretName). */
  secretName: string;
  /** Where it reports usage, retries and failures: the worker listener as pods reach it. */
  serverUrl: string;
  /** The model API when the Secret has no ANTHROPIC_BASE_URL. */
  upstream?: string;
  /** The server's retry settings, as JSON (pkg/modelproxy/retry.ts). */
  retry?: string;
}

/**
 * A worker pod. An agent's own pod never restarts its container (`Never`): a worker that ends is
 * the end of that incarnation, which the runtime reports (a crash, with its exit code) and
 * replaces when the controller asks, counting start failures as for local workers. A squad's
 * pod restarts a crashed member in place (`OnFailure`) so the others keep running, while a member
 * the server revoked (asleep when all sleep, removed from the squad) exits 0 and stays ended. No
 * service-account token, nothing privileged, a read-only root filesystem with /tmp and the
 * workspace writable.
 */
export function workerPod(p: WorkerPodSpec): V1Pod {
  const lead = p.members[0].template;
  const volumes: V1Volume[] = [];
  p.members.forEach((m, i) => {
    volumes.push({ name: `workspace-${i}`, persistentVolumeClaim: { claimName: namesOf(m).claim } });
    volumes.push({ name: `tmp-${i}`, emptyDir: {} });
  });
  const peers = [...(p.peers ?? new Map<string, string>())].filter(([name]) => !p.members.some((m) => m.name === name));
  peers.forEach(([, claim], j) => volumes.push({ name: `peer-${j}`, persistentVolumeClaim: { claimName: claim, readOnly: true } }));
  if (p.modelProxy) volumes.push(...modelProxyVolumes(p.modelProxy, p.members));
  // Each member sees every member's workspace under /squad/<name>, read-only (its own included).
  const squadMounts: V1VolumeMount[] = p.group
    ? [
        ...p.members.map((m, i) => ({ name: `workspace-${i}`, mountPath: `${SQUAD_PATH}/${m.name}`, readOnly: true })),
        ...peers.map(([name], j) => ({ name: `peer-${j}`, mountPath: `${SQUAD_PATH}/${name}`, readOnly: true })),
      ]
    : [];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(p.podId ? { name: `${p.generateName}${p.podId}` } : { generateName: p.generateName }),
      namespace: p.namespace,
      labels: { ...labelsFor('worker', p.agent, p.group), ...p.labels, ...(p.podId ? { [POD_ID_LABEL]: p.podId } : {}) },
      ...(p.group || p.annotations ? { annotations: { ...(p.group ? { [GROUP_ANNOTATION]: p.group } : {}), ...p.annotations } } : {}),
      ...(p.owners?.length ? { ownerReferences: p.owners } : {}),
    },
    spec: {
      // Only a squad's shared pod restarts a member; an agent's own pod (or a warm-pool slot's,
      // which becomes one) ends with its worker.
      restartPolicy: p.group && !p.agent ? 'OnFailure' : 'Never',
      // Only a manager talks to the API (to orchestrate sub-agents), with a token for its own
      // namespace; every other worker has no Kubernetes credentials at all.
      ...(p.members.some((m) => m.manager)
        ? { serviceAccountName: MANAGER_ACCOUNT, automountServiceAccountToken: true }
        : { automountServiceAccountToken: false }),
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: lead.runAsUser,
        runAsGroup: lead.runAsGroup,
        fsGroup: lead.runAsGroup,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      ...(lead.nodeSelector ? { nodeSelector: lead.nodeSelector } : {}),
      ...(lead.tolerations ? { tolerations: lead.tolerations } : {}),
      // Started first and kept running beside the workers; no shared process namespace, so
      // the workers' tools cannot see its environment or open files.
      ...(p.modelProxy ? { initContainers: [modelProxyContainer(p.modelProxy, p.namespace, p.members)] } : {}),
      containers: p.members.map((m, i) => workerContainer(m, i, squadMounts, p.group !== undefined)),
      volumes,
    },
  };
}

const namesOf = (m: PodMember): ObjectNames => m.names ?? objectNames(m.name);

/** The container of a warm-pool slot's pod (the agent's name is not known when it is made). */
export const SLOT_CONTAINER = 'worker';

/**
 * A warm-pool slot's pod: the solo pod of an agent not yet created, in the namespace and of the
 * template and role the pool is for, its engine started with the agents' defaults. An agent
 * that takes it relabels it (./pod-pool.ts); nothing in its spec names an agent.
 */
export function slotPodSpec(h: Holder, templateName: string, template: WorkerTemplate, prestart: PrestartSettings): WorkerPodSpec {
  return {
    namespace: h.namespace,
    generateName: h.names.podPrefix,
    members: [{ name: SLOT_CONTAINER, template, names: h.names, prestart, ...(prestart.role === 'manager' ? { manager: true } : {}) }],
    labels: { [WARM_POOL_LABEL]: templateName },
    annotations: { [POOL_ROLE_ANNOTATION]: prestart.role },
  };
}

function workerContainer(m: PodMember, i: number, squadMounts: V1VolumeMount[], inSquad: boolean): V1Container {
  const port = HEALTH_PORT_BASE + i;
  const { secret, config } = namesOf(m);
  return {
    name: m.name,
    image: m.template.image,
    imagePullPolicy: m.template.imagePullPolicy,
    envFrom: [{ configMapRef: { name: config } }],
    env: [
      { name: 'AGENTPLANE_AGENT_TOKEN', valueFrom: { secretKeyRef: { name: secret, key: TOKEN_KEY } } },
      { name: 'ANTHROPIC_API_KEY', valueFrom: { secretKeyRef: { name: secret, key: MODEL_CREDENTIAL_KEY } } },
      { name: 'AGENTPLANE_HEALTH_PORT', value: String(port) },
      { name: 'TMPDIR', value: '/tmp' },
      ...(inSquad ? [{ name: 'AGENTPLANE_SQUAD_DIR', value: SQUAD_PATH }] : []),
      ...(m.wakeIdle ? [{ name: 'AGENTPLANE_WAKE_IDLE', value: 'true' }] : []),
      ...(m.prestart ? [{ name: 'AGENTPLANE_PRESTART', value: JSON.stringify(m.prestart) }] : []),
    ],
    ports: [{ name: `health-${i}`, containerPort: port, protocol: 'TCP' }],
    readinessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 5, failureThreshold: 1 },
    ...(m.template.resources ? { resources: m.template.resources } : {}),
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: m.template.runAsUser,
      runAsGroup: m.template.runAsGroup,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [{ name: `workspace-${i}`, mountPath: WORKSPACE_PATH }, { name: `tmp-${i}`, mountPath: '/tmp' }, ...squadMounts],
  };
}

/**
 * The mirrored key (the whole Secret: ANTHROPIC_API_KEY, optionally ANTHROPIC_BASE_URL; not
 * optional, so a pod waits for the mirror rather than start without a key) and each member's
 * model and report credentials (only those keys of its worker Secret; optional, so the runtime
 * can take them back from a running pod by removing the keys). The worker containers get the
 * model credential as an environment variable and never the report credential.
 */
function modelProxyVolumes(s: ModelSidecar, members: PodMember[]): V1Volume[] {
  return [
    { name: 'model-key', secret: { secretName: s.secretName, defaultMode: 0o440 } },
    ...members.map((m, i) => ({
      name: `model-credential-${i}`,
      secret: {
        secretName: namesOf(m).secret,
        items: [
          { key: MODEL_CREDENTIAL_KEY, path: MODEL_CREDENTIAL_KEY },
          { key: REPORT_CREDENTIAL_KEY, path: REPORT_CREDENTIAL_KEY },
        ],
        defaultMode: 0o440,
        optional: true,
      },
    })),
  ];
}

/**
 * The sidecar's retry settings: the server's, with the longest task deadline of its members'
 * templates (`modelTaskDeadlineSeconds`, else the server's). The sidecar bounds each request by
 * it; the server ends each task at its own template's deadline when a retry report would pass
 * it (pkg/modelproxy/reports.ts).
 */
function sidecarRetry(retry: string | undefined, members: PodMember[]): string | undefined {
  if (members.every((m) => m.template.modelTaskDeadlineSeconds === undefined)) return retry;
  const policy = (retry ? JSON.parse(retry) : {}) as Partial<RetryPolicy>;
  const server = policy.taskDeadlineMs ?? DEFAULT_RETRY_POLICY.taskDeadlineMs;
  const longest = Math.max(...members.map((m) => (m.template.modelTaskDeadlineSeconds === undefined ? server : m.template.modelTaskDeadlineSeconds * 1000)));
  return JSON.stringify({ ...policy, taskDeadlineMs: longest });
}

/** The native sidecar: the worker image's `model-proxy` entry point, the only mount of the key. */
function modelProxyContainer(s: ModelSidecar, namespace: string, members: PodMember[]): V1Container {
  const t = members[0].template;
  const retry = sidecarRetry(s.retry, members);
  return {
    name: MODEL_PROXY_CONTAINER,
    image: t.image,
    imagePullPolicy: t.imagePullPolicy,
    restartPolicy: 'Always',
    args: ['model-proxy'],
    env: [
      { name: 'AGENTPLANE_NAMESPACE', value: namespace },
      { name: 'AGENTPLANE_SERVER_URL', value: s.serverUrl },
      { name: 'AGENTPLANE_MODEL_PROXY_PORT', value: String(MODEL_PROXY_PORT) },
      { name: 'AGENTPLANE_MODEL_KEY_DIR', value: MODEL_KEY_PATH },
      { name: 'AGENTPLANE_MODEL_CREDENTIALS_DIR', value: MODEL_CREDENTIALS_PATH },
      ...(s.upstream ? [{ name: 'AGENTPLANE_MODEL_UPSTREAM', value: s.upstream }] : []),
      ...(retry ? [{ name: 'AGENTPLANE_MODEL_RETRY', value: retry }] : []),
    ],
    // Its measured resident memory is in docs/kubernetes-runtime.md; the limit leaves room for
    // many concurrent streams.
    resources: { requests: { cpu: '10m', memory: '80Mi' }, limits: { memory: '256Mi' } },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: t.runAsUser,
      runAsGroup: t.runAsGroup,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [
      { name: 'model-key', mountPath: MODEL_KEY_PATH, readOnly: true },
      ...members.map((m, i) => ({ name: `model-credential-${i}`, mountPath: `${MODEL_CREDENTIALS_PATH}/${m.name}`, readOnly: true })),
    ],
  };
}

/**
 * What a manager may do through the API: manage agents, squads and connectors of its own
 * namespace (agentplane.io), and nothing else: no Secrets, no pods, no other namespace.
 */
export function managerAccess(namespace: string): [V1ServiceAccount, V1Role, V1RoleBinding] {
  const metadata = { name: MANAGER_ACCOUNT, namespace, labels: labelsFor('manager-access') };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata,
      rules: [
        { apiGroups: ['agentplane.io'], resources: ['agents', 'squads', 'connectors'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
        {
          apiGroups: ['agentplane.io'],
          resources: ['agents/status', 'agents/events', 'agents/log', 'squads/status', 'connectors/status'],
          verbs: ['get', 'list', 'watch'],
        },
        { apiGroups: ['agentplane.io'], resources: ['agents/cancel'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: MANAGER_ACCOUNT },
      subjects: [{ kind: 'ServiceAccount', name: MANAGER_ACCOUNT, namespace }],
    },
  ];
}
