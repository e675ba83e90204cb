// The Agent resource: its stored shape, its REST request/response shapes and their JSON Schemas.
// The schemas here are the single source for validation (ajv) and for the OpenAPI documents.

import { isDeepStrictEqual } from 'node:util';
import { type Approval, type ApprovalPolicy, approvalPolicySchema, approvalSchema } from './approval.js';
import { type AgentBudget, type AgentSpend, agentBudgetSchema, agentSpendSchema } from './budget.js';
import { fromCheckpointSchema } from './checkpoint.js';
import { type Condition, conditionSchema, findCondition, isTrue } from './condition.js';
import { type AgentAttachments, attachmentFields, attachmentsOf, connectorListSchema, nameSchema, namespaceSchema } from './agent-fields.js';
import type { Resource } from './meta.js';

export { nameSchema, namespaceSchema };

export const AGENT_KIND = 'Agent';
export const DEFAULT_MODEL = 'claude-sonnet-4-5';
export const DEFAULT_TEMPLATE = 'default';
/** The model-proxy sidecar's container name in agent and squad pods. */
export const MODEL_PROXY_CONTAINER = 'agentplane-model-proxy';
/**
 * Agent names taken by agentplane's own containers in an agent's pod (a squad pod has a container
 * per member, named for the member): refused in both homes, so a name works wherever it is used.
 */
export const RESERVED_AGENT_NAMES: readonly string[] = [MODEL_PROXY_CONTAINER];

/**
 * `templateRef` names a pod template by a DNS-1123 subdomain name (a Kubernetes PodTemplate name).
 * Which templates exist is the TemplateExists admission plugin's business.
 */
export const TEMPLATE_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const TEMPLATE_NAME_MAX_LENGTH = 253;
export const TEMPLATE_NAME_RULE =
  'a DNS-1123 name (lowercase letters, digits, hyphens and dots, each dot-separated part starting and ending with a letter or digit, at most 253 characters)';

/**
 * `model`: one token of printable characters: no whitespace, control or invisible format
 * characters, nor a lone surrogate (half a UTF-16 pair, which no encoding on the wire can carry).
 */
export const MODEL_PATTERN = '^[^\\s\\p{Cc}\\p{Cf}\\p{Cs}]+$';
/**
 * MODEL_PATTERN for readers of the published OpenAPI document whose regex dialect has no Unicode
 * properties (Python's, schemathesis'): the controls and the common invisible format characters
 * spelled out. It admits a few rare format characters the server still refuses.
 */
export const MODEL_PATTERN_PORTABLE = '^[^\\s\\x00-\\x1f\\x7f-\\x9f\\xad\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ud800-\\udfff]+$';
export const MODEL_MAX_LENGTH = 256;
export const MODEL_RULE = `a model identifier without whitespace or control characters, at most 256 characters, such as "${DEFAULT_MODEL}" (the default)`;

/**
 * The longest `instructions` (a task, or a follow-up sent by PATCH) and `systemPrompt`, in
 * characters (UTF-16 code units, as JSON Schema counts them). Longer ones are refused with
 * 400 Invalid (REST) / 422 Invalid (aggregated API) naming the field: "must be at most N
 * characters". docs/decisions.md "Limits".
 */
export const INSTRUCTIONS_MAX_LENGTH = 262144;
export const SYSTEM_PROMPT_MAX_LENGTH = 65536;

export type Role = 'manager' | 'worker';
export const ROLES: readonly Role[] = ['manager', 'worker'];

/** `""` means always on. */
export type Lifecycle = '' | 'Sleep' | 'Wake' | 'AutoDelete';
export const LIFECYCLES: readonly Lifecycle[] = ['', 'Sleep', 'Wake', 'AutoDelete'];

