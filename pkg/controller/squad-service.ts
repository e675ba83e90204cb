// Squad operations behind the REST mirror. Membership rules span objects (the agent exists, is
// asleep, is in no other squad), so every membership write in a namespace happens under one
// lock: checks and write are atomic with respect to each other, whatever clients race.

import { type Agent, AGENT_KIND, agentTaskRequestSchema } from '../api/agent.js';
import { ApiError, conflict, invalid, notFound } from '../api/errors.js';
import { DEFAULT_NAMESPACE } from '../api/meta.js';
import {
  memberName,
  memberShapeCauses,
  type Squad,
  SQUAD_KIND,
  type SquadCreateRequest,
  squadCreateRequestSchema,
  type SquadMember,
  squadMemberSchema,
  type SquadResponse,
} from '../api/squad.js';
import { validateSchema } from '../api/validation.js';
import type { Registry } from '../registry/registry.js';
import { KeyedSerializer } from '../registry/serializer.js';
import { memberNames, squadOf } from '../registry/squad/membership.js';

/** What the squad service needs from agent operations. */
export interface AgentOps {
  cancel(namespace: string, name: string, reason: string): Promise<unknown>;
}

/** Extra spec checks (e.g. connectors exist), the same ones agent create runs. */
export type SpecCheck = (namespace: string, spec: { connectors: string[] }) => Promise<{ field: string; message: string }[]>;

export class SquadService {
  /** Serializes membership writes per namespace (shared with the squad controller). */
  readonly membership = new KeyedSerializer();

  constructor(
    private readonly squads: Registry<Squad>,
    private readonly agents: Registry<Agent>,
    private readonly ops: AgentOps,
    private readonly checkSpec: SpecCheck = async () => [],
  ) {}

  async create(body: unknown): Promise<Squad> {
    const req = body as SquadCreateRequest;
    const causes = validateSchema(squadCreateRequestSchema, body);
    const namespace = (typeof req?.namespace === 'string' && req.namespace) || DEFAULT_NAMESPACE;
    if (Array.isArray(req?.members)) req.members.forEach((m, i) => causes.push(...memberShapeCauses(m, `members[${i}]`, namespace)));
    if (causes.length) throw invalid(SQUAD_KIND, typeof req?.name === 'string' ? req.name : undefined, causes);
    return this.membership.run(namespace, async () => {
      if (await this.squads.get(namespace, req.name)) {
        throw new ApiError('AlreadyExists', 409, `squad "${req.name}" already exists`, { kind: SQUAD_KIND, name: req.name });
      }
      for (const m of req.members) await this.checkJoin(namespace, m);
      return this.squads.create({
        apiVersion: '',
        kind: SQUAD_KIND,
        metadata: { name: req.name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
        spec: { members: req.members, orphanTTL: req.orphanTTL ?? '', breakUp: false },
        status: { phase: 'Pending' },
      });
    });
  }

  get(namespace: string, name: string): Promise<Squad> {
    return this.squads.mustGet(namespace, name);
  }

  async list(namespace?: string): Promise<Squad[]> {
    return (await this.squads.list(namespace ? { namespace } : {})).items;
  }

  async addMember(namespace: string, name: string, body: unknown): Promise<Squad> {
    const causes = [...validateSchema(squadMemberSchema, body), ...memberShapeCauses(body, '(body)', namespace)];
    if (causes.length) throw invalid('SquadMember', undefined, causes);
    const member = body as SquadMember;
    return this.membership.run(namespace, async () => {
      const squad = await this.squads.mustGet(namespace, name);
      if (squad.spec.breakUp) throw conflict(`squad "${name}" is breaking up and takes no new members`, { kind: SQUAD_KIND, name });
      await this.checkJoin(namespace, member);
      return this.squads.update(namespace, name, (s) => {
        s.spec.members.push(member);
      });
    });
  }

  /** The agent leaves the squad: its in-flight task is cancelled, and it becomes solo. */
  async removeMember(namespace: string, name: string, agent: string): Promise<Squad> {
    return this.membership.run(namespace, async () => {
      const squad = await this.squads.mustGet(namespace, name);
      if (!memberNames(squad).includes(agent)) {
        throw new ApiError('NotFound', 404, `agent "${agent}" is not a member of squad "${name}"`, { kind: SQUAD_KIND, name });
      }
      await this.ops.cancel(namespace, agent, `removed from squad "${name}"`).catch(() => undefined);
      return this.squads.update(namespace, name, (s) => {
        s.spec.members = s.spec.members.filter((m) => memberName(m) !== agent);
      });
    });
  }

  async breakUp(namespace: string, name: string): Promise<Squad> {
    return this.membership.run(namespace, async () => {
      await this.squads.mustGet(namespace, name);
      return this.squads.update(namespace, name, (s) => {
        s.spec.breakUp = true;
      });
    });
  }

  /** Deletes the squad record; members become solo agents with their workspaces. */
  async delete(namespace: string, name: string): Promise<Squad> {
    return this.membership.run(namespace, () => this.squads.delete(namespace, name));
  }

  async toResponse(s: Squad): Promise<SquadResponse> {
    const members = await Promise.all(
      memberNames(s).map(async (m) => {
        const a = await this.agents.get(s.metadata.namespace, m);
        return { name: m, phase: a?.status.status ?? 'Pending', taskStatus: a?.status.taskStatus ?? '' };
      }),
    );
    return {
      name: s.metadata.name,
      namespace: s.metadata.namespace,
      phase: s.status.phase,
      members,
      orphanTTL: s.spec.orphanTTL,
      orphanedSince: s.status.orphanedSince ?? null,
      breakUpRequested: s.spec.breakUp,
      createdAt: s.metadata.creationTimestamp,
    };
  }

  /**
   * A ref must name an existing, sleeping agent in no squad; a spec must name a new agent.
   * Call under `membership` for the namespace (the aggregated API does, for members it adds).
   */
  async checkJoin(namespace: string, m: SquadMember): Promise<void> {
    const name = memberName(m);
    const agent = await this.agents.get(namespace, name);
    const current = await squadOf(this.squads, namespace, name);
    if (current) {
      throw conflict(`agent "${name}" is already a member of squad "${current.metadata.name}"`, { kind: AGENT_KIND, name });
    }
    if ('spec' in m) {
      if (agent) throw conflict(`agent "${name}" already exists; add it by ref instead`, { kind: AGENT_KIND, name });
      const causes = validateSchema(agentTaskRequestSchema, { name, ...m.spec });
      if (!causes.length && m.spec.connectors?.length) causes.push(...(await this.checkSpec(namespace, { connectors: m.spec.connectors })));
      if (causes.length) throw invalid(AGENT_KIND, name, causes);
      return;
    }
    if (!agent || agent.metadata.deletionTimestamp) throw notFound(AGENT_KIND, name, namespace);
    if (agent.status.status !== 'Sleeping') throw conflict(`agent "${name}" must be asleep in order to team up`, { kind: AGENT_KIND, name });
  }
}
