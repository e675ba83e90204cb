// The Memory resource (docs/skills-and-memories.md): named text an agent keeps across tasks and
// agents can share, attached by name (`spec.memories`). People write it (REST, kubectl, CLI);
// an agent writes the memories it has attached through its `memory_write` tool. At each task
// start the worker writes the attached memories, read-only, under .agentplane/memories/.

import { nameSchema, namespaceSchema } from './agent-fields.js';
import type { Resource } from './meta.js';

export const MEMORY_KIND = 'Memory';

/** A memory's text at most: it travels in every task message of every agent it is attached to. */
export const MEMORY_MAX_TEXT_BYTES = 64 * 1024;
export const MEMORY_DESCRIPTION_MAX_LENGTH = 1024;

export interface MemorySpec {
  text: string;
  description?: string;
}

export interface MemoryStatus {
  /** Who wrote the text last: "agent <name>" when an agent's tool did, else absent. */
  lastWriter?: string;
  lastWrittenAt?: string;
}

export type Memory = Resource<MemorySpec, MemoryStatus>;

export const memoryFields = {
  text: { type: 'string', maxLength: MEMORY_MAX_TEXT_BYTES, description: `the memory's text, at most ${MEMORY_MAX_TEXT_BYTES} characters (and bytes)` },
  description: { type: 'string', maxLength: MEMORY_DESCRIPTION_MAX_LENGTH, description: 'what the memory holds; shown to the agents it is attached to' },
} as const;

export const memorySpecSchema = {
  $id: 'MemorySpec',
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: memoryFields,
} as const;

export const memoryStatusSchema = {
  $id: 'MemoryStatus',
  type: 'object',
  properties: {
    lastWriter: { type: 'string', description: '"agent <name>" when an agent\'s memory_write tool wrote the text last' },
    lastWrittenAt: { type: 'string', format: 'date-time', description: "when an agent's tool wrote the text last" },
  },
} as const;

/** The memory's text is bounded in bytes too (the schema counts characters). */
export const memoryTextCauses = (text: unknown, field: string): { field: string; message: string }[] =>
  typeof text === 'string' && Buffer.byteLength(text) > MEMORY_MAX_TEXT_BYTES ? [{ field, message: `must be at most ${MEMORY_MAX_TEXT_BYTES} bytes` }] : [];

// --- the REST mirror (/api/v1/memories) -------------------------------------------------------

export const memoryRequestSchema = {
  $id: 'MemoryRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'text'],
  properties: { name: nameSchema, namespace: namespaceSchema, ...memoryFields },
} as const;

export const memoryPatchRequestSchema = {
  $id: 'MemoryPatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: memoryFields,
} as const;

export interface MemoryResponse extends MemorySpec, MemoryStatus {
  name: string;
  namespace: string;
  createdAt: string;
}

export const memoryResponseSchema = {
  type: 'object',
  required: ['name', 'namespace', 'createdAt', 'text'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    ...memoryFields,
    ...memoryStatusSchema.properties,
  },
} as const;

export const toMemoryResponse = (m: Memory): MemoryResponse => ({
  name: m.metadata.name,
  namespace: m.metadata.namespace,
  createdAt: m.metadata.creationTimestamp,
  ...m.spec,
  ...m.status,
});
