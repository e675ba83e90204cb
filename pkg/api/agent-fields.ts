// The schemas of an agent's name, namespace and connector list, shared by its request and spec
// schemas (./agent.ts, which re-exports the first two).

import { NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, NAMESPACE_PATTERN, NAMESPACE_RULE } from './meta.js';

export const nameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  pattern: NAME_PATTERN,
  description: NAME_RULE,
} as const;

export const namespaceSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: NAMESPACE_PATTERN,
  description: NAMESPACE_RULE,
} as const;

export const connectorListSchema = {
  type: 'array',
  items: nameSchema,
  uniqueItems: true,
  maxItems: 64,
  // Server-side apply merges it as a set: managers that each apply their own connectors keep them all.
  'x-kubernetes-list-type': 'set',
  description: 'names of connectors to attach',
} as const;

/** An agent's skills and memories, by name (docs/skills-and-memories.md). */
export interface AgentAttachments {
  /** Skills the engine loads at each task. */
  skills?: string[];
  /** Memories written to the workspace at each task, which its memory tools read and write. */
  memories?: string[];
}

/** At most this many of each: every one travels in each task message. */
export const MAX_ATTACHED = 16;

const attachedList = (what: string) =>
  ({
    type: 'array',
    items: nameSchema,
    uniqueItems: true,
    maxItems: MAX_ATTACHED,
    'x-kubernetes-list-type': 'set',
    description: `names of ${what} in the agent's namespace to attach (at most ${MAX_ATTACHED})`,
  }) as const;

export const attachmentFields = {
  skills: attachedList('skills'),
  memories: attachedList('memories'),
} as const;

/** The attachments a request or spec names, as the stored spec and the REST response carry them (absent when none). */
export function attachmentsOf(a: AgentAttachments): AgentAttachments {
  return { ...(a.skills?.length ? { skills: a.skills } : {}), ...(a.memories?.length ? { memories: a.memories } : {}) };
}

/** Sets the lists a request gives on an agent's spec (an empty list removes it). */
export function setAttachments(a: { spec: AgentAttachments }, req: AgentAttachments): void {
  for (const k of ['skills', 'memories'] as const) {
    const v = req[k];
    if (v === undefined) continue;
    if (v.length) a.spec[k] = v;
    else delete a.spec[k];
  }
}
