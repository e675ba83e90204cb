// Objects for tests that drive a registry directly.

import type { Agent, AgentSpec } from '../../pkg/api/agent.js';

/**
 * An agent as a client would send it, with task 0 (no task), so that writes of its instructions
 * are plain updates; the strategy fills in the rest.
 */
export function idleAgentDraft(name: string, labels: Record<string, string> = {}, namespace = 'default'): Agent {
  return {
    apiVersion: '',
    kind: '',
    metadata: { name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '', labels },
    spec: { instructions: 'do the thing', task: 0 } as AgentSpec,
    status: undefined as unknown as Agent['status'],
  };
}
