// Squad operations behind the REST mirror: request shapes in, registry writes out. Membership
// rules (the agent exists, is asleep, is in no other squad) are the SquadMembership admission
// plugin's, applied to every writer alike.

import { AGENT_KIND, type Agent, WORKER_READY } from '../../api/agent.js';
import { isTrue } from '../../api/condition.js';
import { ApiError, conflict, invalid } from '../../api/errors.js';
import { DEFAULT_NAMESPACE } from '../../api/meta.js';
import {
  memberName,
  memberShapeCauses,
  type Squad,
  SQUAD_KIND,
  type SquadCreateRequest,
  squadCreateRequestSchema,
  type SquadMember,
  squadMemberSchema,
  type SquadPatchRequest,
  squadPatchRequestSchema,
  type SquadResponse,
} from '../../api/squad.js';
import { validateSchema } from '../../api/validation.js';
import { explainPeerFields, PEER_AGENT_FIELDS } from '../../api/peer-fields.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { type Page, type PageQuery, readOne, readPage } from './paging.js';
import { memberNames } from '../../registry/squad/membership.js';
import { REST_OWNER } from '../../registry/registry.js';

export class SquadService {
  constructor(
    private readonly squads: Registry<Squad>,
    private readonly agents: Registry<Agent>,
    /** Reads for get and list from the informer cache; storage without it. */
    private readonly reads?: ReadCache<Squad>,
  ) {}

  async create(body: unknown): Promise<Squad> {
    const req = body as SquadCreateRequest;
    const causes = explainPeerFields(validateSchema(squadCreateRequestSchema, body), PEER_AGENT_FIELDS);
    const namespace = (typeof req?.namespace === 'string' && req.namespace) || DEFAULT_NAMESPACE;
    if (Array.isArray(req?.members)) req.members.forEach((m, i) => causes.push(...memberShapeCauses(m, `members[${i}]`, namespace)));
    if (causes.length) throw invalid(SQUAD_KIND, typeof req?.name === 'string' ? req.name : undefined, causes);
    return this.squads.create(
      {
        apiVersion: '',
        kind: SQUAD_KIND,
        metadata: { name: req.name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
        spec: { members: req.members, orphanTTL: req.orphanTTL ?? '', breakUp: false },
        status: { phase: 'Pending' },
      },
      { owner: REST_OWNER },
    );
  }

  get(namespace: string, name: string): Promise<Squad> {
    return readOne(this.reads, this.squads, SQUAD_KIND, namespace, name);
  }

  async list(namespace?: string, page: PageQuery = {}): Promise<Page<Squad>> {
    if (this.reads) return readPage(this.reads, namespace, page);
    return { items: (await this.squads.list(namespace ? { namespace } : {})).items };
  }

  async addMember(namespace: string, name: string, body: unknown): Promise<Squad> {
    const causes = [...validateSchema(squadMemberSchema, body), ...memberShapeCauses(body, '(body)', namespace)];
    if (causes.length) throw invalid('SquadMember', undefined, causes);
    const member = body as SquadMember;
    const agent = memberName(member);
    return this.squads.update(
      namespace,
      name,
      (s) => {
        // Adding a member the squad has is a conflict with its state (409), read from the object
        // this write changes; a list naming an agent twice is a malformed object, the strategy's
        // 400 (docs/decisions.md "Each rule once").
        if (memberNames(s).includes(agent)) throw conflict(`agent "${agent}" is already a member of squad "${name}"`, { kind: AGENT_KIND, name: agent });
        s.spec.members.push(member);
      },
      { owner: REST_OWNER },
    );
  }

  /**
   * PATCH: the member list replaced whole and/or the orphan TTL. One squad write, so the rules of
   * POST .../members and DELETE .../members/{agent} apply as they are: the strategy's (shape, no
   * agent twice) and the SquadMembership admission's (each new ref member exists, is asleep and
   * in no other squad; a squad breaking up takes none), as for every writer.
   */
  async patch(namespace: string, name: string, body: unknown): Promise<Squad> {
    const req = body as SquadPatchRequest;
    const causes = explainPeerFields(validateSchema(squadPatchRequestSchema, body), PEER_AGENT_FIELDS);
    if (Array.isArray(req?.members)) req.members.forEach((m, i) => causes.push(...memberShapeCauses(m, `members[${i}]`, namespace)));
    if (causes.length) throw invalid(SQUAD_KIND, name, causes);
    return this.squads.update(
      namespace,
      name,
      (s) => {
        if (req.members !== undefined) s.spec.members = req.members;
        if (req.orphanTTL !== undefined) s.spec.orphanTTL = req.orphanTTL;
      },
      { owner: REST_OWNER },
    );
  }

  /** The agent leaves the squad and becomes solo; the squad controller cancels its task in flight. */
  async removeMember(namespace: string, name: string, agent: string): Promise<Squad> {
    const squad = await this.squads.mustGet(namespace, name);
    if (!memberNames(squad).includes(agent)) {
      throw new ApiError('NotFound', 404, `agent "${agent}" is not a member of squad "${name}"`, { kind: SQUAD_KIND, name });
    }
    return this.squads.update(
      namespace,
      name,
      (s) => {
        s.spec.members = s.spec.members.filter((m) => memberName(m) !== agent);
      },
      { owner: REST_OWNER },
    );
  }

  async breakUp(namespace: string, name: string): Promise<Squad> {
    return this.squads.update(
      namespace,
      name,
      (s) => {
        s.spec.breakUp = true;
      },
      { owner: REST_OWNER },
    );
  }

  /** Deletes the squad record; members become solo agents with their workspaces. */
  async delete(namespace: string, name: string): Promise<Squad> {
    return this.squads.delete(namespace, name);
  }

  async toResponse(s: Squad): Promise<SquadResponse> {
    const members = await Promise.all(
      memberNames(s).map(async (m) => {
        const a = await this.agents.get(s.metadata.namespace, m);
        return { name: m, phase: a?.status.status ?? 'Pending', taskStatus: a?.status.taskStatus ?? '', ready: isTrue(a?.status.conditions, WORKER_READY) };
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
}
