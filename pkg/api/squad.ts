// The Squad resource: two or more agents sharing one pod (a process group in the local
// runtime) that sleep and wake together. Schemas here feed ajv and the OpenAPI document.

import { type AgentTaskRequest, agentTaskRequestSchema, nameSchema, namespaceSchema } from './agent.js';
import type { Resource } from './meta.js';

export const SQUAD_KIND = 'Squad';
export const DEFAULT_ORPHAN_TTL = '10m';

export type SquadPhase = 'Pending' | 'Running' | 'Sleeping' | 'Orphaned';

/** Exactly one of `ref` (an existing, sleeping agent) or `name` + `spec` (a new agent). */
export type SquadMember = { ref: { name: string; namespace?: string } } | { name: string; spec: AgentMemberSpec };

/** An embedded agent definition: the agent create fields without name and namespace. */
export type AgentMemberSpec = Omit<AgentTaskRequest, 'name' | 'namespace' | 'lifecycle'>;

export interface SquadSpec {
  members: SquadMember[];
  orphanTTL: string;
  breakUp: boolean;
}

export interface SquadStatus {
  phase: SquadPhase;
  orphanedSince?: string;
  message?: string;
}

export type Squad = Resource<SquadSpec, SquadStatus>;

export interface SquadCreateRequest {
  name: string;
  namespace?: string;
  members: SquadMember[];
  orphanTTL?: string;
}

export interface SquadMemberResponse {
  name: string;
  phase: string;
  taskStatus: string;
  /** The member's worker is connected (its WorkerReady condition). */
  ready: boolean;
}

export interface SquadResponse {
  name: string;
  namespace: string;
  phase: SquadPhase;
  members: SquadMemberResponse[];
  orphanTTL: string;
  orphanedSince: string | null;
  breakUpRequested: boolean;
  createdAt: string;
}

/** Go-style durations as Kubernetes users write them: 30s, 10m, 1h30m. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

// A member's sleep is its squad's business (members sleep and wake together): no lifecycle here.
const { name: _n, namespace: _ns, lifecycle: _l, ...agentFields } = agentTaskRequestSchema.properties;

export const memberSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['instructions'],
  properties: agentFields,
} as const;

// Embedded in lists without an $id: ajv allows one schema per id.
const memberSchemaBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ref: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: { name: nameSchema, namespace: { ...namespaceSchema, description: "the squad's own namespace, if given" } },
      description: 'an existing agent that is asleep and in no other squad',
    },
    name: { ...nameSchema, description: 'the name of a new agent, with spec' },
    spec: {
      ...memberSpecSchema,
      description: 'the fields of a new agent (as on agent create); the squad controller creates it and turns the entry into a ref',
    },
  },
  description: 'exactly one of {"ref": {"name"}} or {"name", "spec"}',
} as const;

export const squadMemberSchema = { $id: 'SquadMember', ...memberSchemaBody } as const;

/**
 * The rules JSON Schema says poorly: a member is a ref or a name with a spec, never both; a ref
 * that names a namespace names the squad's own.
 */
export function memberShapeCauses(m: unknown, field: string, namespace: string): { field: string; message: string }[] {
  if (!m || typeof m !== 'object') return [];
  const o = m as Record<string, unknown>;
  const isRef = 'ref' in o;
  const refNs = isRef && o.ref && typeof o.ref === 'object' ? (o.ref as { namespace?: unknown }).namespace : undefined;
  if (refNs !== undefined && refNs !== namespace) {
    return [{ field: `${field}.ref.namespace`, message: `must be "${namespace}": a squad's members live in the squad's namespace` }];
  }
  const isSpec = 'name' in o || 'spec' in o;
  if (isRef && isSpec) return [{ field, message: 'must be either {"ref": {"name"}} or {"name", "spec"}, not both' }];
  if (!isRef && !('name' in o && 'spec' in o)) {
    return [{ field, message: 'must be {"ref": {"name"}} for an existing agent or {"name", "spec"} for a new one' }];
  }
  return [];
}

const durationSchema = {
  type: 'string',
  pattern: DURATION_PATTERN,
  maxLength: 32,
  description: 'a duration such as 30s, 10m or 1h30m',
} as const;

export const squadCreateRequestSchema = {
  $id: 'SquadCreateRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'members'],
  properties: {
    name: nameSchema,
    namespace: namespaceSchema,
    members: { type: 'array', minItems: 2, maxItems: 64, items: memberSchemaBody, description: 'at least two members' },
    orphanTTL: durationSchema,
  },
} as const;

/** PATCH /api/v1/squads/:name body: the whole member list (a replacement), the orphan TTL, or both. */
export interface SquadPatchRequest {
  members?: SquadMember[];
  orphanTTL?: string;
}

export const squadPatchRequestSchema = {
  $id: 'SquadPatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    members: {
      type: 'array',
      maxItems: 64,
      items: memberSchemaBody,
      description: 'the new member list, replacing the old: members left out leave (as by DELETE .../members/{agent}), new ones join (as by POST .../members)',
    },
    orphanTTL: durationSchema,
  },
} as const;

export const squadSpecSchema = {
  $id: 'SquadSpec',
  type: 'object',
  additionalProperties: false,
  required: ['members', 'orphanTTL', 'breakUp'],
  properties: {
    // Atomic under server-side apply: a member is a ref or a name with a spec, so no one field
    // keys it, and the membership is one decision (the squad's applier owns all of it).
    members: { type: 'array', maxItems: 64, items: memberSchemaBody, 'x-kubernetes-list-type': 'atomic' },
    orphanTTL: durationSchema,
    breakUp: { type: 'boolean' },
  },
} as const;

/** The squad's status (read-only: written by the squad controller). */
export const squadStatusSchema = {
  $id: 'SquadStatus',
  type: 'object',
  required: ['phase'],
  properties: {
    phase: {
      type: 'string',
      enum: ['Pending', 'Running', 'Sleeping', 'Orphaned'],
      description: 'Pending (group starting), Running, Sleeping (every member asleep), Orphaned (no members)',
    },
    orphanedSince: { type: 'string', format: 'date-time', description: 'when the squad lost its last member' },
    message: { type: 'string' },
  },
} as const;

export const squadResponseSchema = {
  $id: 'SquadResponse',
  type: 'object',
  required: ['name', 'namespace', 'phase', 'members', 'orphanTTL', 'orphanedSince', 'breakUpRequested', 'createdAt'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    phase: { type: 'string', enum: ['Pending', 'Running', 'Sleeping', 'Orphaned'] },
    members: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          phase: { type: 'string' },
          taskStatus: { type: 'string' },
          ready: { type: 'boolean', description: "the member's worker is connected" },
        },
      },
    },
    orphanTTL: { type: 'string' },
    orphanedSince: { type: 'string', nullable: true },
    breakUpRequested: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const memberName = (m: SquadMember): string => ('ref' in m ? m.ref.name : m.name);

/** Milliseconds of a duration that matched DURATION_PATTERN. */
export function parseDuration(s: string): number {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const m of s.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)) total += Number(m[1]) * unit[m[2]];
  return total;
}

/**
 * The label a squad puts on each member agent: its claim on the agent. Claiming is a
 * conditional write of the agent (optimistic concurrency), so two squads racing for one agent
 * cannot both have it, on one replica or several. The squads' member lists stay the truth of
 * membership; the squad controller releases a claim its squad no longer backs.
 */
export const SQUAD_LABEL = 'agentplane.io/squad';

/** The squad that claims the agent, if any. */
export const claimOf = (a: { metadata: { labels?: Record<string, string> } }): string | undefined => a.metadata.labels?.[SQUAD_LABEL];
