// GET /api/v1/agents/:name/cost: what the agent's tasks cost, per task and per model, summed from
// its event stream (pkg/api/agent-cost.ts holds the sums). The stream is read in pages, so a
// long history is never one read; what the stream no longer keeps is not counted.

import { AGENT_KIND, type Agent } from '../../api/agent.js';
import { type AgentCostResponse, costBreakdown, type CostOptions } from '../../api/agent-cost.js';
import { notFound } from '../../api/errors.js';
import type { AgentEvent } from '../../api/event.js';
import { streamOf } from '../../controller/agent-controller.js';
import type { EventLog } from '../../registry/event-log.js';
import type { Registry } from '../../registry/registry.js';

const PAGE = 1000;

export class AgentCosts {
  constructor(
    private readonly agents: Registry<Agent>,
    private readonly events: EventLog,
  ) {}

  /** Readable while the agent is being deleted, as its events are, until it is gone. */
  async cost(namespace: string, name: string, opts: CostOptions = {}): Promise<AgentCostResponse> {
    const agent = await this.agents.get(namespace, name);
    if (!agent) throw notFound(AGENT_KIND, name, namespace);
    const stream = streamOf(agent);
    const all: AgentEvent[] = [];
    for (let after = 0; ;) {
      const page = await this.events.since(stream, after, PAGE);
      all.push(...page);
      if (page.length < PAGE) break;
      after = page.at(-1)!.seq;
    }
    return costBreakdown(name, namespace, all, opts);
  }
}