export type AgentPhase = 'Pending' | 'Queued' | 'Running' | 'Paused' | 'Sleeping' | 'Failed';
export const AGENT_PHASES: readonly AgentPhase[] = ['Pending', 'Queued', 'Running', 'Paused', 'Sleeping', 'Failed'];
/** The order among queued agents of a namespace: higher first, then first come (docs/admission.md). */
export const PRIORITY_MIN = -1000;
export const PRIORITY_MAX = 1000;
export type TaskStatus = '' | 'InProgress' | 'Complete' | 'Error' | 'Cancelled';

export interface AgentSpec extends AgentAttachments {
  instructions: string;
  systemPrompt?: string;
  model: string;
  templateRef: string;
  role: Role;
  connectors: string[];
  lifecycle: Lifecycle;
  /** Incremented each time a task is assigned; the controller runs task N once. */
  task: number;
  /** Where the agent's work stands in its namespace's line when it must wait: higher first; default 0. */
  priority?: number;
  /** Tool calls that wait for a person (docs/approvals.md). */
  approval?: ApprovalPolicy;
  /** Enforced by the model proxy before every model request (docs/budgets.md). */
  budget?: AgentBudget;
  /** "<agent>/<checkpoint>": the workspace and conversation it started from (set on create only). */
  fromCheckpoint?: string;
}

export interface AgentStatus {
  /** Derived from the conditions and the task (agentPhase); never written on its own. */
  status: AgentPhase;
  taskStatus: TaskStatus;
  lastTaskMessage: string;
  /** The last task number handed to the worker (or settled without one). */
  observedTask: number;
  /** Engine session of the last task, resumed by the next one. */
  sessionId?: string;
  /** Why the agent is Failed (derived, as `status`). */
  message?: string;
  /** WorkerReady, Queued and Restored (owned by the agent controller) and Asleep (owned by sleep-wake). */
  conditions?: Condition[];
  /** Set on reads, never stored: the agent's place in its namespace's line while Queued. */
  queue?: { position: number };
  /** The running task's tool-call approvals, pending and decided; cleared when a task ends. */
  approvals?: Approval[];
  /** Model spend of the agent's ended tasks (docs/budgets.md). */
  spend?: AgentSpend;
}

export type Agent = Resource<AgentSpec, AgentStatus>;

/** The agent's worker is connected and takes tasks. False reasons: Starting, Stopped, StartFailed, Released. */
export const WORKER_READY = 'WorkerReady';
/**
 * WorkerReady's reason while an idle agent holds no process (its worker was released after the
 * idle timeout); its next task starts one. The agent stays Running: it takes tasks as before.
 */
export const WORKER_RELEASED = 'Released';
/** The agent was put to sleep (lifecycle Sleep, idle). */
export const ASLEEP = 'Asleep';
/**
 * True while the agent's work waits for admission (a cap or the start rate, docs/admission.md);
 * its lastTransitionTime is when it lined up, which keeps its place across restarts.
 */
export const QUEUED = 'Queued';
/** True while a budget holds the agent's task (onExceed Pause; owned by the budget guard). */
export const PAUSED = 'Paused';

/**
 * Whether an update of the agent only moved `lastTaskMessage` (a streaming task's status write):
 * nothing a controller decides on changed, so watches pass it over instead of reconciling the
 * agent, its squad and its namespace once per status write.
 */
export function onlyMessageMoved(old: Agent, obj: Agent): boolean {
  if (old.status.lastTaskMessage === obj.status.lastTaskMessage) return false;
  const { resourceVersion: _r1, managedFields: _m1, ...oldMeta } = old.metadata;
  const { resourceVersion: _r2, managedFields: _m2, ...meta } = obj.metadata;
  return (
    isDeepStrictEqual({ ...old.status, lastTaskMessage: '' }, { ...obj.status, lastTaskMessage: '' }) &&
    isDeepStrictEqual(old.spec, obj.spec) &&
    isDeepStrictEqual(oldMeta, meta)
  );
}

/**
 * The one rule for an agent's `status`: Sleeping while asleep with no task assigned, Failed when
 * its worker could not start and no new task asks to retry, Running while its worker is ready
 * (or was released while idle, to start again with the next task), else Pending. A task sent to
 * a sleeping agent shows it awake at once.
 */
