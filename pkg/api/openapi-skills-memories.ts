// The OpenAPI paths of Skills and Memories (/api/v1/skills, /api/v1/memories;
// docs/skills-and-memories.md), with their schemas.

import type { OpenAPIV3 } from 'openapi-types';
import { memoryPatchRequestSchema, memoryRequestSchema, memoryResponseSchema } from './memory.js';
import { type Schema, toOpenApi } from './openapi-common.js';
import { kindPaths } from './openapi-kind.js';
import { skillPatchRequestSchema, skillRequestSchema, skillResponseSchema } from './skill.js';

export function skillMemoryComponents(): Record<string, Schema> {
  return {
    SkillRequest: toOpenApi(skillRequestSchema),
    SkillPatchRequest: toOpenApi({ ...skillPatchRequestSchema, description: 'the fields given change; files, when given, replaces all the files' }),
    SkillResponse: toOpenApi(skillResponseSchema),
    MemoryRequest: toOpenApi(memoryRequestSchema),
    MemoryPatchRequest: toOpenApi({
      ...memoryPatchRequestSchema,
      properties: { ...memoryPatchRequestSchema.properties, description: { ...memoryPatchRequestSchema.properties.description, nullable: true } },
      description: 'the fields given change; description given as null is removed',
    }),
    MemoryResponse: toOpenApi(memoryResponseSchema),
  };
}

export function skillMemoryPaths(): OpenAPIV3.PathsObject {
  return {
    ...kindPaths({ plural: 'skills', kind: 'Skill', one: 'the skill with its files', list: 'skills, each with its files' }),
    ...kindPaths({ plural: 'memories', kind: 'Memory', one: 'the memory with its text and last writer', list: 'memories, each with its text' }),
  };
}
