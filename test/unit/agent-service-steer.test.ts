// The service's side of steering, with a real registry and a scripted worker: which path a PATCH
// instructions takes, and what happens when the task ends or starts in between (the races). The
// service only stores the follow-up on the agent; `Leader` below stands in for the agent
// controller's hand-over (pkg/controller/agent-reconciler.ts, handFollowUps).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { type Agent, agentFromRequest } from '../../pkg/api/agent.js';
import { dropFollowUp, pendingFollowUps } from '../../pkg/api/agent-annotations.js';
import { AgentService } from '../../pkg/server/services/agent-service.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import type { EventLog } from '../../pkg/registry/event-log.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';

/** The worker: the task it runs; `answer` decides its reply to each steer. */
class FakeWorker {
  running: number | undefined;
  steers: { taskId: number; content: string }[] = [];
  answer: (taskId: number) => Promise<boolean | undefined> = async () => true;

  steer(taskId: number, content: string): Promise<boolean | undefined> {
    this.steers.push({ taskId, content });
    return this.answer(taskId);
  }
}

/** The controller's hand-over, polled: stored follow-ups go to the worker running the task. */
function leader(agents: Registry<Agent>, worker: FakeWorker): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const a = await agents.get('default', 'alpha');
      if (!a || worker.running !== a.spec.task) return;
      for (const f of pendingFollowUps(a)) {
        if ((await worker.steer(a.spec.task, f.content)) === undefined) return;
        await agents.update('default', 'alpha', (cur) => dropFollowUp(cur, f.id));
      }
    })()
      .catch(() => undefined) // the state closed under it at the end of a test
      .finally(() => {
        busy = false;
      });
  }, 10);
  return () => clearInterval(timer);
}

describe('AgentService steering (PATCH instructions)', function () {
  this.timeout(10_000);

  let dir: string;
  let state: SqliteState;
  let agents: Registry<Agent>;
  let hub: FakeWorker;
  let service: AgentService;
  let stopLeader: () => void;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-steer-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
    hub = new FakeWorker();
    stopLeader = leader(agents, hub);
    // Steering reads the event log only when a task ended with its follow-up: it finds none here.
    service = new AgentService(agents, { list: async () => [] } as unknown as EventLog, { timeoutMs: 300, followUpMs: 300 });
    await agents.create(agentFromRequest({ name: 'alpha', instructions: 'first' }, 'default'));
  });

  afterEach(() => {
    stopLeader();
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Task `task` handed to the worker, as the controller records it. */
  const handOver = async (task = 1): Promise<void> => {
    hub.running = task;
    await agents.updateStatus('default', 'alpha', (s) => {
      s.observedTask = task;
    });
  };
  const settle = (): Promise<Agent> =>
    agents.updateStatus('default', 'alpha', (s) => {
      s.taskStatus = 'Complete';
    });

  it('steers the running task and leaves the task counter alone', async () => {
    await handOver();
    const { agent: a, pending } = await service.patch('default', 'alpha', { instructions: 'also this' });
    expect(pending).to.equal(false);
    expect(hub.steers).to.deep.equal([{ taskId: 1, content: 'also this' }]);
    expect(a.spec.task).to.equal(1);
    expect(a.spec.instructions).to.equal('first');
    expect(a.status.taskStatus).to.equal('InProgress');
  });

  it('starts a new task on an idle agent, as POST does', async () => {
    await handOver();
    await settle();
    const { agent: a, pending } = await service.patch('default', 'alpha', { instructions: 'next job', model: 'm2' });
    expect(pending).to.equal(false);
    expect(hub.steers).to.deep.equal([]);
    expect(a.spec).to.include({ task: 2, instructions: 'next job', model: 'm2' });
    expect(a.status.taskStatus).to.equal('InProgress');
  });

  it('starts a new task when the running one ended before the worker got the follow-up', async () => {
    await handOver();
    hub.answer = async () => {
      hub.running = undefined;
      await settle(); // the task_completed the worker sent before refusing
      return false;
    };
    const { agent: a, pending } = await service.patch('default', 'alpha', { instructions: 'too late for task one' });
    expect(pending).to.equal(false);
    expect(hub.steers).to.have.length(1);
    expect(a.spec).to.include({ task: 2, instructions: 'too late for task one' });
  });

  it('waits for a task that is assigned but not yet handed to the worker, then steers it', async () => {
    setTimeout(() => void handOver(), 50);
    const { agent: a, pending } = await service.patch('default', 'alpha', { instructions: 'while starting' });
    expect(pending).to.equal(false);
    expect(hub.steers).to.deep.equal([{ taskId: 1, content: 'while starting' }]);
    expect(a.spec.task).to.equal(1);
  });

  it('answers pending (202) when the worker does not take the follow-up and the task is still running', async () => {
    await handOver();
    hub.answer = async () => undefined;
    const { agent, pending } = await service.patch('default', 'alpha', { instructions: 'lost?' });
    expect(pending).to.equal(true);
    expect(agent.spec.task).to.equal(1);
    // The follow-up stays stored for the task, which takes it at its next turn.
    const stored = pendingFollowUps(await agents.mustGet('default', 'alpha')).map((f) => f.content);
    expect(stored).to.deep.equal(['lost?']);
  });

  it('applies model and systemPrompt without touching the running task', async () => {
    await handOver();
    const { agent: a, pending } = await service.patch('default', 'alpha', { model: 'm2', systemPrompt: 'be brief' });
    expect(pending).to.equal(false);
    expect(a.spec).to.include({ task: 1, model: 'm2', systemPrompt: 'be brief' });
    expect(hub.steers).to.deep.equal([]);
  });
});
