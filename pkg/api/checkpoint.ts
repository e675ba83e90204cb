// The AgentCheckpoint resource: an agent's workspace and engine session copied at one moment, from
// which new agents start (`fromCheckpoint` on create) with the same files and conversation and an
// identity of their own. A checkpoint belongs to its agent: its object name is
// "<agent>.<checkpoint>" (agent names are DNS labels, so the first dot splits it), which lets two
// agents each have a "before-refactor" and reads as such in `kubectl get agentcheckpoints`.
// Schemas here feed ajv and the OpenAPI document (docs/checkpoints.md).

import { NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, type Resource } from './meta.js';

export const CHECKPOINT_KIND = 'AgentCheckpoint';

/** Pending until the copy is taken (it waits for a running task to end), then Ready or Failed. */
export type CheckpointPhase = 'Pending' | 'Ready' | 'Failed';
export const CHECKPOINT_PHASES: readonly CheckpointPhase[] = ['Pending', 'Ready', 'Failed'];

export interface CheckpointSpec {
  /** The agent whose workspace and session it copies (in the checkpoint's namespace). */
  agent: string;
  /**
   * A member's share of a squad checkpoint: the checkpoints of the squad's members that have the
   * same name are taken at one moment, once each member has one.
   */
  squad?: string;
}

export interface CheckpointStatus {
  phase: CheckpointPhase;
  /** When the copy was taken. */
  takenAt?: string;
  /** The last task the copy includes (0: none had run). */
  task?: number;
  /** Taken while `task` ran, at a step boundary: the copy holds the task up to that step. */
  duringTask?: boolean;
  /** The engine session a fork resumes: the conversation so far. */
  sessionId?: string;
  /** Size of the copy. */
  bytes?: number;
  /** Why it is Pending or Failed. */
  message?: string;
}

export type AgentCheckpoint = Resource<CheckpointSpec, CheckpointStatus>;

/** The object name of the agent's checkpoint `name`. */
export const checkpointObjectName = (agent: string, name: string): string => `${agent}.${name}`;

/** The checkpoint's own name: what follows the agent's name in its object name. */
export const checkpointShortName = (c: AgentCheckpoint): string => c.metadata.name.slice(c.spec.agent.length + 1);

/** `fromCheckpoint`: "<agent>/<checkpoint>" in the new agent's namespace. */
export const FROM_CHECKPOINT_PATTERN = `^${NAME_PATTERN.slice(1, -1)}/${NAME_PATTERN.slice(1, -1)}$`;
export const FROM_CHECKPOINT_RULE = `"<agent>/<checkpoint>", each ${NAME_RULE}`;

/** The checkpoint a `fromCheckpoint` value names, as an object name; undefined when malformed. */
export function fromCheckpointObjectName(value: string): string | undefined {
  if (!new RegExp(FROM_CHECKPOINT_PATTERN).test(value)) return undefined;
  const [agent, name] = value.split('/') as [string, string];
  return checkpointObjectName(agent, name);
}

export const fromCheckpointSchema = {
  type: 'string',
  maxLength: 2 * NAME_MAX_LENGTH + 1,
  pattern: FROM_CHECKPOINT_PATTERN,
  description: `${FROM_CHECKPOINT_RULE}: the new agent starts with a copy of that checkpoint's workspace and conversation; set on create only`,
} as const;

/** POST /api/v1/squads/:name/checkpoints answer: one checkpoint per member. */
export interface SquadCheckpointResponse {
  squad: string;
  name: string;
  namespace: string;
  checkpoints: CheckpointResponse[];
}

/** POST /api/v1/agents/:name/checkpoints (and /squads/:name/checkpoints) body. */
export interface CheckpointCreateRequest {
  name: string;
}

/** A checkpoint as the REST mirror shows it. */
export interface CheckpointResponse {
  name: string;
  agent: string;
  namespace: string;
  /** The squad whose members' checkpoints of this name were taken together. */
  squad: string | null;
  phase: CheckpointPhase;
  takenAt: string | null;
  task: number | null;
  /** Taken while `task` ran, between two of its steps. */
  duringTask: boolean;
  bytes: number | null;
  message: string;
  createdAt: string;
  /** What `fromCheckpoint` on a new agent names to start from it. */
  fromCheckpoint: string;
}

export function toCheckpointResponse(c: AgentCheckpoint): CheckpointResponse {
  return {
    name: checkpointShortName(c),
    agent: c.spec.agent,
    namespace: c.metadata.namespace,
    squad: c.spec.squad ?? null,
    phase: c.status.phase,
    takenAt: c.status.takenAt ?? null,
    task: c.status.task ?? null,
    duringTask: c.status.duringTask === true,
    bytes: c.status.bytes ?? null,
    message: c.status.message ?? '',
    createdAt: c.metadata.creationTimestamp,
    fromCheckpoint: `${c.spec.agent}/${checkpointShortName(c)}`,
  };
}

const shortName = { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH, pattern: NAME_PATTERN, description: NAME_RULE } as const;

export const checkpointCreateRequestSchema = {
  $id: 'CheckpointCreateRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { ...shortName, description: `the checkpoint's name among the agent's checkpoints: ${NAME_RULE}` } },
} as const;

export const checkpointSpecSchema = {
  $id: 'AgentCheckpointSpec',
  type: 'object',
  additionalProperties: false,
  required: ['agent'],
  properties: {
    agent: { ...shortName, description: `the agent whose workspace and session it copies; the object's name is "<agent>.<checkpoint>"` },
    squad: {
      ...shortName,
      description: "a member's share of a squad checkpoint: the squad's members' checkpoints of this name are taken at one moment, once each member has one",
    },
  },
} as const;

export const checkpointStatusSchema = {
  $id: 'AgentCheckpointStatus',
  type: 'object',
  required: ['phase'],
  properties: {
    phase: { type: 'string', enum: CHECKPOINT_PHASES, description: 'Pending until taken (after a running task ends), then Ready or Failed' },
    takenAt: { type: 'string', format: 'date-time', description: 'when the copy was taken' },
    task: { type: 'integer', minimum: 0, description: 'the last task the copy includes' },
    duringTask: { type: 'boolean', description: 'taken while that task ran, between two of its steps: the copy holds the task up to there' },
    sessionId: { type: 'string', description: 'the engine session a new agent started from it resumes' },
    bytes: { type: 'integer', minimum: 0, description: 'size of the copy' },
    message: { type: 'string', description: 'why it is Pending or Failed' },
  },
} as const;

export const checkpointResponseSchema = {
  $id: 'CheckpointResponse',
  type: 'object',
  required: ['name', 'agent', 'namespace', 'phase', 'createdAt', 'fromCheckpoint'],
  properties: {
    name: { type: 'string' },
    agent: { type: 'string' },
    namespace: { type: 'string' },
    squad: { type: ['string', 'null'], description: "the squad whose members' checkpoints of this name were taken together" },
    phase: { type: 'string', enum: CHECKPOINT_PHASES },
    takenAt: { type: ['string', 'null'], format: 'date-time' },
    task: { type: ['integer', 'null'] },
    duringTask: { type: 'boolean', description: 'taken while that task ran, between two of its steps' },
    bytes: { type: ['integer', 'null'] },
    message: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    fromCheckpoint: { type: 'string', description: 'what a new agent names in fromCheckpoint to start from it' },
  },
} as const;
