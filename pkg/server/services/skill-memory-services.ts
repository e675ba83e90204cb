// Skills and Memories behind the REST mirror (/api/v1/skills, /api/v1/memories;
// docs/skills-and-memories.md): the generic kind service; every rule beyond the request's shape
// is the kinds' strategies' (a SKILL.md's frontmatter, paths, sizes).

import { MEMORY_KIND, type Memory, memoryPatchRequestSchema, memoryRequestSchema, type MemorySpec, memoryTextCauses } from '../../api/memory.js';
import { SKILL_KIND, type Skill, skillPatchRequestSchema, skillRequestSchema, type SkillSpec } from '../../api/skill.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { KindService } from './kind-service.js';

export const skillService = (skills: Registry<Skill>, reads: ReadCache<Skill>): KindService<SkillSpec, Skill> =>
  new KindService({ kind: SKILL_KIND, createSchema: skillRequestSchema, patchSchema: skillPatchRequestSchema }, skills, reads);

export const memoryService = (memories: Registry<Memory>, reads: ReadCache<Memory>): KindService<MemorySpec, Memory> =>
  new KindService(
    {
      kind: MEMORY_KIND,
      createSchema: memoryRequestSchema,
      patchSchema: memoryPatchRequestSchema,
      removable: ['description'],
      validateCreate: (spec) => memoryTextCauses(spec.text, 'text'),
    },
    memories,
    reads,
  );
