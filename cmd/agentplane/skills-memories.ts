// Skills and memories at task time (docs/skills-and-memories.md): each task message carries the
// agent's skills and memories as stored at dispatch, and the agents' memory tools read and
// write the memories they attach through the worker-facing listener.

import { readThrough, storageReader } from '../../pkg/registry/admission/admission.js';
import { AgentMemories } from '../../pkg/server/services/agent-memories.js';
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