export function agentPhase(a: Agent): AgentPhase {
  const ready = findCondition(a.status.conditions, WORKER_READY);
  const retry = a.spec.task > a.status.observedTask;
  if (isTrue(a.status.conditions, ASLEEP) && !isBusy(a)) return 'Sleeping';
  if (ready?.status === 'False' && ready.reason === 'StartFailed' && !retry) return 'Failed';
  if (isTrue(a.status.conditions, QUEUED) && isBusy(a)) return 'Queued';
  if (isTrue(a.status.conditions, PAUSED) && isBusy(a)) return 'Paused';
  if (ready?.status === 'True' || ready?.reason === WORKER_RELEASED) return 'Running';
  return 'Pending';
}

/** Sets the derived fields (`status`, `message`) from the rest of the object. */
export function deriveAgentStatus(a: Agent): void {
  a.status.status = agentPhase(a);
  const ready = findCondition(a.status.conditions, WORKER_READY);
  if (a.status.status === 'Failed' && ready) a.status.message = ready.message;
  else delete a.status.message;
}

/** POST /api/v1/agents body (spec 2.1). */
export interface AgentTaskRequest extends AgentAttachments {
  name: string;
  instructions: string;
  systemPrompt?: string;
  model?: string;
  templateRef?: string;
  role?: Role;
  connectors?: string[];
  namespace?: string;
  /**
   * The lifecycle from the task on, as a PATCH of `lifecycle` right after the create (or the
   * assignment) would set it: "Sleep" sleeps once the task ends, "AutoDelete" deletes after it.
   */
  lifecycle?: Lifecycle;
  priority?: number;
  approval?: ApprovalPolicy;
  budget?: AgentBudget;
  fromCheckpoint?: string;
}

/**
 * PATCH /api/v1/agents/:name body (spec 4.1). `model` and `systemPrompt` apply from the next
 * task; `instructions` steers the running task, or starts one on an idle agent as POST does.
 */
export interface AgentPatchRequest extends AgentAttachments {
  connectors?: string[];
  lifecycle?: Lifecycle;
  model?: string;
  systemPrompt?: string;
  instructions?: string;
  priority?: number;
  /** The approval policy from the next task on; `null` removes it. */
  approval?: ApprovalPolicy | null;
  /** null removes the budget. */
  budget?: AgentBudget | null;
}

/** AgentResponse (spec 2.2). */
export interface AgentResponse extends AgentAttachments {
  name: string;
  namespace: string;
  model: string;
  status: AgentPhase;
  taskStatus: TaskStatus;
  lastTaskMessage: string;
  createdAt: string;
  role: Role;
  templateRef: string;
  connectors: string[];
  lifecycle: Lifecycle;
  priority: number;
  /** While Queued: the agent's place in its namespace's line (1 goes next). */
  queuePosition?: number;
  approval?: ApprovalPolicy;
  /** The running task's tool-call approvals (pending and decided). */
  approvals?: Approval[];
  budget?: AgentBudget;
  spend?: AgentSpend;
  /** The checkpoint it started from. */
  fromCheckpoint?: string;
}

const lifecycleSchema = {
  type: 'string',
  enum: LIFECYCLES,
  description: '"Sleep", "Wake", "AutoDelete", or "" for always on',
} as const;

