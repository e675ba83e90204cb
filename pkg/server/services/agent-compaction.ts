// POST /api/v1/agents/:name/compact: the running task's session compacted by the engine's own
// compaction (its `/compact` command), which summarises the conversation so far. It runs inside
// the task, after the turn in progress, and is reported as a `context_compacted` event. With no
// task running there is no session turn to compact after: 409, saying so.
//
// The request is stored on the agent, in order with the follow-ups (pkg/api/agent.ts, FollowUp),
// and the agent controller hands it to the worker (pkg/controller/agent-reconciler.ts): pkg/server
// reaches no worker itself, and every replica answers alike (docs/decisions.md "Steering through
// the store").

import { AGENT_KIND, type Agent, isBusy } from '../../api/agent.js';
import { type CompactRequest, compactRequestSchema, type CompactResponse } from '../../api/agent-ops.js';
import { ApiError, conflict, invalid } from '../../api/errors.js';
import { validateSchema } from '../../api/validation.js';
import type { Registry } from '../../registry/registry.js';
import { FOLLOW_UP_WAIT_MS, handOverFollowUp, taskOver } from './agent-wait.js';

export class AgentCompaction {
  constructor(
    private readonly agents: Registry<Agent>,
    /** How long to wait for the worker to take the request. */
    private readonly timeoutMs = FOLLOW_UP_WAIT_MS,
  ) {}

  /** `body` is optional: without one (or `{}`) the engine summarises as it sees fit. */
  async compact(namespace: string, name: string, body: unknown): Promise<{ response: CompactResponse; code: 200 | 202 }> {
    const causes = body === undefined ? [] : validateSchema(compactRequestSchema, body);
    if (causes.length) throw invalid('CompactRequest', name, causes);
    const instructions = (body as CompactRequest | undefined)?.instructions?.trim() ?? '';
    const agent = await this.agents.mustGet(namespace, name);
    const task = agent.spec.task;
    if (!isBusy(agent)) throw nothingRunning(name);
    const handed = await handOverFollowUp(this.agents, { namespace, name }, task, { content: instructions, compact: true }, this.timeoutMs);
    if (!handed.stored) throw nothingRunning(name, task);
    // Taken, or dropped with a task that ended first (then there is nothing left to compact).
    if (handed.settled && taskOver(handed.agent, task)) throw nothingRunning(name, task);
    // Not taken within FOLLOW_UP_WAIT_MS: stored for the task, which takes it at its next turn (202).
    const when = handed.settled ? 'after its current turn' : 'once it takes the request, at its next turn';
    const response: CompactResponse = {
      agent: name,
      namespace,
      task: String(task),
      status: 'compacting',
      message: `task ${task}'s session is compacted ${when}; a context_compacted event follows`,
    };
    return { response, code: handed.settled ? 200 : 202 };
  }
}

/** 409: compaction works inside a running task; the reason says so, and what to do. */
function nothingRunning(name: string, ended?: number): ApiError {
  const why = ended !== undefined ? `its task ${ended} ended before the compaction reached it` : 'it has no task in progress';
  return conflict(
    `agent "${name}" has nothing running to compact: ${why}; compaction summarises a running task's session between two of its turns, so send it while a task runs`,
    {
      kind: AGENT_KIND,
      name,
    },
  );
}
