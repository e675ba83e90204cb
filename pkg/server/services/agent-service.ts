// Agent operations behind the REST mirror (and the aggregated API): send a task (create or
// assign), cancel, patch, delete, and read events. Rules live in the agent strategy; this layer
// only composes registry writes. It reaches no worker: a cancel and a follow-up are requests
// stored on the agent, which the agent controller hands over (pkg/controller/agent-reconciler.ts),
// so every replica steers alike (docs/decisions.md "Steering through the store").

import {
  AGENT_KIND,
  type Agent,
  agentFromRequest,
  type AgentPatchRequest,
  agentPatchRequestSchema,
  type AgentTaskRequest,
  agentTaskRequestSchema,
  isBusy,
} from '../../api/agent.js';
import { requestCancel } from '../../api/agent-annotations.js';
import { setAttachments } from '../../api/agent-fields.js';
import { validateBudgetLimits } from '../../api/budget.js';
import { ApiError, conflict, invalid, notFound } from '../../api/errors.js';
import type { AgentEvent } from '../../api/event.js';
import { DEFAULT_NAMESPACE } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import { explainPeerFields, PEER_AGENT_FIELDS } from '../../api/peer-fields.js';
import type { EventLog } from '../../registry/event-log.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import type { Registry } from '../../registry/registry.js';
import { streamOf } from '../../controller/agent-controller.js';
import { watchAgentGone } from '../event-follow.js';
import { REST_OWNER } from '../../registry/registry.js';
import { type Page, type PageQuery, readOne, readPage } from './paging.js';
import { FOLLOW_UP_WAIT_MS, handOverFollowUp, taskOver, waitForAgent } from './agent-wait.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Ends an update that has nothing to write: the task ended before the cancel was stored. */
const NOTHING_RUNNING = new Error('nothing running');

export interface SubmitResult {
  agent: Agent;
  created: boolean;
}

/** What a cancel found: `running` false when no task was in progress (nothing to cancel). */
export interface CancelResult {
  agent: Agent;
  settled: boolean;
  running: boolean;
}

export interface WaitOptions {
  /** How long cancel/delete wait for the outcome before answering "accepted". */
  timeoutMs: number;
  /** How long steering waits for the worker to take the follow-up (FOLLOW_UP_WAIT_MS). */
  followUpMs?: number;
}

/** What a PATCH did: `pending` when its instructions are stored for the running task but not yet taken (202). */
export interface PatchResult {
  agent: Agent;
  pending: boolean;
}

export class AgentService {
  constructor(
    private readonly agents: Registry<Agent>,
    private readonly events: EventLog,
    private readonly wait: WaitOptions = { timeoutMs: 15_000 },
    /** Reads for get and list from the informer cache; storage without it. */
    private readonly reads?: ReadCache<Agent>,
  ) {}

  /**
   * POST /agents: creates the agent with its first task, or assigns a task to an idle one. With
   * `createOnly` (the MCP tool create_agent) an existing agent is a 409 instead.
   */
  async submitTask(body: unknown, opts: { createOnly?: boolean } = {}): Promise<SubmitResult> {
    const req = body as AgentTaskRequest;
    const causes = explainPeerFields(validateSchema(agentTaskRequestSchema, body), PEER_AGENT_FIELDS);
    if (!causes.length) causes.push(...validateBudgetLimits(req.budget, 'budget'));
    if (causes.length) throw invalid(AGENT_KIND, typeof req?.name === 'string' ? req.name : undefined, causes);
    const namespace = req.namespace ?? DEFAULT_NAMESPACE;
    // An agent being deleted takes no task: the strategy's rule (409), met by the assignment below.
    const existing = await this.agents.get(namespace, req.name);
    if (!existing) {
      try {
        // `lifecycle` is set in the create itself: on a new agent that means what a PATCH right after it would.
        const agent = await this.agents.create(agentFromRequest(req, namespace), { owner: REST_OWNER });
        return { agent, created: true };
      } catch (err) {
        // Lost a create race with another client: fall through to assignment.
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists') || opts.createOnly) throw err;
      }
    }
    if (opts.createOnly) throw alreadyExists(namespace, req.name);
    const assigned = await this.assign(namespace, req);
    // A second write, as a PATCH after the assignment: in the assigning write the strategy would
    // read "Sleep" on a sleeping agent as the old action and reset it (a task wakes it for good).
    if (req.lifecycle === undefined) return { agent: assigned, created: false };
    const agent = await this.agents.update(
      namespace,
      req.name,
      (a) => {
        a.spec.lifecycle = req.lifecycle!;
      },
      { owner: REST_OWNER },
    );
    return { agent, created: false };
  }