const agentFields = {
  instructions: {
    type: 'string',
    minLength: 1,
    maxLength: INSTRUCTIONS_MAX_LENGTH,
    description: `the task prompt, at most ${INSTRUCTIONS_MAX_LENGTH} characters`,
  },
  systemPrompt: {
    type: 'string',
    maxLength: SYSTEM_PROMPT_MAX_LENGTH,
    description: `placed before the built-in role prompt, at most ${SYSTEM_PROMPT_MAX_LENGTH} characters`,
  },
  // A string with a pattern states its whole rule in `description`: the validation message is
  // "must be <description>".
  model: {
    type: 'string',
    minLength: 1,
    maxLength: MODEL_MAX_LENGTH,
    pattern: MODEL_PATTERN,
    description: MODEL_RULE,
  },
  templateRef: {
    type: 'string',
    minLength: 1,
    maxLength: TEMPLATE_NAME_MAX_LENGTH,
    pattern: TEMPLATE_NAME_PATTERN,
    description: `${TEMPLATE_NAME_RULE} of a pod template: "${DEFAULT_TEMPLATE}" (the default) or one the server is configured with`,
  },
  role: { type: 'string', enum: ROLES, description: 'manager (may orchestrate sub-agents) or worker; default manager' },
  connectors: connectorListSchema,
  ...attachmentFields,
  priority: {
    type: 'integer',
    minimum: PRIORITY_MIN,
    maximum: PRIORITY_MAX,
    description: `an integer from ${PRIORITY_MIN} to ${PRIORITY_MAX}, default 0: when the agent's work waits for a cap, higher goes first within its namespace`,
  },
  approval: approvalPolicySchema,
  budget: agentBudgetSchema,
} as const;

export const agentTaskRequestSchema = {
  $id: 'AgentTaskRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'instructions'],
  properties: {
    name: nameSchema,
    namespace: namespaceSchema,
    ...agentFields,
    fromCheckpoint: fromCheckpointSchema,
    lifecycle: {
      ...lifecycleSchema,
      description: `${lifecycleSchema.description}: set as a PATCH of lifecycle right after the create (or assignment) would, so "Sleep" sleeps once the task ends`,
    },
  },
} as const;

export const agentPatchRequestSchema = {
  $id: 'AgentPatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    connectors: connectorListSchema,
    ...attachmentFields,
    lifecycle: lifecycleSchema,
    model: agentFields.model,
    systemPrompt: agentFields.systemPrompt,
    priority: agentFields.priority,
    approval: { anyOf: [approvalPolicySchema, { type: 'null' }], description: 'the approval policy from the next task on; null removes it' },
    budget: { ...agentBudgetSchema, nullable: true, description: `${agentBudgetSchema.description}; null removes it` },
    instructions: {
      ...agentFields.instructions,
      description: 'a follow-up for the running task, or a new task when the agent is idle',
    },
  },
} as const;

export const agentSpecSchema = {
  $id: 'AgentSpec',
  type: 'object',
  additionalProperties: false,
  required: ['instructions', 'model', 'templateRef', 'role', 'connectors', 'lifecycle', 'task'],
  properties: {
    ...agentFields,
    fromCheckpoint: fromCheckpointSchema,
    lifecycle: lifecycleSchema,
    task: { type: 'integer', minimum: 0, description: 'task counter; incremented on each assignment' },
  },
} as const;

