// An agent may only attach skills and memories that exist in its namespace (create, and updates
// that change a list). Deleting a skill or memory an agent uses is allowed: its tasks then run
// without it (docs/skills-and-memories.md), as an agent whose list is edited would.

import type { Agent } from '../../api/agent.js';
import { AGENT_KIND } from '../../api/agent.js';
import { type Cause, invalid } from '../../api/errors.js';
import type { Memory } from '../../api/memory.js';
import type { Skill } from '../../api/skill.js';
import type { AdmissionPlugin, Attributes, Reader } from './admission.js';

async function missing(reader: Reader<unknown>, what: string, namespace: string, list: string[] | undefined, field: string): Promise<Cause[]> {
  const causes: Cause[] = [];
  for (const [i, name] of (list ?? []).entries()) {
    if (!(await reader.get(namespace, name))) causes.push({ field: `${field}[${i}]`, message: `${what} "${name}" not found in namespace "${namespace}"` });
  }
  return causes;
}

const same = (a: string[] | undefined, b: string[] | undefined): boolean => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

export function attachmentsExist(skills: Reader<Skill>, memories: Reader<Memory>): AdmissionPlugin {
  return {
    name: 'AttachmentsExist',
    kinds: [AGENT_KIND],
    operations: ['CREATE', 'UPDATE'],
    async validate(a: Attributes) {
      const agent = a.object as Agent;
      const old = a.oldObject as Agent | undefined;
      const causes: Cause[] = [];
      if (!old || !same(old.spec.skills, agent.spec.skills)) causes.push(...(await missing(skills, 'skill', a.namespace, agent.spec.skills, 'spec.skills')));
      if (!old || !same(old.spec.memories, agent.spec.memories))
        causes.push(...(await missing(memories, 'memory', a.namespace, agent.spec.memories, 'spec.memories')));
      if (causes.length) throw invalid(AGENT_KIND, a.name, causes);
    },
  };
}