  /** A new task for an existing agent, with the settings the request gives. */
  private assign(namespace: string, req: AgentTaskRequest): Promise<Agent> {
    return this.agents.update(
      namespace,
      req.name,
      (a) => {
        a.spec.instructions = req.instructions;
        a.spec.task += 1;
        if (req.systemPrompt !== undefined) a.spec.systemPrompt = req.systemPrompt;
        if (req.model !== undefined) a.spec.model = req.model;
        if (req.templateRef !== undefined) a.spec.templateRef = req.templateRef;
        if (req.role !== undefined) a.spec.role = req.role;
        if (req.connectors !== undefined) a.spec.connectors = req.connectors;
        setAttachments(a, req);
        if (req.priority !== undefined) a.spec.priority = req.priority;
        if (req.approval !== undefined) a.spec.approval = req.approval;
        if (req.budget !== undefined) a.spec.budget = req.budget;
      },
      { owner: REST_OWNER },
    );
  }

  get(namespace: string, name: string): Promise<Agent> {
    return readOne(this.reads, this.agents, AGENT_KIND, namespace, name);
  }

  /** Agents not being deleted; paged (and read from the cache) when the service has the reads. */
  async list(namespace?: string, page: PageQuery = {}): Promise<Page<Agent>> {
    const live = (a: Agent): boolean => !a.metadata.deletionTimestamp;
    if (this.reads) return readPage(this.reads, namespace, page, live);
    const { items } = await this.agents.list(namespace ? { namespace } : {});
    return { items: items.filter(live) };
  }