/** The agent's status (read-only: written by the controller, ignored on writes of the object). */
export const agentStatusSchema = {
  $id: 'AgentStatus',
  type: 'object',
  required: ['status', 'taskStatus', 'lastTaskMessage', 'observedTask'],
  properties: {
    status: {
      type: 'string',
      enum: AGENT_PHASES,
      description:
        'Pending until the worker is connected, then Running; Queued while its work waits for a cap (docs/admission.md); Paused while a budget holds its task (docs/budgets.md); Sleeping when asleep; Failed when the worker cannot start',
    },
    taskStatus: {
      type: 'string',
      enum: ['', 'InProgress', 'Complete', 'Error', 'Cancelled'],
      description: 'status of the current task; "" when the agent never ran one',
    },
    lastTaskMessage: { type: 'string', description: 'latest activity line of the current task' },
    observedTask: { type: 'integer', minimum: 0, description: 'the last task number handed to the worker (or settled without one)' },
    sessionId: { type: 'string', description: 'engine session of the last task, resumed by the next one' },
    message: { type: 'string', description: 'why the agent is Failed' },
    conditions: {
      type: 'array',
      description:
        'WorkerReady (the worker is connected), Queued (its work waits for a cap), Paused (a budget holds its task), Restored (started from a checkpoint) and Asleep; `status` is derived from WorkerReady, Queued, Paused and Asleep',
      items: conditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
    queue: {
      type: 'object',
      required: ['position'],
      properties: { position: { type: 'integer', minimum: 1, description: "the agent's place in its namespace's line (1 goes next)" } },
      description: 'set on reads while the agent is Queued; never stored',
    },
    approvals: { type: 'array', items: approvalSchema, description: "the running task's tool-call approvals, pending and decided" },
    spend: agentSpendSchema,
  },
} as const;

export const agentResponseSchema = {
  $id: 'AgentResponse',
  type: 'object',
  required: ['name', 'namespace', 'model', 'status', 'createdAt'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    model: { type: 'string' },
    status: { type: 'string', enum: AGENT_PHASES },
    taskStatus: { type: 'string', enum: ['', 'InProgress', 'Complete', 'Error', 'Cancelled'] },
    lastTaskMessage: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    role: { type: 'string', enum: ROLES },
    templateRef: { type: 'string' },
    connectors: { type: 'array', items: { type: 'string' } },
    ...attachmentFields,
    lifecycle: { type: 'string', enum: LIFECYCLES },
    priority: { type: 'integer' },
    queuePosition: { type: 'integer', minimum: 1, description: "while Queued: the agent's place in its namespace's line" },
    approval: approvalPolicySchema,
    approvals: { type: 'array', items: approvalSchema },
    budget: agentBudgetSchema,
    spend: agentSpendSchema,
    fromCheckpoint: { type: 'string', description: 'the checkpoint it started from, "<agent>/<checkpoint>"' },
  },
} as const;

export function toAgentResponse(a: Agent): AgentResponse {
  return {
    name: a.metadata.name,
    namespace: a.metadata.namespace,
    model: a.spec.model,
    status: a.status.status,
    taskStatus: a.status.taskStatus,
    lastTaskMessage: a.status.lastTaskMessage,
    createdAt: a.metadata.creationTimestamp,
    role: a.spec.role,
    templateRef: a.spec.templateRef,
    connectors: a.spec.connectors,
    ...attachmentsOf(a.spec),
    lifecycle: a.spec.lifecycle,
    priority: a.spec.priority ?? 0,
    ...(a.status.queue ? { queuePosition: a.status.queue.position } : {}),
    ...(a.spec.approval ? { approval: a.spec.approval } : {}),
    ...(a.status.approvals?.length ? { approvals: a.status.approvals } : {}),
    ...(a.spec.budget ? { budget: a.spec.budget } : {}),
    ...(a.status.spend ? { spend: a.status.spend } : {}),
    ...(a.spec.fromCheckpoint ? { fromCheckpoint: a.spec.fromCheckpoint } : {}),
  };
}

/** A new agent from a create request; the strategy fills in defaults and the initial status. */
export function agentFromRequest(req: Omit<AgentTaskRequest, 'namespace'>, namespace: string): Agent {
  return {
    apiVersion: '',
    kind: AGENT_KIND,
    metadata: { name: req.name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    spec: {
      instructions: req.instructions,
      ...(req.systemPrompt !== undefined ? { systemPrompt: req.systemPrompt } : {}),
      model: req.model ?? '',
      templateRef: req.templateRef ?? '',
      role: req.role ?? 'manager',
      connectors: req.connectors ?? [],
      ...attachmentsOf(req),
      lifecycle: req.lifecycle ?? '',
      task: 1,
      ...(req.priority ? { priority: req.priority } : {}),
      ...(req.approval ? { approval: req.approval } : {}),
      ...(req.budget ? { budget: req.budget } : {}),
      ...(req.fromCheckpoint ? { fromCheckpoint: req.fromCheckpoint } : {}),
    },
    status: { status: 'Pending', taskStatus: '', lastTaskMessage: '', observedTask: 0 },
  };
}

/** A task is assigned and not yet settled. */
export const isBusy = (a: Agent): boolean => a.status.taskStatus === 'InProgress' || a.spec.task > a.status.observedTask;
