// Deletion of an agent (its `agentplane.io/cleanup` finalizer, pkg/api/deletion.ts): its running
// task is cancelled and its worker and workspace removed at once; its events stay readable while
// other finalizers hold it. When agentplane's finalizer is the last one, the event stream goes and
// the finalizer is removed, which deletes the agent. Every step is safe to repeat, so a service
// killed midway finishes after restart.
//
// In memory only: the incarnations whose worker and workspace are removed already, so that a
// reconcile while another finalizer holds the agent does not remove them again. A restart
// forgets it and removes them once more, which finds nothing to remove.

import type { Agent } from '../api/agent.js';
import { FINALIZER_AGENT_CLEANUP } from '../api/deletion.js';
import { ApiError } from '../api/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Hooks } from '../plugin/hooks.js';
import type { EventLog } from '../registry/event-log.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime } from '../runtime/runtime.js';
import type { AgentWorkers } from './agent-workers.js';
import type { CancelHandoff } from './cancel-handoff.js';
import { type EventIngest, streamOf } from './event-ingest.js';

export interface AgentFinalizerDeps {
  agents: Registry<Agent>;
  events: EventLog;
  runtime: AgentRuntime;
  hooks: Hooks;
  ingest: EventIngest;
  workers: AgentWorkers;
  cancels: CancelHandoff;
}

export class AgentFinalizer {
  /** Agents (by uid) being deleted whose worker and workspace are already removed. */
  private readonly cleanedUp = new Set<string>();

  constructor(private readonly d: AgentFinalizerDeps) {}

  /** One step of an agent's deletion; see the top of this file. */
  async finalize(agent: Agent, log: Logger): Promise<void> {
    const ref = agent.metadata;
    const uid = agent.metadata.uid;
    await this.d.ingest.cancelForDeletion(agent);
    if (!this.cleanedUp.has(uid)) {
      await this.d.runtime.remove(ref);
      this.d.workers.giveUp(ref);
      this.cleanedUp.add(uid);
    }
    const finalizers = agent.metadata.finalizers ?? [];
    if (finalizers.some((f) => f !== FINALIZER_AGENT_CLEANUP)) return; // held by another: its removal brings us back
    await this.d.events.deleteStream(streamOf(agent));
    await this.d.hooks.notifyAgentDeleted(agent);
    // An agent marked before agentplane had a finalizer of its own carries none: delete it.
    if (finalizers.includes(FINALIZER_AGENT_CLEANUP)) await this.d.agents.removeFinalizer(ref.namespace, ref.name, FINALIZER_AGENT_CLEANUP);
    else
      await this.d.agents.delete(ref.namespace, ref.name).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
      });
    this.d.cancels.forget(ref);
    this.d.ingest.forget(ref);
    this.cleanedUp.delete(uid);
    this.d.workers.forgetActivityOf(uid);
    log.info('agent deleted');
  }
}
