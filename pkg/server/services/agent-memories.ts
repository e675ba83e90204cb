// What an agent's task takes of its skills and memories, and its memory tools' way to the
// stored memories (docs/skills-and-memories.md). Both are read at the moment they are asked
// for, so an update reaches the next task (and the next memory_read). An agent reads and writes
// only the memories it has attached: a memory is shared by attaching it, never by naming it.

import type { Agent } from '../../api/agent.js';
import { ApiError, isApiError } from '../../api/errors.js';
import { MEMORY_KIND, type Memory, memoryTextCauses } from '../../api/memory.js';
import { type Skill, skillDescription } from '../../api/skill.js';
import type { TaskAttachments } from '../../api/worker-protocol.js';
import type { Logger } from '../../observability/logger.js';
import type { Reader } from '../../registry/admission/admission.js';
import type { Registry } from '../../registry/registry.js';

/** Who calls: the agent a model credential belongs to. */
export interface AgentGrant {
  ref: { namespace: string; name: string };
  uid: string;
}

export interface MemoryView {
  name: string;
  text: string;
  description?: string;
}

export interface AgentMemoriesDeps {
  agents: Reader<Agent>;
  skills: Reader<Skill>;
  memories: Registry<Memory>;
  logger: Logger;
}

export class AgentMemories {
  constructor(private readonly d: AgentMemoriesDeps) {}

  /** The task's skills and memories, as stored now; undefined when the agent attaches none. */
  async forTask(agent: Agent): Promise<TaskAttachments | undefined> {
    const { namespace, name } = agent.metadata;
    if (!agent.spec.skills?.length && !agent.spec.memories?.length) return undefined;
    const out: TaskAttachments = { skills: [], memories: [] };
    for (const s of agent.spec.skills ?? []) {
      const skill = await this.d.skills.get(namespace, s);
      if (!skill) this.d.logger.warn({ namespace, name, skill: s }, 'an attached skill does not exist: the task runs without it');
      else out.skills.push({ name: s, description: skillDescription(skill.spec), files: skill.spec.files });
    }
    for (const m of agent.spec.memories ?? []) {
      const memory = await this.d.memories.get(namespace, m);
      if (!memory) this.d.logger.warn({ namespace, name, memory: m }, 'an attached memory does not exist: the task runs without it');
      else out.memories.push(view(memory));
    }
    return out;
  }

  /** memory_read: an attached memory's text now. */
  async read(grant: AgentGrant, memory: string): Promise<MemoryView> {
    await this.attached(grant, memory);
    const m = await this.d.memories.get(grant.ref.namespace, memory);
    if (!m) throw notFound(grant, memory);
    return view(m);
  }

  /** memory_write: replaces an attached memory's text; its status names the agent. */
  async write(grant: AgentGrant, memory: string, text: unknown): Promise<MemoryView> {
    if (typeof text !== 'string') throw new ApiError('BadRequest', 400, 'text: must be a string');
    const tooBig = memoryTextCauses(text, 'text');
    if (tooBig.length) throw new ApiError('BadRequest', 400, `${tooBig[0].field}: ${tooBig[0].message}`);
    await this.attached(grant, memory);
    const { namespace } = grant.ref;
    try {
      await this.d.memories.update(namespace, memory, (m) => void (m.spec.text = text));
      const m = await this.d.memories.updateStatus(namespace, memory, (s) => {
        s.lastWriter = `agent ${grant.ref.name}`;
        s.lastWrittenAt = new Date().toISOString();
      });
      this.d.logger.info({ namespace, name: grant.ref.name, memory, bytes: Buffer.byteLength(text) }, 'an agent wrote its memory');
      return view(m);
    } catch (err) {
      if (isApiError(err) && err.code === 404) throw notFound(grant, memory);
      throw err;
    }
  }

  /** Refuses a memory the calling agent has not attached (or an agent that is gone). */
  private async attached(grant: AgentGrant, memory: string): Promise<void> {
    const a = await this.d.agents.get(grant.ref.namespace, grant.ref.name);
    if (!a || a.metadata.uid !== grant.uid) throw new ApiError('Unauthorized', 401, 'the agent of this credential no longer exists');
    if (!(a.spec.memories ?? []).includes(memory)) {
      const list = (a.spec.memories ?? []).join(', ') || 'none';
      throw new ApiError('Forbidden', 403, `memory "${memory}" is not attached to this agent (attached: ${list}); a person attaches memories (spec.memories)`);
    }
  }
}

const view = (m: Memory): MemoryView => ({ name: m.metadata.name, text: m.spec.text, ...(m.spec.description ? { description: m.spec.description } : {}) });

const notFound = (grant: AgentGrant, memory: string): ApiError =>
  new ApiError('NotFound', 404, `memory "${memory}" not found in namespace "${grant.ref.namespace}" (deleted since it was attached)`, {
    kind: MEMORY_KIND,
    name: memory,
  });
