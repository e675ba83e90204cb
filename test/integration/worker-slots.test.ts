// Worker slots (`--max-workers`) end to end, on real workers and the real engine against the
// scripted model: with one slot, a second agent's task waits in line (Queued) while the first
// runs, gets the slot once the first task ends, and the first agent's next task takes it back
// and resumes its session.

import { expect } from 'chai';
import type { Condition } from '../../pkg/api/condition.js';
import { runTask, waitAgent } from '../support/agents.js';
import { busyFor, EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default/agents';

async function workerReady(h: Harness, name: string): Promise<Condition | undefined> {
  const r = await h.api('GET', `${AGG}/${name}`);
  return (r.body.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'WorkerReady');
}

const metric = async (h: Harness, name: string): Promise<string | undefined> =>
  (await h.api('GET', '/metrics')).text.split('\n').find((l) => l.startsWith(`${name} `));

describe('worker slots (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ maxWorkers: 1, idleTimeoutMs: 0 });
  });
  after(async () => {
    await h?.close();
  });

  it('queues a task while the only slot is busy, runs it once the slot frees, and hands the slot back', async () => {
    expect(await metric(h, 'agentplane_worker_slots')).to.equal('agentplane_worker_slots 1');
    await runTask(h, 'first', '@say remember the word kestrel');

    const busy = await h.api('POST', '/api/v1/agents', { name: 'first', instructions: `@bash ${busyFor(60)}\n@say never` });
    expect(busy.status).to.equal(200);
    const ws = new EventClient(`${h.url}/api/v1/agents/first/ws`);
    try {
      await ws.until((evs) => evs.some((e) => e.type === 'tool_call' && e.task === 2));
      const queued = await h.api('POST', '/api/v1/agents', { name: 'second', instructions: '@say my turn' });
      expect(queued.status).to.equal(201);
      const waiting = await eventually(
        async () => {
          const c = await workerReady(h, 'second');
          return c?.reason === 'Queued' ? c : undefined;
        },
        30_000,
        'second waits for a slot',
      );
      expect(waiting).to.include({ status: 'False', message: 'waiting for a worker: all 1 allowed (--max-workers) are busy' });
      expect(await metric(h, 'agentplane_workers_waiting')).to.equal('agentplane_workers_waiting 1');
      const second = await h.api('GET', '/api/v1/agents/second');
      expect(second.body).to.include({ status: 'Queued', taskStatus: 'InProgress', queuePosition: 1 });

      expect((await h.api('POST', '/api/v1/agents/first/cancel')).status).to.equal(200);
      await ws.untilTaskEnd(2);
    } finally {
      ws.close();
    }
    await waitAgent(h, 'second', (a) => a.taskStatus === 'Complete', 'second ran in the freed slot');
    const released = await workerReady(h, 'first');
    expect(released).to.include({ status: 'False', reason: 'Released' });
    expect(released?.message).to.match(/^no worker: released to make room for (a waiting agent|agent second)/);
    expect(await metric(h, 'agentplane_workers_waiting')).to.equal('agentplane_workers_waiting 0');

    // The first agent's next task takes the slot back from idle second and resumes its session.
    const evs = await runTask(h, 'first', '@say which word?');
    expect(evs.at(-1)?.type).to.equal('task_completed');
    expect((await workerReady(h, 'second'))?.reason).to.equal('Released');
    const [req] = h.model.requests.filter((r) => r.hasTools && r.lastUserText === '@say which word?');
    expect(req?.userTexts[0], 'the resumed session has the first task').to.equal('@say remember the word kestrel');
  });

  it('accepts a follow-up for a task waiting for a slot (202), keeps it, and the task takes it once it runs', async () => {
    const busy = await h.api('POST', '/api/v1/agents', { name: 'first', instructions: `@bash ${busyFor(60)}\n@say never` });
    expect(busy.status).to.equal(200);
    const task = (await h.api('GET', `${AGG}/first`)).body.spec.task as number;
    const ws = new EventClient(`${h.url}/api/v1/agents/first/ws`);
    try {
      await ws.until((evs) => evs.some((e) => e.type === 'tool_call' && e.task === task));
      expect((await h.api('POST', '/api/v1/agents', { name: 'waiter', instructions: '@say queued work' })).status).to.equal(201);
      await waitAgent(h, 'waiter', (a) => a.status === 'Queued', 'waiter waits for a slot');
      // No worker runs its task yet, so none can take the follow-up: accepted, not an error to repeat.
      const steered = await h.api('PATCH', '/api/v1/agents/waiter', { instructions: 'and the queued pineapples\n@echo' });
      expect(steered.status, JSON.stringify(steered.body)).to.equal(202);
      expect(steered.body).to.include({ name: 'waiter', status: 'Queued', taskStatus: 'InProgress' });
      expect((await h.api('POST', '/api/v1/agents/first/cancel')).status).to.equal(200);
      await ws.untilTaskEnd(task);
    } finally {
      ws.close();
    }
    await waitAgent(h, 'waiter', (a) => a.taskStatus === 'Complete', 'waiter ran in the freed slot');
    const evs = (await h.api('GET', '/api/v1/agents/waiter/events?limit=100')).body.events as { type: string; task: number; payload: any }[];
    expect(evs.filter((e) => e.type === 'user_message').map((e) => [e.task, e.payload.content])).to.deep.equal([[1, 'and the queued pineapples\n@echo']]);
    expect(evs.filter((e) => e.type === 'task_completed')).to.have.length(1);
    expect(evs.find((e) => e.type === 'task_completed')?.payload.result).to.contain('queued pineapples');
  });
});
