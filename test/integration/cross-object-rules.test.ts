// The rules that span objects, each tested once through both APIs: the REST mirror (/api/v1) and
// the aggregated API (/apis/agentplane.io/v1alpha1). Today they are implemented twice (the
// controller services for REST; `admit`, `admitDelete`, `afterUpdate` and `createDefaults` in
// pkg/server/aggregated/resources.ts); this suite is the proof that both make the same decision
// (refused or accepted, and the state that results). One list of rule cases generates one
// `describe` per API; each API is given a small adapter that turns an operation into its own
// request (REST bodies vs Kubernetes objects and merge patches) and its answer into a common view.
// Where the renderings differ (REST `{error, reason, code, details.causes}` with 400 for invalid
// fields, Kubernetes `Status` with 422), each case states what each API answers today.
//
// Everything is real: the server, its workers, the engine, the scripted model, and an MCP tool
// server (test/support/mcp-server.ts) behind the connectors that must really exist.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { busyFor, EventClient, eventually, type Harness, type Reply, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { runTask, sleepingAgent } from '../support/agents.js';

const GV = 'agentplane.io/v1alpha1';
const AGG = `/apis/${GV}`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TOKEN = 'rules-tok-7d2c9a4e1f5b3068';
/** A task that keeps its agent busy long enough for any test here. */
const LONG_TASK = `@bash ${busyFor(30)}\n@say never`;

type Member = { ref: { name: string } } | { name: string; spec: Record<string, unknown> };

/** An agent as both APIs can show it. */
interface AgentState {
  status: string;
  taskStatus: string;
  lifecycle: string;
  connectors: string[];
  lastTaskMessage: string;
  /** The task counter; only the aggregated API shows it (REST answers undefined). */
  task?: number;
}

/** A refusal (or any answer) as both renderings carry it. */
interface Answer {
  status: number;
  reason?: string;
  message: string;
  causes: { field: string; message: string }[];
}

interface ApiAdapter {
  name: 'REST' | 'aggregated';
  createAgent(name: string, instructions: string, opts?: { connectors?: string[]; namespace?: string }): Promise<Reply<any>>;
  /** REST PATCH body vs a merge patch of the object's spec. */
  patchAgent(name: string, fields: { connectors?: string[]; lifecycle?: string; instructions?: string }): Promise<Reply<any>>;
  getAgent(name: string, namespace?: string): Promise<AgentState | undefined>;
  events(name: string): Promise<AgentEvent[]>;
  createConnector(name: string, spec: { url: string; authSecretName?: string; authSecretKey?: string }): Promise<Reply<any>>;
  getConnector(name: string): Promise<Reply<any>>;
  deleteConnector(name: string): Promise<Reply<any>>;
  createSquad(name: string, members: Member[]): Promise<Reply<any>>;
  /** REST POST .../members vs a merge patch of spec.members (the whole list, one more entry). */
  addMember(squad: string, member: Member): Promise<Reply<any>>;
  /** REST POST .../break-up vs a merge patch of spec.breakUp. */
  breakUp(squad: string): Promise<Reply<any>>;
  /** Member names, or undefined when the squad does not exist. */
  squadMembers(squad: string): Promise<string[] | undefined>;
  answer(r: Reply<any>): Answer;
}

function restAdapter(h: () => Harness): ApiAdapter {
  const api = (m: string, p: string, b?: unknown) => h().api(m, p, b);
  return {
    name: 'REST',
    createAgent: (name, instructions, o = {}) =>
      api('POST', '/api/v1/agents', {
        name,
        instructions,
        ...(o.namespace ? { namespace: o.namespace } : {}),
        ...(o.connectors ? { connectors: o.connectors } : {}),
      }),
    patchAgent: (name, fields) => api('PATCH', `/api/v1/agents/${name}`, fields),
    async getAgent(name, namespace = 'default') {
      const r = await api('GET', `/api/v1/agents/${name}?namespace=${namespace}`);
      if (r.status !== 200) return undefined;
      const a = r.body;
      return { status: a.status, taskStatus: a.taskStatus, lifecycle: a.lifecycle, connectors: a.connectors, lastTaskMessage: a.lastTaskMessage };
    },
    events: async (name) => (await api('GET', `/api/v1/agents/${name}/events?limit=200`)).body.events,
    createConnector: (name, spec) => api('POST', '/api/v1/connectors', { name, ...spec }),
    getConnector: (name) => api('GET', `/api/v1/connectors/${name}`),
    deleteConnector: (name) => api('DELETE', `/api/v1/connectors/${name}`),
    createSquad: (name, members) => api('POST', '/api/v1/squads', { name, members }),
    addMember: (squad, member) => api('POST', `/api/v1/squads/${squad}/members`, member),
    breakUp: (squad) => api('POST', `/api/v1/squads/${squad}/break-up`),
    async squadMembers(squad) {
      const r = await api('GET', `/api/v1/squads/${squad}`);
      return r.status === 200 ? r.body.members.map((m: { name: string }) => m.name) : undefined;
    },
    answer: (r) => ({ status: r.status, reason: r.body?.reason, message: r.body?.error ?? '', causes: r.body?.details?.causes ?? [] }),
  };
}

