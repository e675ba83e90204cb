// POST /api/v1/agents/:name/compact: the running task's session compacted by the engine's own
// compaction (its `/compact` command), which summarises the conversation so far. It runs inside
// the task, after the turn in progress, and is reported as a `context_compacted` event. With no
// task running there is no session turn to compact after: 409, saying so.

import { AGENT_KIND, type Agent, isBusy } from '../../api/agent.js';
import { type CompactRequest, compactRequestSchema, type CompactResponse } from '../../api/agent-ops.js';
import { ApiError, conflict, invalid } from '../../api/errors.js';
import { validateSchema } from '../../api/validation.js';
import type { ObjectRef } from '../../api/meta.js';
import type { Registry } from '../../registry/registry.js';
import { waitForAgent } from './agent-wait.js';

/**
 * The two worker calls compaction makes, named here so pkg/server imports nothing of pkg/runtime
 * (`make lint`, rule server-reaches-workers-through-the-store); the runtime fits it as is. Unlike
 * steering, compaction is not yet a request stored on the agent (docs/decisions.md "Steering
 * through the store").
 */
export interface SessionCompactor {
  status(ref: ObjectRef): Promise<{ runningTask?: number }>;
  compact(ref: ObjectRef, task: number, instructions: string | undefined, timeoutMs: number): Promise<boolean | undefined>;
}

export class AgentCompaction {
  constructor(
    private readonly agents: Registry<Agent>,
    private readonly runtime: SessionCompactor,
    /** How long to wait for the task to reach its worker and for the worker's answer. */
    private readonly timeoutMs = 15_000,
    /** Whether this replica runs the workers (see AgentService). */
    private readonly leading: () => boolean = () => true,
  ) {}

  /** `body` is optional: without one (or `{}`) the engine summarises as it sees fit. */
  async compact(namespace: string, name: string, body: unknown): Promise<CompactResponse> {
    const causes = body === undefined ? [] : validateSchema(compactRequestSchema, body);
    if (causes.length) throw invalid('CompactRequest', name, causes);
    const instructions = (body as CompactRequest | undefined)?.instructions?.trim() || undefined;
    const agent = await this.agents.mustGet(namespace, name);
    const task = agent.spec.task;
    if (!isBusy(agent)) throw nothingRunning(name);
    if (!this.leading()) {
      throw new ApiError('ServiceUnavailable', 503, `this replica does not run agent "${name}"'s worker; send the compaction again (it reaches the leader's replica)`, {
        kind: AGENT_KIND,
        name,
        retryAfterSeconds: 1,
      });
    }
    const ref = { namespace, name };
    const ended = (a: Agent | undefined): boolean => !a || a.spec.task !== task || a.status.taskStatus !== 'InProgress';
    // Assigned but not with its worker yet (the worker may be starting): wait for the hand-over.
    if ((await this.runtime.status(ref)).runningTask !== task) {
      await waitForAgent(this.agents, ref, (a) => ended(a) || a!.status.observedTask >= task, agent, this.timeoutMs);
    }
    const accepted = await this.runtime.compact(ref, task, instructions, this.timeoutMs);
    if (accepted) {
      return {
        agent: name,
        namespace,
        task: String(task),
        status: 'compacting',
        message: `task ${task}'s session is compacted after its current turn; a context_compacted event follows`,
      };
    }
    if (accepted === false || ended(await this.agents.get(namespace, name))) throw nothingRunning(name, task);
    throw new ApiError('ServiceUnavailable', 503, `agent "${name}" is busy but its worker did not take the compaction; try again`, { kind: AGENT_KIND, name, retryAfterSeconds: 1 });
  }
}

/** 409: compaction works inside a running task; the reason says so, and what to do. */
function nothingRunning(name: string, ended?: number): ApiError {
  const why = ended !== undefined ? `its task ${ended} ended before the compaction reached it` : 'it has no task in progress';
  return conflict(`agent "${name}" has nothing running to compact: ${why}; compaction summarises a running task's session between two of its turns, so send it while a task runs`, {
    kind: AGENT_KIND,
    name,
  });
}
