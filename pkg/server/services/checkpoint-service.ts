// The REST mirror's checkpoints: /api/v1/agents/:name/checkpoints[/:checkpoint]. A checkpoint is
// an AgentCheckpoint object named "<agent>.<checkpoint>"; every rule is the registry's (the
// strategy, the CheckpointSources admission), so the aggregated API's writers meet the same.
// A create answers once the copy is taken (201), or 202 with the Pending checkpoint when that
// takes longer (its agent's task is still running): GET it until Ready.

import type { Agent } from '../../api/agent.js';
import { AGENT_KIND } from '../../api/agent.js';
import {
  type AgentCheckpoint,
  CHECKPOINT_KIND,
  type CheckpointCreateRequest,
  checkpointCreateRequestSchema,
  checkpointObjectName,
} from '../../api/checkpoint.js';
import { ApiError, invalid, notFound } from '../../api/errors.js';
import { type Squad, SQUAD_KIND } from '../../api/squad.js';
import { validateSchema } from '../../api/validation.js';
import { memberNames } from '../../registry/squad/membership.js';
import type { Informer } from '../../registry/cache/informer.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import { REST_OWNER, type Registry } from '../../registry/registry.js';

const taken = (agent: string, name: string): ApiError =>
  new ApiError('AlreadyExists', 409, `agent "${agent}" already has a checkpoint "${name}"`, { kind: CHECKPOINT_KIND, name: checkpointObjectName(agent, name) });

function checkpointName(body: unknown): string {
  const causes = validateSchema(checkpointCreateRequestSchema, body);
  if (causes.length) throw invalid(CHECKPOINT_KIND, undefined, causes);
  return (body as CheckpointCreateRequest).name;
}

/** How long a create waits for the copy before answering 202. */
const CREATE_WAIT_MS = 5_000;

export class CheckpointService {
  constructor(
    private readonly checkpoints: Registry<AgentCheckpoint>,
    private readonly agents: Registry<Agent>,
    private readonly squads: Registry<Squad>,
    private readonly reads: ReadCache<AgentCheckpoint>,
    private readonly informer: Informer<AgentCheckpoint>,
  ) {}

  async create(namespace: string, agent: string, body: unknown): Promise<{ code: 201 | 202; checkpoint: AgentCheckpoint }> {
    const name = checkpointName(body);
    if (!(await this.agents.get(namespace, agent))) throw notFound(AGENT_KIND, agent, namespace);
    const settled = this.settled(namespace, checkpointObjectName(agent, name));
    try {
      await this.createOne(namespace, agent, name);
    } catch (err) {
      settled.cancel();
      throw err;
    }
    const done = await settled.promise;
    return done ? { code: 201, checkpoint: done } : { code: 202, checkpoint: await this.get(namespace, agent, name) };
  }

  /**
   * A squad checkpoint: one checkpoint per member, named alike and marked with the squad, which
   * the checkpoint controller takes at one moment once each member has one.
   */
  async createForSquad(namespace: string, squadName: string, body: unknown): Promise<{ code: 201 | 202; checkpoints: AgentCheckpoint[] }> {
    const name = checkpointName(body);
    const squad = await this.squads.get(namespace, squadName);
    if (!squad) throw notFound(SQUAD_KIND, squadName, namespace);
    const members = memberNames(squad);
    for (const m of members) {
      if (await this.checkpoints.get(namespace, checkpointObjectName(m, name))) throw taken(m, name);
    }
    const settled = members.map((m) => this.settled(namespace, checkpointObjectName(m, name)));
    try {
      for (const m of members) await this.createOne(namespace, m, name, squadName);
    } catch (err) {
      settled.forEach((s) => s.cancel());
      throw err;
    }
    const done = await Promise.all(settled.map((s) => s.promise));
    if (done.every((c) => c !== undefined)) return { code: 201, checkpoints: done };
    return { code: 202, checkpoints: await Promise.all(members.map((m) => this.get(namespace, m, name))) };
  }

  private async createOne(namespace: string, agent: string, name: string, squad?: string): Promise<void> {
    const objectName = checkpointObjectName(agent, name);
    try {
      await this.checkpoints.create(
        {
          apiVersion: '',
          kind: CHECKPOINT_KIND,
          metadata: { name: objectName, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
          spec: { agent, ...(squad ? { squad } : {}) },
          status: { phase: 'Pending' },
        },
        { owner: REST_OWNER },
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === 409) throw taken(agent, name);
      throw err;
    }
  }

  async list(namespace: string, agent: string): Promise<AgentCheckpoint[]> {
    const { items } = await this.reads.list({ namespace, matches: (c) => (c as AgentCheckpoint).spec.agent === agent });
    return items;
  }

  async get(namespace: string, agent: string, name: string): Promise<AgentCheckpoint> {
    const c = await this.reads.get(namespace, checkpointObjectName(agent, name));
    if (!c) throw this.missing(namespace, agent, name);
    return c;
  }

  async delete(namespace: string, agent: string, name: string): Promise<AgentCheckpoint> {
    const objectName = checkpointObjectName(agent, name);
    if (!(await this.checkpoints.get(namespace, objectName))) throw this.missing(namespace, agent, name);
    return this.checkpoints.delete(namespace, objectName);
  }

  private missing(namespace: string, agent: string, name: string): ApiError {
    return new ApiError('NotFound', 404, `agent "${agent}" has no checkpoint "${name}" in namespace "${namespace}"`, {
      kind: CHECKPOINT_KIND,
      name: checkpointObjectName(agent, name),
    });
  }

  /** Resolves with the checkpoint once it is Ready or Failed, or undefined after CREATE_WAIT_MS. */
  private settled(namespace: string, name: string): { promise: Promise<AgentCheckpoint | undefined>; cancel: () => void } {
    let cancel = (): void => undefined;
    const promise = new Promise<AgentCheckpoint | undefined>((resolve) => {
      const check = (c: AgentCheckpoint): void => {
        if (c.metadata.namespace === namespace && c.metadata.name === name && c.status.phase !== 'Pending') finish(c);
      };
      const off = this.informer.addHandler({ add: check, update: (_old, c) => check(c) });
      const timer = setTimeout(() => finish(undefined), CREATE_WAIT_MS);
      const finish = (c: AgentCheckpoint | undefined): void => {
        off();
        clearTimeout(timer);
        resolve(c ? structuredClone(c) : undefined);
      };
      cancel = () => finish(undefined);
    });
    return { promise, cancel };
  }
}