function aggregatedAdapter(h: () => Harness): ApiAdapter {
  const ns = (namespace = 'default') => `${AGG}/namespaces/${namespace}`;
  const api = (m: string, p: string, b?: unknown, headers?: Record<string, string>) => h().api(m, p, b, headers);
  const memberName = (m: Member) => ('ref' in m ? m.ref.name : m.name);
  return {
    name: 'aggregated',
    createAgent: (name, instructions, o = {}) =>
      api('POST', `${ns(o.namespace)}/agents`, {
        apiVersion: GV,
        kind: 'Agent',
        metadata: { name },
        spec: { instructions, ...(o.connectors ? { connectors: o.connectors } : {}) },
      }),
    patchAgent: (name, fields) => api('PATCH', `${ns()}/agents/${name}`, { spec: fields }, MERGE),
    async getAgent(name, namespace) {
      const r = await api('GET', `${ns(namespace)}/agents/${name}`);
      if (r.status !== 200 || r.body.metadata.deletionTimestamp) return undefined;
      const a = r.body;
      return {
        status: a.status.status,
        taskStatus: a.status.taskStatus,
        lifecycle: a.spec.lifecycle,
        connectors: a.spec.connectors,
        lastTaskMessage: a.status.lastTaskMessage,
        task: a.spec.task,
      };
    },
    events: async (name) => (await api('GET', `${ns()}/agents/${name}/events?limit=200`)).body.items,
    createConnector: (name, spec) => api('POST', `${ns()}/connectors`, { apiVersion: GV, kind: 'Connector', metadata: { name }, spec }),
    getConnector: (name) => api('GET', `${ns()}/connectors/${name}`),
    deleteConnector: (name) => api('DELETE', `${ns()}/connectors/${name}`),
    createSquad: (name, members) => api('POST', `${ns()}/squads`, { apiVersion: GV, kind: 'Squad', metadata: { name }, spec: { members } }),
    async addMember(squad, member) {
      const cur = await api('GET', `${ns()}/squads/${squad}`);
      if (cur.status !== 200) return cur;
      return api('PATCH', `${ns()}/squads/${squad}`, { spec: { members: [...cur.body.spec.members, member] } }, MERGE);
    },
    breakUp: (squad) => api('PATCH', `${ns()}/squads/${squad}`, { spec: { breakUp: true } }, MERGE),
    async squadMembers(squad) {
      const r = await api('GET', `${ns()}/squads/${squad}`);
      return r.status === 200 ? r.body.spec.members.map(memberName) : undefined;
    },
    answer: (r) => {
      if (r.status >= 400) expect(r.body, `a Kubernetes Status: ${r.text}`).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: r.status });
      return { status: r.status, reason: r.body?.reason, message: r.body?.message ?? '', causes: r.body?.details?.causes ?? [] };
    },
  };
}

/** What each API answers for a refusal today: HTTP status and reason. */
type PerApi<T> = Record<ApiAdapter['name'], T>;
const same = <T>(v: T): PerApi<T> => ({ REST: v, aggregated: v });

/** State shared by the cases of one API's describe (one harness per API). */
interface Ctx {
  h: Harness;
  api: ApiAdapter;
  mcp: TestMcpServer;
}

function expectRefused(ctx: Ctx, r: Reply<any>, want: PerApi<{ code: number; reason: string }>, what: string): Answer {
  const a = ctx.api.answer(r);
  const w = want[ctx.api.name];
  expect({ status: a.status, reason: a.reason }, `${what}: ${r.text}`).to.deep.equal({ status: w.code, reason: w.reason });
  expect(r.body?.code, `${what}: code in the body`).to.equal(w.code);
  return a;
}