  /** PATCH /agents/:name: settings (model and systemPrompt apply from the next task), then `instructions`. */
  async patch(namespace: string, name: string, body: unknown): Promise<PatchResult> {
    // `budget: null` removes the budget: the schema checks the rest (a body of only that is fine).
    const removesBudget = isRecord(body) && body.budget === null;
    const checked = removesBudget ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'budget')) : body;
    const causes =
      removesBudget && !Object.keys(checked as object).length ? [] : explainPeerFields(validateSchema(agentPatchRequestSchema, checked), PEER_AGENT_FIELDS);
    const req = body as AgentPatchRequest;
    if (!causes.length && req.budget) causes.push(...validateBudgetLimits(req.budget, 'budget'));
    if (causes.length) throw invalid(AGENT_KIND, name, causes);
    let after = await this.agents.mustGet(namespace, name);
    const { instructions, ...settings } = req;
    if (Object.keys(settings).length) {
      after = await this.agents.update(
        namespace,
        name,
        (a) => {
          if (req.connectors !== undefined) a.spec.connectors = req.connectors;
          setAttachments(a, req);
          if (req.lifecycle !== undefined) a.spec.lifecycle = req.lifecycle;
          if (req.model !== undefined) a.spec.model = req.model;
          if (req.systemPrompt !== undefined) a.spec.systemPrompt = req.systemPrompt;
          if (req.priority !== undefined) a.spec.priority = req.priority;
          if (req.approval === null) delete a.spec.approval;
          else if (req.approval !== undefined) a.spec.approval = req.approval;
          if (req.budget === null) delete a.spec.budget;
          else if (req.budget !== undefined) a.spec.budget = req.budget;
        },
        { owner: REST_OWNER },
      );
    }
    return instructions === undefined ? { agent: after, pending: false } : this.instruct(namespace, name, instructions);
  }

  /**
   * PATCH instructions: a follow-up into the running task (steering), or, on an idle agent, a new
   * task exactly as POST starts one. When the task ends between the two (a race), the follow-up
   * becomes a new task; when another client starts a task in between, it is steered instead.
   */
  private async instruct(namespace: string, name: string, content: string): Promise<PatchResult> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 4; attempt++) {
      const agent = await this.agents.mustGet(namespace, name);
      if (!isBusy(agent)) {
        try {
          return { agent: (await this.submitTask({ name, namespace, instructions: content })).agent, pending: false };
        } catch (err) {
          if (!(err instanceof ApiError && err.reason === 'Conflict')) throw err;
          lastError = err; // busy again (or being deleted): look again
          continue;
        }
      }
      const steered = await this.steer(agent, content);
      if (steered) return steered;
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- lastError is a caught conflict, rethrown as it came
    throw lastError ?? conflict(`agent "${name}" kept starting and ending tasks; send the instructions again`, { kind: AGENT_KIND, name });
  }

  /**
   * Hands a follow-up to the agent's running task: it is stored on the agent, as a cancel is, and
   * the agent controller (on the leader, with several replicas) hands it to the worker and removes
   * it. Answers once it is taken, or `pending` once FOLLOW_UP_WAIT_MS passed without (it stays
   * stored for the task); undefined when the task ended first without it (the caller then starts
   * a new task with it).
   */
  private async steer(agent: Agent, content: string): Promise<PatchResult | undefined> {
    const { namespace, name } = agent.metadata;
    const task = agent.spec.task;
    const handed = await handOverFollowUp(this.agents, { namespace, name }, task, { content }, this.wait.followUpMs ?? FOLLOW_UP_WAIT_MS);
    if (!handed.stored) return undefined;
    const now = handed.agent;
    if (!handed.settled) return { agent: now, pending: true };
    if (!taskOver(now, task)) return { agent: now, pending: false };
    // Taken just before the task ended, or dropped with it: its user_message tells which.
    const recent = await this.events.list(streamOf(now), { limit: 50 });
    const taken = recent.some((e) => e.task === task && e.type === 'user_message' && (e.payload as { content?: string }).content === content);
    return taken ? { agent: now, pending: false } : undefined;
  }

  /**
   * Cancels the running (or not yet started) task. Waits briefly for the worker to confirm so
   * the answer usually shows taskStatus Cancelled; `settled` is false when it did not in time.
   * With no task in progress there is nothing to do, and that is the answer (`running` false),
   * not an error: a cancel is idempotent, so a retried one or one that lost a race with the
   * task's end succeeds too (docs/decisions.md "Cancel of an idle agent").
   */
  async cancel(namespace: string, name: string, reason = 'cancelled by request'): Promise<CancelResult> {
    const current = await this.agents.mustGet(namespace, name);
    if (!isBusy(current)) return { agent: current, settled: true, running: false };
    // The request is stored on the agent; the agent controller acts on it wherever the worker is.
    let idle: Agent | undefined;
    const agent = await this.agents
      .update(
        namespace,
        name,
        (a) => {
          if (!isBusy(a)) {
            idle = a;
            throw NOTHING_RUNNING;
          }
          requestCancel(a, reason);
        },
        { owner: REST_OWNER },
      )
      .catch((err: unknown) => {
        if (err === NOTHING_RUNNING && idle) return undefined;
        throw err;
      });
    if (!agent) return { agent: idle!, settled: true, running: false };
    const task = agent.spec.task;
    return { ...(await this.waitFor(namespace, name, (a) => !a || a.spec.task !== task || a.status.taskStatus !== 'InProgress', agent)), running: true };
  }

  /** Marks the agent for deletion and waits for the controller to clean up. */
  async delete(namespace: string, name: string): Promise<{ agent: Agent; settled: boolean }> {
    const agent = await this.agents.mustGet(namespace, name);
    await this.agents.delete(namespace, name);
    return this.waitFor(namespace, name, (a) => !a, agent);
  }

  /** Calls `gone` once the agent is marked for deletion, deleted or replaced; returns unwatch. */
  onGone(agent: Agent, gone: () => void): () => void {
    return watchAgentGone(this.agents, agent, gone);
  }

  /** An agent's events; readable while it is being deleted, until it is gone. */
  async history(namespace: string, name: string, limit: number, before?: number): Promise<AgentEvent[]> {
    const agent = await this.agents.get(namespace, name);
    if (!agent) throw notFound(AGENT_KIND, name, namespace);
    return this.events.list(streamOf(agent), { limit, ...(before !== undefined ? { before } : {}) });
  }

  /** An agent's events after seq `after`, oldest first, at most `limit`: a reader's cursor forward. */
  async eventsAfter(namespace: string, name: string, after: number, limit: number): Promise<AgentEvent[]> {
    const agent = await this.agents.get(namespace, name);
    if (!agent) throw notFound(AGENT_KIND, name, namespace);
    return this.events.since(streamOf(agent), after, limit);
  }

  /** Waits until `done` holds for the agent (undefined once it is gone), or the wait's timeout passes. */
  private waitFor(namespace: string, name: string, done: (a: Agent | undefined) => boolean, known: Agent): Promise<{ agent: Agent; settled: boolean }> {
    return waitForAgent(this.agents, { namespace, name }, done, known, this.wait.timeoutMs);
  }
}

const alreadyExists = (namespace: string, name: string): ApiError =>
  new ApiError(
    'AlreadyExists',
    409,
    `agent "${name}" already exists in namespace "${namespace}": give it a task instead (PATCH its instructions; the MCP tool run_task)`,
    {
      kind: AGENT_KIND,
      name,
    },
  );
