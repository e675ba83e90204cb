// The agent controller against the in-memory runtime: no processes, only what the controller
// asks of the AgentRuntime interface and what it makes of the runtime's events.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';

import { expect } from 'chai';

import { type Agent, agentFromRequest, ASLEEP, WORKER_READY } from '../../pkg/api/agent.js';
import { FOLLOW_UPS_ANNOTATION, IDLE_TIMEOUT_ANNOTATION, pendingFollowUps, requestCancel, requestFollowUp } from '../../pkg/api/agent-annotations.js';
import { ApiError } from '../../pkg/api/errors.js';
import { findCondition, setCondition } from '../../pkg/api/condition.js';
import type { Connector } from '../../pkg/api/connector.js';
import { claimOf, type Squad, SQUAD_KIND } from '../../pkg/api/squad.js';
import { AgentController, type AgentControllerDeps } from '../../pkg/controller/agent-controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { Hooks } from '../../pkg/plugin/hooks.js';
import { AdmissionChain, readThrough } from '../../pkg/registry/admission/admission.js';
import { connectorsExist } from '../../pkg/registry/admission/connectors-exist.js';
import { squadMembership } from '../../pkg/registry/admission/squad-membership.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { EventLog } from '../../pkg/registry/event-log.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { indexMembership } from '../../pkg/registry/squad/membership.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';
import { SqliteEventStore } from '../../plugins/event-store-sqlite/sqlite-event-store.js';
import { MemoryRuntime } from '../support/memory-runtime.js';
import { until } from '../support/waiting.js';

