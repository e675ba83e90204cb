// The agent controller against the in-memory runtime: no processes, only what the controller
// asks of the AgentRuntime interface and what it makes of the runtime's events.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { type Agent, agentFromRequest } from '../../pkg/api/agent.js';
import type { Squad } from '../../pkg/api/squad.js';
import { AgentController } from '../../pkg/controller/agent-controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { Hooks } from '../../pkg/plugin/hooks.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { EventLog } from '../../pkg/registry/event-log.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { indexMembership } from '../../pkg/registry/squad/membership.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';
import { SqliteEventStore } from '../../plugins/event-store-sqlite/sqlite-event-store.js';
import { MemoryRuntime } from '../support/memory-runtime.js';

describe('AgentController on the in-memory runtime', function () {
  this.timeout(10_000);

  let dir: string;
  let state: SqliteState;
  let store: SqliteEventStore;
  let agents: Registry<Agent>;
  let events: EventLog;
  let informers: { agents: Informer<Agent>; squads: Informer<Squad> };
  let runtime: MemoryRuntime;
  let controller: AgentController;
  const ref = { namespace: 'default', name: 'alpha' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-ctl-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    store = new SqliteEventStore(path.join(dir, 'events.db'));
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
    events = new EventLog(store);
    const logger = createLogger({ level: 'silent' });
    informers = {
      agents: new Informer(agents, logger),
      squads: new Informer(new Registry<Squad>(state.store<Squad>('Squad'), squadStrategy), logger),
    };
    indexMembership(informers.agents, informers.squads);
    runtime = new MemoryRuntime();
    controller = new AgentController({
      agents,
      informers,
      events,
      runtime,
      hooks: new Hooks(),
      metrics: new Metrics(),
      logger: createLogger({ level: 'silent' }),
    });
    await controller.start();
  });

  afterEach(async () => {
    controller.stop();
    informers.agents.stop();
    informers.squads.stop();
    await runtime.close();
    store.close();
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function until(what: string, cond: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!(await cond())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const agent = (): Promise<Agent> => agents.mustGet(ref.namespace, ref.name);
  const history = async (): Promise<string[]> => {
    const a = await agent();
    return (await events.list({ ...ref, uid: a.metadata.uid }, { limit: 50 })).map((e) => `${e.task}:${e.type}`);
  };

  it('starts a worker bound to the agent’s uid, dispatches the task, records its events', async () => {
    const created = await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say built' }, 'default'));
    await until('the task completed', async () => (await agent()).status.taskStatus === 'Complete');
    expect(runtime.started.map((s) => ({ ref: s.ref, uid: s.uid }))).to.deep.equal([{ ref, uid: created.metadata.uid }]);
    expect(runtime.dispatched.map((d) => d.task)).to.deep.equal([
      { taskId: 1, instructions: '@say built', model: created.spec.model, role: created.spec.role, mcpServers: [] },
    ]);
    expect(await history()).to.deep.equal(['1:task_started', '1:text', '1:task_completed']);
    const a = await agent();
    expect(a.status).to.include({ status: 'Running', observedTask: 1 });
  });

  it('settles a task whose worker crashed as an error, and starts a new worker', async () => {
    await agents.create(agentFromRequest({ name: 'alpha', instructions: '@hold' }, 'default'));
    await until('the task is running', async () => (await runtime.status(ref)).runningTask === 1);
    const first = (await runtime.status(ref)).incarnation;
    expect(await runtime.crash(ref)).to.equal(true);
    await until('the task is settled', async () => (await agent()).status.taskStatus === 'Error');
    expect((await history()).at(-1)).to.equal('1:error');
    await until('a new worker is up', async () => (await runtime.status(ref)).phase === 'Ready');
    expect((await runtime.status(ref)).incarnation).to.not.equal(first);
    expect(runtime.dispatched, 'the settled task is not handed over again').to.have.length(1);
  });

  it('removes the worker and its workspace when the agent is deleted', async () => {
    await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say hi' }, 'default'));
    await until('the task completed', async () => (await agent()).status.taskStatus === 'Complete');
    expect(runtime.workspaceExists(ref)).to.equal(true);
    await agents.delete(ref.namespace, ref.name);
    await until('the agent is gone', async () => (await agents.get(ref.namespace, ref.name)) === undefined);
    expect((await runtime.status(ref)).phase).to.equal('Absent');
    expect(runtime.workspaceExists(ref)).to.equal(false);
  });
});