/**
 * A Conflict's message: the rule's words on REST; on the aggregated API Kubernetes' prefix first
 * (`Operation cannot be fulfilled on <resource>.agentplane.io "<name>": `), as kube-apiserver says it.
 */
const conflictMessage = (ctx: Ctx, resource: 'agents' | 'squads', name: string, msg: string): string =>
  ctx.api.name === 'REST' ? msg : `Operation cannot be fulfilled on ${resource}.agentplane.io "${name}": ${msg}`;

function expectOk(r: Reply<any>, code: number, what: string): void {
  expect(r.status, `${what}: ${r.text}`).to.equal(code);
}

async function waitState(ctx: Ctx, name: string, pred: (a: AgentState) => boolean, what: string, timeoutMs = 45_000): Promise<AgentState> {
  let last: AgentState | undefined;
  try {
    return await eventually(
      async () => {
        last = await ctx.api.getAgent(name);
        return last && pred(last) ? last : undefined;
      },
      timeoutMs,
      `${name}: ${what}`,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen through ${ctx.api.name}: ${JSON.stringify(last)}`, { cause: err });
  }
}

/** How task `task` of `name` ended ('still running' if it did not within `ms`). */
async function taskOutcome(ctx: Ctx, ws: EventClient, task: number, ms: number): Promise<string> {
  const ends = ['task_completed', 'task_cancelled', 'error'];
  try {
    await ws.until((evs) => evs.some((e) => e.task === task && ends.includes(e.type)), ms);
  } catch {
    return `still running after ${ms / 1000}s`;
  }
  return ws.events.find((e) => e.task === task && ends.includes(e.type))!.type;
}

interface RuleCase {
  rule: string;
  title: string;
  /** Known to fail through this API today (documented; the test still asserts the right behaviour). */
  knownBug?: ApiAdapter['name'];
  run(ctx: Ctx): Promise<void>;
}

let seq = 0;
/** A fresh name per use (the cases of one API share a harness). */
const fresh = (base: string): string => `${base}-${(++seq).toString(36).replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)])}`;

const CASES: RuleCase[] = [
  // 1. connectors-exist
  {
    rule: 'connectors-exist',
    title: 'an agent created listing a connector that does not exist in its namespace is refused, naming it (cause connectors[i]); one that exists is accepted',
    async run(ctx) {
      const name = fresh('lister');
      const r = await ctx.api.createAgent(name, '@say hi', { connectors: ['tools', 'ghost'] });
      const a = expectRefused(ctx, r, { REST: { code: 400, reason: 'Invalid' }, aggregated: { code: 422, reason: 'Invalid' } }, 'create with ghost');
      expect(a.message).to.contain('"ghost"');
      expect(a.causes.map((c) => c.field)).to.deep.equal([ctx.api.name === 'REST' ? 'connectors[1]' : 'spec.connectors[1]']);
      expect(a.causes[0].message).to.equal('connector "ghost" not found in namespace "default"');
      expect(await ctx.api.getAgent(name), 'not created').to.equal(undefined);

      // "tools" exists in default, not in "other".
      const elsewhere = await ctx.api.createAgent(name, '@say hi', { connectors: ['tools'], namespace: 'other' });
      const b = expectRefused(
        ctx,
        elsewhere,
        { REST: { code: 400, reason: 'Invalid' }, aggregated: { code: 422, reason: 'Invalid' } },
        'create in another namespace',
      );
      expect(b.causes[0].message).to.equal('connector "tools" not found in namespace "other"');
      expect(await ctx.api.getAgent(name, 'other'), 'not created in other').to.equal(undefined);

      expectOk(await ctx.api.createAgent(name, '@say hi', { connectors: ['tools'] }), 201, 'create with tools');
      expect((await ctx.api.getAgent(name))!.connectors).to.deep.equal(['tools']);
    },
  },
  {
    rule: 'connectors-exist',
    title: 'an agent updated to list a connector that does not exist is refused, naming it; its connectors are unchanged',
    async run(ctx) {
      const name = fresh('updater');
      expectOk(await ctx.api.createAgent(name, '@say hi'), 201, 'create');
      await waitState(ctx, name, (a) => a.taskStatus === 'Complete', 'first task done');
      const r = await ctx.api.patchAgent(name, { connectors: ['ghost'] });
      const a = expectRefused(ctx, r, { REST: { code: 400, reason: 'Invalid' }, aggregated: { code: 422, reason: 'Invalid' } }, 'patch with ghost');
      expect(a.message).to.contain('"ghost"');
      expect(a.causes.map((c) => c.field)).to.deep.equal([ctx.api.name === 'REST' ? 'connectors[0]' : 'spec.connectors[0]']);
      expect((await ctx.api.getAgent(name))!.connectors).to.deep.equal([]);
      expectOk(await ctx.api.patchAgent(name, { connectors: ['tools'] }), 200, 'patch with tools');
      expect((await ctx.api.getAgent(name))!.connectors).to.deep.equal(['tools']);
    },
  },
  // 2. connector-in-use
  {
    rule: 'connector-in-use',
    title: 'deleting a connector an agent lists is refused (409, naming the agent) while attached; once detached it deletes',
    async run(ctx) {
      const conn = fresh('used');
      const name = fresh('user');
      expectOk(await ctx.api.createConnector(conn, { url: ctx.mcp.url, authSecretName: 'tools-token', authSecretKey: 'token' }), 201, 'connector');
      expectOk(await ctx.api.createAgent(name, '@say hi', { connectors: [conn] }), 201, 'agent');
      const r = await ctx.api.deleteConnector(conn);
      const a = expectRefused(ctx, r, same({ code: 409, reason: 'Conflict' }), 'delete while attached');
      expect(a.message).to.contain(`"${name}"`).and.to.contain(`"${conn}"`);
      expectOk(await ctx.api.getConnector(conn), 200, 'still there');

      await waitState(ctx, name, (x) => x.taskStatus === 'Complete', 'first task done');
      expectOk(await ctx.api.patchAgent(name, { connectors: [] }), 200, 'detach');
      expectOk(await ctx.api.deleteConnector(conn), 200, 'delete once detached');
      expect((await ctx.api.getConnector(conn)).status, 'gone').to.equal(404);
    },
  },
  // 3. first-task
  {
    rule: 'first-task',
    title: 'creating an agent starts its first task: task 1 InProgress in the answer, then task_started and task_completed',
    async run(ctx) {
      const name = fresh('starter');
      const r = await ctx.api.createAgent(name, '@say first task done');
      expectOk(r, 201, 'create');
      // Opened after the create: it replays the current task from its first event.
      const ws = new EventClient(`${ctx.h.url}/api/v1/agents/${name}/ws`);
      if (ctx.api.name === 'REST') {
        expect(r.body.taskStatus).to.equal('InProgress');
      } else {
        expect(r.body.spec.task).to.equal(1);
        expect(r.body.status.taskStatus).to.equal('InProgress');
      }
      const evs = await ws.untilTaskEnd(1).finally(() => ws.close());
      expect(evs.filter((e) => e.task === 1).map((e) => e.type)).to.include.members(['task_started', 'task_completed']);
      expect(evs.find((e) => e.type === 'task_completed')!.payload).to.include({ result: 'first task done' });
      const done = await waitState(ctx, name, (a) => a.taskStatus === 'Complete', 'task 1 complete');
      if (ctx.api.name === 'aggregated') expect(done.task).to.equal(1);
    },
  },
  // 4. lifecycle Sleep on a squad member with a running task
  {
    rule: 'lifecycle-sleep',
    title: 'Sleep on a woken squad member with a running task cancels the task; the member ends Sleeping',
    async run(ctx) {
      const [a, b] = [fresh('woken'), fresh('peer')];
      await Promise.all([sleepingAgent(ctx.h, a), sleepingAgent(ctx.h, b)]);
      expectOk(await ctx.h.api('POST', '/api/v1/squads', { name: fresh('nap'), members: [{ ref: { name: a } }, { ref: { name: b } }] }), 201, 'squad');
      // Woken by a task: its lifecycle goes from Sleep to "" in the same write.
      expectOk(await ctx.h.api('POST', '/api/v1/agents', { name: a, instructions: LONG_TASK }), 200, 'wake with a task');
      const busy = await waitState(ctx, a, (x) => x.lastTaskMessage.startsWith('Bash'), 'running its tool');
      expect(busy.lifecycle).to.equal('');
      const ws = new EventClient(`${ctx.h.url}/api/v1/agents/${a}/ws`);
      await ws.opened();
      try {
        expectOk(await ctx.api.patchAgent(a, { lifecycle: 'Sleep' }), 200, 'Sleep');
        expect(await taskOutcome(ctx, ws, 2, 15_000), `task 2 of ${a} after lifecycle Sleep`).to.equal('task_cancelled');
        const cancelled = ws.events.find((e) => e.type === 'task_cancelled')!;
        expect(cancelled.payload).to.include({ reason: 'put to sleep' });
      } finally {
        ws.close();
      }
      const after = await waitState(ctx, a, (x) => x.status === 'Sleeping', 'Sleeping', 10_000);
      expect(after).to.include({ taskStatus: 'Cancelled', lifecycle: 'Sleep' });
    },
  },
  {
    rule: 'lifecycle-sleep',
    title: 'Sleep written again (the same value) acts alike through both APIs: nothing on a sleeping member; restated with a task, the task still wakes it',
    async run(ctx) {
      // The rule is level-triggered (plugins/sleep-wake): "a member whose lifecycle is Sleep has
      // no task running" is enforced from the state, not from the write that led there, so a
      // no-op write (kubectl's patch of an unchanged value) and a REST PATCH act alike.
      const [a, b] = [fresh('again'), fresh('again-peer')];
      await Promise.all([sleepingAgent(ctx.h, a), sleepingAgent(ctx.h, b)]);
      expectOk(await ctx.h.api('POST', '/api/v1/squads', { name: fresh('again-sq'), members: [{ ref: { name: a } }, { ref: { name: b } }] }), 201, 'squad');
      const asleep = await waitState(ctx, a, (x) => x.status === 'Sleeping', 'Sleeping');
      expect(asleep.lifecycle).to.equal('Sleep');
      const ws = new EventClient(`${ctx.h.url}/api/v1/agents/${a}/ws`);
      await ws.opened();
      try {
        const seen = ws.events.length;
        expectOk(await ctx.api.patchAgent(a, { lifecycle: 'Sleep' }), 200, 'Sleep again');
        await new Promise((r) => setTimeout(r, 1500));
        expect(ws.events.length, 'no event after writing the same value').to.equal(seen);
        expect((await waitState(ctx, a, () => true, 'read')).status).to.equal('Sleeping');
        // A task sent with the lifecycle restated: the task wakes the member for good (docs/squads.md "Lifecycle").
        expectOk(await ctx.api.patchAgent(a, { lifecycle: 'Sleep', instructions: '@say awake again' }), 200, 'task with Sleep restated');
        expect(await taskOutcome(ctx, ws, 2, 30_000), `task 2 of ${a} sent with lifecycle Sleep restated through ${ctx.api.name}`).to.equal('task_completed');
      } finally {
        ws.close();
      }
      const after = await waitState(ctx, a, (x) => x.taskStatus === 'Complete', 'complete');
      expect(after.lifecycle).to.equal('');
      expect(after.status).to.not.equal('Sleeping');
    },
  },
  // 5. squad membership
  {
    rule: 'squad-membership',
    title: 'a ref member must exist (404): on squad create and on add member',
    async run(ctx) {
      const { sleepers, crew } = await squadFixture(ctx);
      const ghost = fresh('ghost');
      const s = fresh('nobody');
      const r = await ctx.api.createSquad(s, [{ ref: { name: sleepers[2] } }, { ref: { name: ghost } }]);
      const a = expectRefused(ctx, r, same({ code: 404, reason: 'NotFound' }), 'create');
      expect(a.message).to.contain(ghost);
      expect(await ctx.api.squadMembers(s), 'no squad').to.equal(undefined);
      const add = await ctx.api.addMember(crew, { ref: { name: ghost } });
      expect(expectRefused(ctx, add, same({ code: 404, reason: 'NotFound' }), 'add').message).to.contain(ghost);
      expect(await ctx.api.squadMembers(crew)).to.not.include(ghost);
    },
  },
  {
    rule: 'squad-membership',
    title: 'a ref member must be asleep (409 `agent "<name>" must be asleep in order to team up`): on squad create and on add member',
    async run(ctx) {
      const { sleepers, crew, awake } = await squadFixture(ctx);
      const s = fresh('insomniacs');
      const msg = conflictMessage(ctx, 'agents', awake, `agent "${awake}" must be asleep in order to team up`);
      const r = await ctx.api.createSquad(s, [{ ref: { name: sleepers[2] } }, { ref: { name: awake } }]);
      expect(expectRefused(ctx, r, same({ code: 409, reason: 'Conflict' }), 'create').message).to.equal(msg);
      expect(await ctx.api.squadMembers(s), 'no squad').to.equal(undefined);
      const add = await ctx.api.addMember(crew, { ref: { name: awake } });
      expect(expectRefused(ctx, add, same({ code: 409, reason: 'Conflict' }), 'add').message).to.equal(msg);
      expect(await ctx.api.squadMembers(crew)).to.not.include(awake);
    },
  },
  {
    rule: 'squad-membership',
    title: 'a ref member must be in no other squad (409)',
    async run(ctx) {
      const { sleepers, crew } = await squadFixture(ctx);
      const s = fresh('poachers');
      const r = await ctx.api.createSquad(s, [{ ref: { name: sleepers[2] } }, { ref: { name: sleepers[0] } }]);
      const a = expectRefused(ctx, r, same({ code: 409, reason: 'Conflict' }), 'create');
      expect(a.message).to.equal(conflictMessage(ctx, 'agents', sleepers[0], `agent "${sleepers[0]}" is already a member of squad "${crew}"`));
      expect(await ctx.api.squadMembers(s), 'no squad').to.equal(undefined);
      // The rightful one: a sleeper in no squad joins (the fourth, kept for this).
      expectOk(await ctx.api.addMember(crew, { ref: { name: sleepers[3] } }), 200, 'add a free sleeper');
      expect(await ctx.api.squadMembers(crew)).to.deep.equal([sleepers[0], sleepers[1], sleepers[3]]);
    },
  },
  {
    rule: 'squad-membership',
    title: 'an embedded-spec member must not name an existing agent (409): on squad create and on add member',
    async run(ctx) {
      const { sleepers, crew, awake } = await squadFixture(ctx);
      const s = fresh('clones');
      const embedded = { name: awake, spec: { instructions: '@say hi' } };
      const r = await ctx.api.createSquad(s, [{ ref: { name: sleepers[2] } }, embedded]);
      const msg = conflictMessage(ctx, 'agents', awake, `agent "${awake}" already exists; add it by ref instead`);
      expect(expectRefused(ctx, r, same({ code: 409, reason: 'Conflict' }), 'create').message).to.equal(msg);
      expect(await ctx.api.squadMembers(s), 'no squad').to.equal(undefined);
      const add = await ctx.api.addMember(crew, embedded);
      expect(expectRefused(ctx, add, same({ code: 409, reason: 'Conflict' }), 'add').message).to.equal(msg);
      expect(await ctx.api.squadMembers(crew)).to.not.include(awake);
    },
  },
  {
    rule: 'squad-membership',
    title: 'a squad breaking up takes no new members (409)',
    async run(ctx) {
      const [a, b, c] = [fresh('quitter'), fresh('stayer'), fresh('latecomer')];
      await Promise.all([a, b, c].map((n) => sleepingAgent(ctx.h, n)));
      const s = fresh('band');
      expectOk(await ctx.api.createSquad(s, [{ ref: { name: a } }, { ref: { name: b } }]), 201, 'squad');
      // A busy member keeps the squad breaking up (all asleep, it would go at once).
      expectOk(await ctx.h.api('POST', '/api/v1/agents', { name: a, instructions: LONG_TASK }), 200, 'busy member');
      await waitState(ctx, a, (x) => x.taskStatus === 'InProgress', 'busy');
      try {
        expectOk(await ctx.api.breakUp(s), 200, 'break up');
        const r = await ctx.api.addMember(s, { ref: { name: c } });
        const refusal = expectRefused(ctx, r, same({ code: 409, reason: 'Conflict' }), 'add while breaking up');
        expect(refusal.message).to.equal(conflictMessage(ctx, 'squads', s, `squad "${s}" is breaking up and takes no new members`));
        expect(await ctx.api.squadMembers(s)).to.deep.equal([a, b]);
      } finally {
        await ctx.h.api('POST', `/api/v1/agents/${a}/cancel`);
      }
    },
  },
  // 6. connector binding and egress
  {
    rule: 'connector-binding',
    title: 'a connector whose secret is bound to another URL is refused (422, naming the secret and the URL); the rightful one is accepted',
    async run(ctx) {
      const bad = fresh('exfil');
      const elsewhere = 'http://127.0.0.1:9/collect';
      const r = await ctx.api.createConnector(bad, { url: elsewhere, authSecretName: 'tools-token', authSecretKey: 'token' });
      const a = expectRefused(
        ctx,
        r,
        { REST: { code: 422, reason: 'SecretBindingMismatch' }, aggregated: { code: 422, reason: 'Invalid' } },
        'bound elsewhere',
      );
      expect(a.message).to.contain('"tools-token"').and.to.contain(elsewhere);
      expect(a.causes.map((c) => c.field)).to.deep.equal([ctx.api.name === 'REST' ? 'url' : 'spec.url']);
      expect((await ctx.api.getConnector(bad)).status, 'not created').to.equal(404);

      const good = fresh('rightful');
      expectOk(await ctx.api.createConnector(good, { url: ctx.mcp.url, authSecretName: 'tools-token', authSecretKey: 'token' }), 201, 'rightful');
      expectOk(await ctx.api.getConnector(good), 200, 'stored');
    },
  },
  {
    rule: 'connector-egress',
    title: 'a connector URL at the cloud metadata address 169.254.169.254 is refused (cause url)',
    async run(ctx) {
      const name = fresh('metadata');
      const r = await ctx.api.createConnector(name, { url: 'http://169.254.169.254/latest/meta-data/' });
      const a = expectRefused(ctx, r, { REST: { code: 400, reason: 'Invalid' }, aggregated: { code: 422, reason: 'Invalid' } }, 'metadata address');
      expect(a.causes.map((c) => c.field)).to.deep.equal([ctx.api.name === 'REST' ? 'url' : 'spec.url']);
      expect(a.causes[0].message).to.match(/metadata/);
      expect((await ctx.api.getConnector(name)).status, 'not created').to.equal(404);
    },
  },
];

/**
 * Per harness, once: four sleeping agents (the first two in a squad, the third never joins, the
 * fourth joins in the "no other squad" case) and one awake agent.
 */
const fixtures = new WeakMap<Harness, Promise<{ sleepers: string[]; crew: string; awake: string }>>();
function squadFixture(ctx: Ctx): Promise<{ sleepers: string[]; crew: string; awake: string }> {
  let f = fixtures.get(ctx.h);
  if (!f) {
    f = (async () => {
      const sleepers = [fresh('sleeper'), fresh('sleeper'), fresh('sleeper'), fresh('sleeper')];
      const awake = fresh('awake');
      await Promise.all([...sleepers.map((n) => sleepingAgent(ctx.h, n)), runTask(ctx.h, awake, '@say up')]);
      const crew = fresh('crew');
      expectOk(await ctx.api.createSquad(crew, [{ ref: { name: sleepers[0] } }, { ref: { name: sleepers[1] } }]), 201, 'the fixture squad');
      return { sleepers, crew, awake };
    })();
    fixtures.set(ctx.h, f);
  }
  return f;
}

describe('cross-object rules, through both APIs (integration)', function () {
  let mcp: TestMcpServer;
  before(async () => {
    mcp = createTestMcpServer({ token: TOKEN });
    await mcp.start();
  });
  after(async () => {
    await mcp?.close();
  });

  for (const make of [restAdapter, aggregatedAdapter]) {
    let h: Harness;
    const api = make(() => h);
    const ctx = {} as Ctx;

    describe(`through the ${api.name} API`, function () {
      before(async () => {
        h = await startHarness();
        Object.assign(ctx, { h, api, mcp });
        // Secrets have only a REST API; this one is bound to the tool server's URL.
        const s = await h.api('POST', '/api/v1/secrets', { name: 'tools-token', data: { token: TOKEN }, allowedUrls: [mcp.url] });
        expectOk(s, 201, 'secret');
        // The connector agents list in the connectors-exist cases (created over REST for both).
        expectOk(
          await h.api('POST', '/api/v1/connectors', { name: 'tools', url: mcp.url, authSecretName: 'tools-token', authSecretKey: 'token' }),
          201,
          'connector tools',
        );
      });
      after(async () => {
        await h?.close();
      });

      for (const c of CASES) {
        const bug = c.knownBug === api.name ? ' [known bug: expected to fail today]' : '';
        it(`${c.rule}: ${c.title}${bug}`, async function () {
          this.timeout(120_000);
          await c.run(ctx);
        });
      }
    });
  }
});
