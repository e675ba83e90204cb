// Extension points of the core. Plugins register functions here; the controller and server call
// them without knowing which plugin (if any) is behind them.

import type { Agent } from '../api/agent.js';
import type { McpServerSpec, TaskAttachments } from '../api/worker-protocol.js';

export type TaskOutcome = 'completed' | 'error' | 'cancelled';

export class Hooks {
  /** MCP servers to give the engine for a task (connectors). Results are concatenated. */
  readonly mcpServers: ((agent: Agent) => Promise<McpServerSpec[]>)[] = [];
  /** After an agent's task ended (sleep-after-task, auto-delete). */
  readonly taskEnded: ((agent: Agent, outcome: TaskOutcome) => Promise<void>)[] = [];
  /** After an agent was removed for good (its secrets, its config). */
  readonly agentDeleted: ((agent: Agent) => Promise<void>)[] = [];
  /** The skills and memories a task starts with (at most one: skills-and-memories). */
  attachments?: (agent: Agent) => Promise<TaskAttachments | undefined>;

  async resolveMcpServers(agent: Agent): Promise<McpServerSpec[]> {
    const lists = await Promise.all(this.mcpServers.map((fn) => fn(agent)));
    return lists.flat();
  }

  async notifyTaskEnded(agent: Agent, outcome: TaskOutcome): Promise<void> {
    for (const fn of this.taskEnded) await fn(agent, outcome);
  }

  async notifyAgentDeleted(agent: Agent): Promise<void> {
    for (const fn of this.agentDeleted) await fn(agent);
  }
}