describe('AgentController on the in-memory runtime', function () {
  this.timeout(10_000);

  let dir: string;
  let state: SqliteState;
  let store: SqliteEventStore;
  let agents: Registry<Agent>;
  let squads: Registry<Squad>;
  let events: EventLog;
  let informers: { agents: Informer<Agent>; squads: Informer<Squad> };
  let runtime: MemoryRuntime;
  let controller: AgentController;

  /** A controller on this test's storage and runtime, started. */
  async function startController(extra: Partial<AgentControllerDeps> = {}): Promise<void> {
    controller = new AgentController({
      agents,
      informers,
      events,
      runtime,
      hooks: new Hooks(),
      metrics: new Metrics(),
      logger: createLogger({ level: 'silent' }),
      ...extra,
    });
    await controller.start();
  }
  /** The controller again, with these settings and metrics of its own (returned). */
  async function restartController(extra: Partial<AgentControllerDeps>): Promise<Metrics> {
    controller.stop();
    const metrics = new Metrics();
    await startController({ metrics, ...extra });
    return metrics;
  }
  const ref = { namespace: 'default', name: 'alpha' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-ctl-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    store = new SqliteEventStore(path.join(dir, 'events.db'));
    // The admission chain as serve.ts registers it for agents and squads.
    const admission = new AdmissionChain();
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy, admission);
    squads = new Registry<Squad>(state.store<Squad>('Squad'), squadStrategy, admission);
    const connectors = new Registry<Connector>(state.store<Connector>('Connector'), connectorStrategy, admission);
    events = new EventLog(store);
    const logger = createLogger({ level: 'silent' });
    informers = {
      agents: new Informer(agents, logger),
      squads: new Informer(squads, logger),
    };
    indexMembership(informers.agents, informers.squads);
    const connectorCache = new Informer(connectors, logger);
    admission.register(connectorsExist(readThrough(connectorCache, connectors)), squadMembership(agents, readThrough(connectorCache, connectors)));
    runtime = new MemoryRuntime();
    await startController();
  });

  afterEach(async () => {
    controller.stop();
    informers.agents.stop();
    informers.squads.stop();
    await runtime.close();
    await store.close(); // its checkpoint thread has let go of the files before they are removed
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

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

  it('drops an event storage refuses (logged, never given a seq) and writes the task’s end once storage takes it again', async () => {
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (c: Buffer) => lines.push(...String(c).split('\n').filter(Boolean)));
    let full = true;
    const diskFull = (): Promise<never> => Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
    // The same store, refusing appends while `full`, as SQLite does on a full disk.
    const refusing = new Proxy(store, { get: (target, prop, receiver) => (prop === 'append' && full ? diskFull : Reflect.get(target, prop, receiver)) });
    await restartController({ events: new EventLog(refusing), logger: createLogger({ level: 'info', destination: sink }) });
    await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say built' }, 'default'));
    await until('an event dropped', async () => lines.some((l) => l.includes('an event could not be stored and is dropped')));
    await new Promise((r) => setTimeout(r, 300));
    expect(await history(), 'nothing stored while the disk is full').to.deep.equal([]);
    expect((await agent()).status.taskStatus).to.not.equal('Complete');
    full = false;
    await until('the task completed', async () => (await agent()).status.taskStatus === 'Complete');
    // Only the end, tried again until storage took it; the dropped events left no gap in seqs.
    expect(await history()).to.deep.equal(['1:task_completed']);
    expect(lines.some((l) => l.includes('the end of a task could not be stored'))).to.equal(true);
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

  const refOf = (name: string): { namespace: string; name: string } => ({ namespace: 'default', name });
  const get = (name: string): Promise<Agent> => agents.mustGet('default', name);
  const workerReady = async (name = 'alpha'): Promise<{ status: string; reason: string; message: string } | undefined> => {
    const c = findCondition((await get(name)).status.conditions, WORKER_READY);
    return c && { status: c.status, reason: c.reason, message: c.message };
  };
  /** What the sleep-wake plugin writes: the Asleep condition. */
  const setAsleep = (name: string, asleep: boolean): Promise<Agent> =>
    agents.updateStatus('default', name, (s) => {
      s.conditions = setCondition(s.conditions ?? [], {
        type: ASLEEP,
        status: asleep ? 'True' : 'False',
        reason: asleep ? 'SleepRequested' : 'Awake',
        message: asleep ? 'asleep (test)' : 'awake (test)',
      });
    });
  const cancel = (name: string, reason = 'test cancel'): Promise<Agent> => agents.update('default', name, (a) => requestCancel(a, reason));
  const idleAgent = (name: string): Agent => {
    const a = agentFromRequest({ name, instructions: 'nothing yet' }, 'default');
    a.spec.task = 0; // created without a task
    return a;
  };
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  describe('cancel requests', () => {
    it('settles a task not yet handed to a worker as task_cancelled, and never dispatches it', async () => {
      runtime.startup = () => 'never'; // the worker never connects
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say never' }, 'default'));
      await until('a worker is starting', async () => (await runtime.status(ref)).phase === 'Starting');
      await cancel('alpha', 'changed my mind');
      await until('the task is settled', async () => (await agent()).status.taskStatus === 'Cancelled');
      expect(await history()).to.deep.equal(['1:task_cancelled']);
      expect((await agent()).status.observedTask).to.equal(1);
      // A worker that connects now finds nothing to do.
      runtime.startup = () => 'connect';
      expect(await runtime.crash(ref)).to.equal(true);
      await until('a new worker is ready', async () => (await runtime.status(ref)).phase === 'Ready');
      await controller.idle();
      await sleep(30);
      expect(runtime.dispatched, 'the cancelled task is never dispatched').to.deep.equal([]);
      expect((await agent()).status).to.include({ taskStatus: 'Cancelled', status: 'Running' });
      expect(await history()).to.deep.equal(['1:task_cancelled']);
    });

    it('hands a cancel of a running task to the runtime once, however often it reconciles, and ends task_cancelled', async () => {
      const calls: { taskId: number; reason: string }[] = [];
      const realCancel = runtime.cancel.bind(runtime);
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      // A worker slow to act on the cancel: the task keeps running until `release`.
      runtime.cancel = async (r, taskId, reason) => {
        calls.push({ taskId, reason });
        if (calls.length === 1) void released.then(() => realCancel(r, taskId, reason));
        return true;
      };
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@hold' }, 'default'));
      await until('the task is running', async () => (await runtime.status(ref)).runningTask === 1);
      await cancel('alpha', 'stop it');
      await until('the cancel reached the runtime', async () => calls.length > 0);
      // More passes while the task still runs: an unrelated write, and direct enqueues.
      await agents.update('default', 'alpha', (a) => {
        a.metadata.annotations = { ...a.metadata.annotations, touched: 'yes' };
      });
      for (let i = 0; i < 3; i++) {
        controller.controller.enqueue(ref);
        await sleep(10);
        await controller.idle();
      }
      expect((await runtime.status(ref)).runningTask, 'the task still runs').to.equal(1);
      expect(calls).to.deep.equal([{ taskId: 1, reason: 'stop it' }]);
      release();
      await until('the task is cancelled', async () => (await agent()).status.taskStatus === 'Cancelled');
      expect((await history()).at(-1)).to.equal('1:task_cancelled');
      expect(calls, 'still one cancel').to.have.length(1);
      expect(runtime.dispatched).to.have.length(1);
    });
  });

  describe('follow-ups stored by another replica', () => {
    it('hands each to the running task in order and removes it; entries of another task are left out', async () => {
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@hold' }, 'default'));
      await until('the task is running', async () => (await runtime.status(ref)).runningTask === 1);
      await agents.update('default', 'alpha', (a) => {
        requestFollowUp(a, { id: 'f1', content: 'first' });
        requestFollowUp(a, { id: 'f2', content: 'second' });
      });
      await until('both handed over', async () => runtime.steered.length === 2);
      expect(runtime.steered.map((s) => [s.taskId, s.content])).to.deep.equal([
        [1, 'first'],
        [1, 'second'],
      ]);
      await until('removed from the agent', async () => pendingFollowUps(await agent()).length === 0);
      expect((await agent()).metadata.annotations ?? {}).to.not.have.property(FOLLOW_UPS_ANNOTATION);
      // A stale entry (an earlier task's) is not handed over.
      await agents.update('default', 'alpha', (a) => {
        a.metadata.annotations = { ...a.metadata.annotations, [FOLLOW_UPS_ANNOTATION]: JSON.stringify({ task: 0, items: [{ id: 'old', content: 'stale' }] }) };
      });
      controller.controller.enqueue(ref);
      await sleep(20);
      await controller.idle();
      expect(runtime.steered).to.have.length(2);
    });
  });

  describe('start failures', () => {
    it('marks the agent Failed after three exits before any ready; a new task clears it and starts a worker again', async () => {
      const metrics = await restartController({});
      runtime.startup = () => 'exit';
      await agents.create(idleAgent('alpha'));
      await until('the agent is Failed', async () => (await agent()).status.status === 'Failed');
      expect((await metrics.registry.getSingleMetricAsString('agentplane_worker_start_failures_total')).trim().split('\n').at(-1)).to.equal(
        'agentplane_worker_start_failures_total 3',
      );
      const a = await agent();
      expect(await workerReady()).to.include({ status: 'False', reason: 'StartFailed' });
      expect(a.status.message)
        .to.be.a('string')
        .and.match(/exited 3 times before connecting/);
      await controller.idle();
      await sleep(30);
      expect(runtime.started, 'no more starts while Failed').to.have.length(3);
      expect((await runtime.status(ref)).phase).to.equal('Absent');

      runtime.startup = () => 'connect';
      await agents.update('default', 'alpha', (x) => {
        x.spec.instructions = '@say retried';
      });
      expect((await agent()).status.status, 'a new task clears Failed at once').to.not.equal('Failed');
      expect((await agent()).status.message).to.equal(undefined);
      await until('the task completed', async () => (await agent()).status.taskStatus === 'Complete');
      expect(runtime.started).to.have.length(4);
      expect(runtime.dispatched.map((d) => d.task.instructions)).to.deep.equal(['@say retried']);
      expect((await agent()).status.status).to.equal('Running');
      expect(await workerReady()).to.include({ status: 'True', reason: 'Connected' });
    });

    it('marks an agent Failed when its worker never connects for its first task, and stops restarting it', async () => {
      runtime.startup = () => 'exit';
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say hi' }, 'default'));
      await until('three workers were started', async () => runtime.started.length >= 3);
      await sleep(200);
      await controller.idle();
      expect(runtime.started.length, 'workers started in all (3 before it is marked Failed)').to.equal(3);
      expect((await agent()).status.status).to.equal('Failed');
      expect(await workerReady()).to.include({ status: 'False', reason: 'StartFailed' });
    });
  });

  describe('sleep', () => {
    it('stops the worker of an agent that is asleep with no task: WorkerReady False, Stopped', async () => {
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say hi' }, 'default'));
      await until('the task completed', async () => (await agent()).status.taskStatus === 'Complete');
      expect((await runtime.status(ref)).phase).to.equal('Ready');
      await setAsleep('alpha', true);
      await until('the worker is gone', async () => (await runtime.status(ref)).phase === 'Absent');
      await until('WorkerReady says Stopped', async () => (await workerReady())?.reason === 'Stopped');
      expect(await workerReady()).to.deep.equal({ status: 'False', reason: 'Stopped', message: 'the agent is asleep' });
      expect((await agent()).status.status).to.equal('Sleeping');
      await controller.idle();
      expect((await runtime.status(ref)).phase).to.equal('Absent');
      expect(runtime.started).to.have.length(1);
    });
  });

  describe('idle release', () => {
    /** The controller again, with a short idle timeout. */
    const withIdleTimeout = (idleTimeoutMs: number): Promise<Metrics> => restartController({ idleTimeoutMs });

    it('stops the worker of an agent idle for the timeout, says Released and stays Running; a new task starts one', async () => {
      const metrics = await withIdleTimeout(300);
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say hi' }, 'default'));
      await until('the task completed', async () => (await agent()).status.taskStatus === 'Complete');
      const done = Date.now();
      await until('the worker is gone', async () => (await runtime.status(ref)).phase === 'Absent', 5_000);
      expect(Date.now() - done, 'not before the timeout').to.be.at.least(250);
      await until('WorkerReady says Released', async () => (await workerReady())?.reason === 'Released');
      expect(await workerReady()).to.deep.equal({
        status: 'False',
        reason: 'Released',
        message: 'no worker: released after 0.3s without a task; the next task starts one',
      });
      expect((await agent()).status.status).to.equal('Running');
      expect((await metrics.registry.getSingleMetricAsString('agentplane_workers_released_total')).trim().split('\n').at(-1)).to.equal(
        'agentplane_workers_released_total 1',
      );
      await sleep(100);
      await controller.idle();
      expect(runtime.started, 'not started again without a task').to.have.length(1);

      const resumeFrom = (await agent()).status.sessionId;
      await agents.update('default', 'alpha', (a) => {
        a.spec.instructions = '@say again';
      });
      await until('the second task completed', async () => (await agent()).status.observedTask === 2 && (await agent()).status.taskStatus === 'Complete');
      expect(runtime.started).to.have.length(2);
      expect(runtime.dispatched.at(-1)?.task).to.include({ taskId: 2, ...(resumeFrom ? { resume: resumeFrom } : {}) });
      expect(await workerReady()).to.include({ status: 'True', reason: 'Connected' });
    });

    it('takes the agent’s own timeout from its annotation (kubectl annotate), and refuses a bad one', async () => {
      await withIdleTimeout(0);
      const a = agentFromRequest({ name: 'alpha', instructions: '@say hi' }, 'default');
      a.metadata.annotations = { [IDLE_TIMEOUT_ANNOTATION]: 'soon' };
      const refused = await agents.create(a).catch((err: unknown) => err);
      expect(refused).to.be.instanceOf(ApiError);
      expect((refused as ApiError).details.causes?.[0]?.field).to.equal(`metadata.annotations[${IDLE_TIMEOUT_ANNOTATION}]`);

      a.metadata.annotations = { [IDLE_TIMEOUT_ANNOTATION]: '0.2' };
      await agents.create(a);
      await until('WorkerReady says Released', async () => (await workerReady())?.reason === 'Released', 5_000);
      expect((await runtime.status(ref)).phase).to.equal('Absent');
    });

    it('never releases with a timeout of 0, nor while a task runs', async () => {
      await withIdleTimeout(0);
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say hi' }, 'default'));
      await until('the task completed', async () => (await agent()).status.taskStatus === 'Complete');
      await sleep(300);
      await controller.idle();
      expect((await runtime.status(ref)).phase).to.equal('Ready');

      await withIdleTimeout(100);
      await agents.update('default', 'alpha', (a) => {
        a.spec.instructions = '@hold';
      });
      await until('the task is running', async () => (await runtime.status(ref)).runningTask === 2);
      await sleep(400);
      await controller.idle();
      expect((await runtime.status(ref)).phase, 'a busy worker stays').to.equal('Ready');
    });
  });

  describe('worker slots (--max-workers)', () => {
    const withMaxWorkers = (maxWorkers: number): Promise<Metrics> => restartController({ admission: { maxWorkers } });
    const gauge = async (metrics: Metrics, name: string): Promise<string | undefined> =>
      (await metrics.registry.getSingleMetricAsString(name)).trim().split('\n').at(-1);

    it('queues an agent while every slot runs a task, and starts it once one ends (the idle worker makes room)', async () => {
      const metrics = await withMaxWorkers(1);
      expect(await gauge(metrics, 'agentplane_worker_slots')).to.equal('agentplane_worker_slots 1');
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@hold' }, 'default'));
      await until('alpha runs its task', async () => (await runtime.status(ref)).runningTask === 1);
      await agents.create(agentFromRequest({ name: 'beta', instructions: '@say my turn' }, 'default'));
      await until('beta waits', async () => (await workerReady('beta'))?.reason === 'Queued');
      expect((await workerReady('beta'))?.message).to.equal('waiting for a worker: all 1 allowed (--max-workers) are busy');
      expect(await gauge(metrics, 'agentplane_workers_waiting')).to.equal('agentplane_workers_waiting 1');
      expect(runtime.started.map((s) => s.ref.name)).to.deep.equal(['alpha']);

      await cancel('alpha');
      await until('beta completed', async () => (await get('beta')).status.taskStatus === 'Complete', 5_000);
      expect(runtime.started.map((s) => s.ref.name)).to.deep.equal(['alpha', 'beta']);
      expect((await runtime.status(ref)).phase, 'alpha gave its worker up').to.equal('Absent');
      expect(await workerReady('alpha')).to.deep.include({ status: 'False', reason: 'Released' });
      // Released by its own pass as its task ended, or by beta's next look: either way for beta.
      expect((await workerReady('alpha'))?.message).to.match(/^no worker: released to make room for (a waiting agent|agent beta) \(all 1 workers were in use/);
      expect(await gauge(metrics, 'agentplane_workers_waiting')).to.equal('agentplane_workers_waiting 0');
      const starts = (await metrics.registry.getSingleMetricAsString('agentplane_worker_start_seconds'))
        .split('\n')
        .find((l) => l.startsWith('agentplane_worker_start_seconds_count'));
      expect(starts, 'both workers timed from the ask to connected').to.equal('agentplane_worker_start_seconds_count 2');
    });

    it('releases the worker idle the longest for a newcomer; a busy one is never released', async () => {
      await withMaxWorkers(2);
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@say first' }, 'default'));
      await until('alpha completed', async () => (await get('alpha')).status.taskStatus === 'Complete');
      await agents.create(agentFromRequest({ name: 'beta', instructions: '@hold' }, 'default'));
      await until('beta runs its task', async () => (await runtime.status(refOf('beta'))).runningTask === 1);

      await agents.create(agentFromRequest({ name: 'gamma', instructions: '@say third' }, 'default'));
      await until('gamma completed', async () => (await get('gamma')).status.taskStatus === 'Complete');
      expect((await runtime.status(ref)).phase, 'idle alpha made room').to.equal('Absent');
      expect((await workerReady('alpha'))?.message).to.equal(
        'no worker: released to make room for agent gamma (all 2 workers were in use, --max-workers); the next task starts one',
      );
      expect((await runtime.status(refOf('beta'))).runningTask, 'busy beta kept its worker').to.equal(1);

      // alpha's next task: gamma is idle now and gives way; alpha resumes where it was.
      await agents.update('default', 'alpha', (a) => {
        a.spec.instructions = '@say again';
      });
      await until(
        'alpha’s second task completed',
        async () => (await get('alpha')).status.observedTask === 2 && (await get('alpha')).status.taskStatus === 'Complete',
      );
      expect((await runtime.status(refOf('gamma'))).phase).to.equal('Absent');
      expect((await get('alpha')).status.status).to.equal('Running');
    });

    it('a waiting agent put to sleep gives up its place in line', async () => {
      const metrics = await withMaxWorkers(1);
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@hold' }, 'default'));
      await until('alpha runs its task', async () => (await runtime.status(ref)).runningTask === 1);
      await agents.create(idleAgent('beta'));
      await until('beta waits', async () => (await workerReady('beta'))?.reason === 'Queued');
      await setAsleep('beta', true);
      await until('beta stopped waiting', async () => (await workerReady('beta'))?.reason === 'Stopped');
      expect(await gauge(metrics, 'agentplane_workers_waiting')).to.equal('agentplane_workers_waiting 0');
      expect(runtime.started.map((s) => s.ref.name)).to.deep.equal(['alpha']);
    });
  });

  describe('squads', () => {
    const squadOf = (name: string, members: string[]): Squad => ({
      apiVersion: '',
      kind: SQUAD_KIND,
      metadata: { name, namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
      spec: { members: members.map((m) => ({ ref: { name: m } })), orphanTTL: '', breakUp: false },
      status: { phase: 'Pending' },
    });

    it('runs members in one group; one waking brings up the others idle (wakeIdle); all asleep, the group is gone', async () => {
      for (const n of ['m1', 'm2']) {
        await agents.create(idleAgent(n));
        await setAsleep(n, true);
      }
      await until('both are Sleeping without workers', async () => {
        const states = await Promise.all(['m1', 'm2'].map(async (n) => [(await get(n)).status.status, (await runtime.status(refOf(n))).phase]));
        return states.every(([s, p]) => s === 'Sleeping' && p === 'Absent');
      });
      await squads.create(squadOf('crew', ['m1', 'm2']));
      expect(claimOf(await get('m1'))).to.equal('crew');
      expect(claimOf(await get('m2'))).to.equal('crew');
      await sleep(30);
      await controller.idle();
      expect(runtime.groups(), 'no group while every member sleeps').to.deep.equal([]);

      // A task wakes m1.
      await agents.update('default', 'm1', (a) => {
        a.spec.instructions = '@hold';
      });
      await until('m1 runs its task', async () => (await runtime.status(refOf('m1'))).runningTask === 1);
      await until('m2 is up in the group', async () => (await runtime.status(refOf('m2'))).phase === 'Ready');
      expect(runtime.groups()).to.deep.equal(['squad:default/crew']);
      expect(runtime.worker(refOf('m1'))).to.deep.include({ group: 'squad:default/crew', wakeIdle: false });
      expect(runtime.worker(refOf('m1'))?.peers).to.have.members(['m1', 'm2']);
      expect(runtime.worker(refOf('m2'))).to.deep.include({ group: 'squad:default/crew', wakeIdle: true });
      expect((await get('m2')).status.status, 'm2 still sleeps').to.equal('Sleeping');
      expect(runtime.dispatched.map((d) => d.ref.name)).to.deep.equal(['m1']);

      // m1's task ends; it is asleep again (Asleep still True), so every member sleeps.
      await cancel('m1');
      await until('m1 is settled', async () => (await get('m1')).status.taskStatus === 'Cancelled');
      await until('the group is gone', async () => runtime.groups().length === 0);
      expect((await runtime.status(refOf('m1'))).phase).to.equal('Absent');
      expect((await runtime.status(refOf('m2'))).phase).to.equal('Absent');
      expect((await get('m1')).status.status).to.equal('Sleeping');
    });
  });

  describe('a new leader (or a restarted server) with tasks that were running', () => {
    /** The controller of the next leader: same storage and runtime, started afresh. */
    async function nextLeader(resumeGraceMs: number): Promise<void> {
      controller.stop();
      await startController({ resumeGraceMs });
    }

    it('leaves a task whose worker still runs it to that worker, whose events it goes on recording', async () => {
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@hold' }, 'default'));
      await until('the task is running', async () => (await runtime.status(ref)).runningTask === 1);
      await nextLeader(50);
      // Past the grace period: the worker (a pod that outlived the leader) still runs the task.
      await new Promise((r) => setTimeout(r, 300));
      expect((await agent()).status.taskStatus).to.equal('InProgress');
      expect(await history()).to.not.include('1:error');
      // The stream goes on under the new leader: a cancel reaches the worker, its answer is recorded.
      await agents.update(ref.namespace, ref.name, (a) => requestCancel(a, 'enough'));
      await until('the task is cancelled', async () => (await agent()).status.taskStatus === 'Cancelled');
      expect((await history()).at(-1)).to.equal('1:task_cancelled');
    });

    it('settles a task whose worker is gone as interrupted', async () => {
      await agents.create(agentFromRequest({ name: 'alpha', instructions: '@hold' }, 'default'));
      await until('the task is running', async () => (await runtime.status(ref)).runningTask === 1);
      controller.stop();
      await runtime.stop(ref); // the worker died with the old leader (a local worker process)
      await nextLeader(60_000);
      await until('the task is settled', async () => (await agent()).status.taskStatus === 'Error');
      expect((await agent()).status.lastTaskMessage).to.contain('interrupted');
    });
  });
});
