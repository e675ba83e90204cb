// Admission end to end (docs/admission.md), on real workers and the real engine against the
// scripted model, at a small scale: a namespace's cap queues its agents (status Queued with
// their place on the REST API and the aggregated API, Queued:N in kubectl's Table), priority
// goes first, another namespace is not held behind the line, a queued agent can be deleted, and
// an agent given a task in a full namespace is Queued in that write's answer, and a restart with
// agents in line keeps them and their order.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { getAgent, waitAgent } from '../support/agents.js';
import { busyFor, EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const agg = (ns: string, name = ''): string => `/apis/agentplane.io/v1alpha1/namespaces/${ns}/agents${name ? `/${name}` : ''}`;

async function create(h: Harness, ns: string, name: string, instructions: string, priority?: number): Promise<void> {
  const r = await h.api('POST', '/api/v1/agents', { name, namespace: ns, instructions, ...(priority !== undefined ? { priority } : {}) });
  expect(r.status, JSON.stringify(r.body)).to.equal(201);
}

/** Waits until every named agent is Queued; returns each one's place in its namespace's line. */
async function queued(h: Harness, ns: string, names: string[]): Promise<Record<string, number>> {
  return eventually(
    async () => {
      const out: Record<string, number> = {};
      for (const n of names) {
        const a = (await getAgent(h, n, ns)) as unknown as { status: string; queuePosition?: number } | undefined;
        if (a?.status !== 'Queued' || a.queuePosition === undefined) return undefined;
        out[n] = a.queuePosition;
      }
      return out;
    },
    60_000,
    `${names.join(', ')} queued`,
  );
}

async function events(h: Harness, ns: string, name: string): Promise<AgentEvent[]> {
  const r = await h.api('GET', `/api/v1/agents/${name}/events?namespace=${ns}&limit=200`);
  return r.body.events as AgentEvent[];
}

const startedAt = async (h: Harness, ns: string, name: string): Promise<string> =>
  (await events(h, ns, name)).find((e) => e.type === 'task_started')!.timestamp;

/** Starts a task that runs until cancelled, and waits until it runs its tool. */
async function hold(h: Harness, ns: string, name: string): Promise<void> {
  await create(h, ns, name, `@bash ${busyFor(120)}\n@say held`);
  const ws = new EventClient(`${h.url}/api/v1/agents/${name}/ws?namespace=${ns}`);
  try {
    await ws.until((evs) => evs.some((e) => e.type === 'tool_call'), 60_000);
  } finally {
    ws.close();
  }
}

describe('admission: caps, queue positions, fairness (integration)', function () {
  this.timeout(240_000);
  let h: Harness;
  before(async () => {
    // team-t: no cap on workers, one task at a time.
    h = await startHarness({ maxWorkers: 3, namespaceMaxWorkers: 1, namespaceLimits: { 'team-t': { workers: 0, tasks: 1 } }, idleTimeoutMs: 0 });
  });
  after(async () => {
    await h?.close();
  });

  it("queues beyond a namespace's cap with places on both APIs, priority first, another namespace not held back; a queued agent can be deleted", async () => {
    await hold(h, 'team-a', 'holder');
    await create(h, 'team-a', 'q1', '@say q1');
    await create(h, 'team-a', 'q2', '@say q2');
    await create(h, 'team-a', 'q3', '@say q3', 5);
    expect(await queued(h, 'team-a', ['q1', 'q2', 'q3'])).to.deep.equal({ q3: 1, q1: 2, q2: 3 });

    // The aggregated API: status.queue.position, the Queued condition, and kubectl's Table.
    const one = await h.api('GET', agg('team-a', 'q1'));
    expect(one.body.status).to.deep.include({ status: 'Queued', queue: { position: 2 } });
    const cond = (one.body.status.conditions as { type: string; status: string; reason: string }[]).find((c) => c.type === 'Queued');
    expect(cond).to.include({ status: 'True', reason: 'NamespaceWorkerLimit' });
    const table = await h.api('GET', agg('team-a'), undefined, { accept: TABLE });
    const status = Object.fromEntries((table.body.rows as { cells: string[] }[]).map((r) => [r.cells[0], r.cells[1]]));
    expect(status).to.deep.include({ holder: 'Running', q3: 'Queued:1', q1: 'Queued:2', q2: 'Queued:3' });
    const selected = await h.api('GET', `${agg('team-a')}?fieldSelector=status.status%3DQueued`);
    expect((selected.body.items as { metadata: { name: string } }[]).map((a) => a.metadata.name).sort()).to.deep.equal(['q1', 'q2', 'q3']);

    // Another namespace is under its own cap: its task runs while team-a's line waits.
    await create(h, 'team-b', 'b1', '@say b1');
    await waitAgent(h, 'b1', (a) => a.taskStatus === 'Complete', 'b1 ran beside the line', 'team-b');
    expect((await getAgent(h, 'q3', 'team-a'))?.status).to.equal('Queued');

    // A queued agent deleted leaves the line; the others move up.
    expect((await h.api('DELETE', `/api/v1/agents/q2?namespace=team-a`)).status).to.equal(200);
    await eventually(async () => (await getAgent(h, 'q2', 'team-a')) === undefined || undefined, 30_000, 'q2 gone');
    expect(await queued(h, 'team-a', ['q3', 'q1'])).to.deep.equal({ q3: 1, q1: 2 });

    // The holder's task ends: q3 (priority) runs, then q1, one at a time.
    expect((await h.api('POST', '/api/v1/agents/holder/cancel?namespace=team-a')).status).to.equal(200);
    await waitAgent(h, 'q1', (a) => a.taskStatus === 'Complete', 'q1 ran in its turn', 'team-a');
    const q3 = await events(h, 'team-a', 'q3');
    expect(q3.map((e) => e.type)).to.include('task_completed');
    const q3End = q3.find((e) => e.type === 'task_completed')!.timestamp;
    const q1Start = await startedAt(h, 'team-a', 'q1');
    expect(q1Start >= q3End, `q1 starts (${q1Start}) once q3 is done (${q3End}): a cap of 1`).to.equal(true);
    expect((await getAgent(h, 'q1', 'team-a'))?.status).to.equal('Running');
  });

  it("caps a namespace's running tasks: a task waits (Queued, NamespaceTaskLimit) with its worker up, and runs when the other ends", async () => {
    await hold(h, 'team-t', 't-hold');
    await create(h, 'team-t', 't-next', '@say next');
    expect(await queued(h, 'team-t', ['t-next'])).to.deep.equal({ 't-next': 1 });
    const cond = async () =>
      ((await h.api('GET', agg('team-t', 't-next'))).body.status.conditions as { type: string; status: string; reason: string }[]).filter(
        (c) => c.type === 'Queued' || c.type === 'WorkerReady',
      );
    // Its worker is admitted (no cap on workers here): only the task waits.
    await eventually(
      async () => {
        const cs = await cond();
        return cs.some((c) => c.type === 'WorkerReady' && c.status === 'True') && cs.some((c) => c.type === 'Queued' && c.reason === 'NamespaceTaskLimit')
          ? cs
          : undefined;
      },
      60_000,
      "t-next's worker up, its task waiting",
    );
    expect((await events(h, 'team-t', 't-next')).map((e) => e.type)).to.deep.equal([]);
    expect((await h.api('POST', '/api/v1/agents/t-hold/cancel?namespace=team-t')).status).to.equal(200);
    await waitAgent(h, 't-next', (a) => a.taskStatus === 'Complete', 't-next ran once t-hold ended', 'team-t');
    expect((await cond()).find((c) => c.type === 'Queued')).to.include({ status: 'False', reason: 'Admitted' });
  });

  it("an agent given a task in a namespace at its cap is Queued in that write's own answer, on both APIs, and the controller writes it no more", async () => {
    await hold(h, 'team-d', 'holder');
    const waiting = async (): Promise<number> => Number(/^agentplane_workers_waiting (\S+)$/m.exec((await h.api('GET', '/metrics')).text)?.[1] ?? NaN);
    const before = await waiting();
    const rest = await h.api('POST', '/api/v1/agents', { name: 'd1', namespace: 'team-d', instructions: '@say d1' });
    expect(rest.status, JSON.stringify(rest.body)).to.equal(201);
    expect(rest.body.status).to.equal('Queued');
    const body = { apiVersion: 'agentplane.io/v1alpha1', kind: 'Agent', metadata: { name: 'd2' }, spec: { instructions: '@say d2' } };
    const created = await h.api('POST', agg('team-d'), body);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.status.status).to.equal('Queued');
    const conds = created.body.status.conditions as { type: string; status: string; reason: string; message: string }[];
    expect(conds.find((c) => c.type === 'Queued')).to.include({ status: 'True', reason: 'NamespaceWorkerLimit' });
    expect(conds.find((c) => c.type === 'WorkerReady')).to.include({ status: 'False', reason: 'Queued' });
    // A new task for an agent without a worker (created asleep) is Queued by the write that sends it.
    const asleep = { ...body, metadata: { name: 'd3' }, spec: { instructions: '@say d3', lifecycle: 'Sleep', task: 0 } };
    expect((await h.api('POST', agg('team-d'), asleep)).status).to.equal(201);
    const sent = await h.api('POST', '/api/v1/agents', { name: 'd3', namespace: 'team-d', instructions: '@say d3 now' });
    expect(sent.status, JSON.stringify(sent.body)).to.be.oneOf([200, 201]);
    expect(sent.body.status).to.equal('Queued');
    const version = async (name: string): Promise<string> => (await h.api('GET', agg('team-d', name))).body.metadata.resourceVersion as string;
    const d3Version = await version('d3');
    // The controller lines them up (its gauge) and finds nothing to write: the versions are those of the writes.
    await eventually(async () => ((await waiting()) >= before + 3 ? true : undefined), 30_000, 'd1, d2 and d3 in line');
    expect(await version('d2'), 'no write after the create').to.equal(created.body.metadata.resourceVersion);
    expect(await version('d3'), 'no write after the new task').to.equal(d3Version);
    expect(await queued(h, 'team-d', ['d1', 'd2', 'd3'])).to.deep.equal({ d1: 1, d2: 2, d3: 3 });
    expect((await h.api('POST', '/api/v1/agents/holder/cancel?namespace=team-d')).status).to.equal(200);
    for (const n of ['d1', 'd2', 'd3']) await waitAgent(h, n, (a) => a.taskStatus === 'Complete', `${n} ran once the holder ended`, 'team-d');
  });

  it('a restart with agents in line keeps them and their order; every task completes', async () => {
    await hold(h, 'team-c', 'holder');
    await create(h, 'team-c', 'c1', '@say c1');
    await create(h, 'team-c', 'c2', '@say c2');
    await create(h, 'team-c', 'c3', '@say c3');
    expect(await queued(h, 'team-c', ['c1', 'c2', 'c3'])).to.deep.equal({ c1: 1, c2: 2, c3: 3 });

    await h.restart();
    // The holder's worker went with the old process: its task ends, and the line goes in order.
    for (const n of ['c1', 'c2', 'c3']) await waitAgent(h, n, (a) => a.taskStatus === 'Complete', `${n} completed after the restart`, 'team-c');
    const starts = await Promise.all(['c1', 'c2', 'c3'].map((n) => startedAt(h, 'team-c', n)));
    expect([...starts].sort(), 'started in line order').to.deep.equal(starts);
    for (const n of ['c1', 'c2', 'c3']) {
      const types = (await events(h, 'team-c', n)).map((e) => e.type);
      expect(types, `${n}'s events`).to.include.members(['task_started', 'text', 'task_completed']);
      expect(types, `${n}'s events`).to.not.include('error');
    }
  });
});
