// Starting an agent from a checkpoint (`spec.fromCheckpoint`): before its first worker starts,
// its workspace becomes a copy of the checkpoint's and its status takes the checkpoint's engine
// session, which the first task resumes: the same files and conversation, its own identity. The
// Restored condition records that it happened, so a restart never restores over later work.

import type { Agent } from '../api/agent.js';
import { type AgentCheckpoint, fromCheckpointObjectName } from '../api/checkpoint.js';
import { findCondition, setCondition } from '../api/condition.js';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../registry/registry.js';
import type { AgentRuntime } from '../runtime/runtime.js';
import type { CopyHolds } from './checkpoint-controller.js';
import type { Result } from './framework/controller.js';

export const RESTORED = 'Restored';
/** How soon an agent whose checkpoint is not Ready looks again. */
const NOT_READY_RETRY_MS = 5_000;

export interface CheckpointRestoreDeps {
  agents: Registry<Agent>;
  checkpoints: Registry<AgentCheckpoint>;
  runtime: AgentRuntime;
  holds: CopyHolds;
}

export class CheckpointRestore {
  constructor(private readonly d: CheckpointRestoreDeps) {}

  /** The agent starts from a checkpoint that is not restored yet. */
  pending(agent: Agent): boolean {
    return !!agent.spec.fromCheckpoint && findCondition(agent.status.conditions, RESTORED)?.status !== 'True';
  }

  /** Restores the agent's workspace and session; the status write brings the reconciler back to start its worker. */
  async restore(agent: Agent, log: Logger): Promise<Result | void> {
    const { namespace, name } = agent.metadata;
    const from = agent.spec.fromCheckpoint!;
    const objectName = fromCheckpointObjectName(from);
    const c = objectName ? await this.d.checkpoints.get(namespace, objectName) : undefined;
    const storage = this.d.runtime.checkpoints;
    if (!storage) return this.notRestored(agent, 'Unsupported', `the ${this.d.runtime.name} runtime cannot restore checkpoints`);
    if (!c) return this.notRestored(agent, 'CheckpointNotFound', `checkpoint "${from}" not found`);
    if (c.status.phase !== 'Ready') return this.notRestored(agent, 'CheckpointNotReady', `checkpoint "${from}" is ${c.status.phase}`);
    await this.d.holds.during(agent.metadata, () => storage.restore(`${namespace}/${objectName}`, agent.metadata));
    await this.d.agents.updateStatus(namespace, name, (s) => {
      if (c.status.sessionId) s.sessionId = c.status.sessionId;
      s.conditions = setCondition(s.conditions ?? [], { type: RESTORED, status: 'True', reason: 'Restored', message: `started from checkpoint "${from}"` });
    });
    log.info({ checkpoint: from, task: c.status.task }, 'workspace restored from a checkpoint');
  }

  private async notRestored(agent: Agent, reason: string, message: string): Promise<Result> {
    const cur = findCondition(agent.status.conditions, RESTORED);
    if (cur?.reason !== reason || cur.message !== message) {
      await this.d.agents.updateStatus(agent.metadata.namespace, agent.metadata.name, (s) => {
        s.conditions = setCondition(s.conditions ?? [], { type: RESTORED, status: 'False', reason, message });
      });
    }
    return { requeueAfter: NOT_READY_RETRY_MS };
  }
}
