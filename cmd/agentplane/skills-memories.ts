// Skills and memories at task time (docs/skills-and-memories.md): each task message carries the
// agent's skills and memories as stored at dispatch, and the agents' memory tools read and
// write the memories they attach through the worker-facing listener.

import { toMemoryResponse } from '../../pkg/api/memory.js';
import { toSkillResponse } from '../../pkg/api/skill.js';
import { readThrough, storageReader } from '../../pkg/registry/admission/admission.js';
import { kindRoutes } from '../../pkg/server/routes/kind-routes.js';
import { AgentMemories } from '../../pkg/server/services/agent-memories.js';
import { memoryService, skillService } from '../../pkg/server/services/skill-memory-services.js';
import type { FastifyInstance } from 'fastify';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';

export function wireAgentMemories({ hooks, child }: Wiring, s: Storage): AgentMemories {
  const memories = new AgentMemories({
    // Storage, not the cache, for what a task starts with: a write just acknowledged reaches the next task.
    agents: readThrough(s.informers.agents, s.agents),
    skills: storageReader(s.skills),
    memories: s.memories,
    logger: child('memories'),
  });
  hooks.attachments = (agent) => memories.forTask(agent);
  return memories;
}

/** The REST mirror of both kinds: /api/v1/skills and /api/v1/memories. */
export async function registerSkillMemoryRoutes(app: FastifyInstance, s: Storage): Promise<void> {
  await app.register(kindRoutes('skills', skillService(s.skills, s.reads.skills), toSkillResponse));
  await app.register(kindRoutes('memories', memoryService(s.memories, s.reads.memories), toMemoryResponse));
}
