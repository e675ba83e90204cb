// The schedule controller's reconcile on a fake clock, against real registries (SQLite) and
// informers: what a due run does under each concurrencyPolicy with a busy or idle agent, that a
// run is given once however often it reconciles, and that a run claimed and given just before a
// crash (the agent carries its key) is recorded, not given again.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Agent, AgentSpec } from '../../pkg/api/agent.js';
import { cancelRequested } from '../../pkg/api/agent-annotations.js';
import { type Schedule, SCHEDULED_RUN_ANNOTATION, type ScheduleSpec } from '../../pkg/api/schedule.js';
import { ScheduleController } from '../../pkg/controller/schedule-controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { Registry } from '../../pkg/registry/registry.js';
import { scheduleStrategy } from '../../pkg/registry/schedule/strategy.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { StoredObject } from '../../pkg/registry/store.js';
import { until } from '../support/waiting.js';

const meta = (name: string) => ({ name, namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' });

describe('ScheduleController (fake clock)', function () {
  this.timeout(10_000);
  let dir: string;
  let state: SqliteState;
  let agents: Registry<Agent>;
  let schedules: Registry<Schedule>;
  let informers: { agents: Informer<Agent>; schedules: Informer<Schedule> };
  let controller: ScheduleController;
  let clock: number;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-sched-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
    schedules = new Registry<Schedule>(state.store<Schedule>('Schedule'), scheduleStrategy);
    const logger = createLogger({ level: 'silent' });
    informers = { agents: new Informer(agents, logger), schedules: new Informer(schedules, logger) };
    await Promise.all([informers.agents.start(), informers.schedules.start()]);
    clock = Date.now();
    controller = new ScheduleController({ agents, schedules, informers, logger, now: () => clock });
  });

  afterEach(() => {
    controller.stop();
    informers.agents.stop();
    informers.schedules.stop();
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Waits until the informer shows what the registry stored. */
  const seen = async <T extends StoredObject>(informer: Informer<T>, obj: T): Promise<T> => {
    await until('informer caught up', () => informer.get(obj.metadata.namespace, obj.metadata.name)?.metadata.resourceVersion === obj.metadata.resourceVersion);
    return obj;
  };
  const agent = async (name: string, busy: boolean): Promise<Agent> => {
    const a = await agents.create({ apiVersion: '', kind: '', metadata: meta(name), spec: { instructions: 'first' } as AgentSpec, status: undefined as never });
    if (busy) return seen(informers.agents, a);
    return settle(name);
  };
  const settle = async (name: string): Promise<Agent> =>
    seen(
      informers.agents,
      await agents.updateStatus('default', name, (s, obj) => {
        s.taskStatus = 'Complete';
        s.observedTask = obj.spec.task;
      }),
    );
  /** A schedule every minute, created a minute ago: its latest due time is at most a minute old. */
  const schedule = async (name: string, spec: Partial<ScheduleSpec>): Promise<Schedule> => {
    const s = await schedules.create({
      apiVersion: '',
      kind: '',
      metadata: meta(name),
      spec: { agent: 'worker', cron: '* * * * *', instructions: 'scheduled', ...spec } as ScheduleSpec,
      status: {},
    });
    clock = Date.parse(s.metadata.creationTimestamp) + 61_000;
    return s;
  };
  const reconcile = async (name: string): Promise<Schedule> => {
    await controller.reconcile({ namespace: 'default', name });
    return (await schedules.get('default', name))!;
  };

  it('an idle agent gets the due run once, however often it reconciles; the next due time is set', async () => {
    await agent('worker', false);
    await schedule('s', {});
    const s = await reconcile('s');
    expect(s.status.lastRun).to.deep.include({ outcome: 'Started', task: 2 });
    expect(s.status.pendingRun).to.equal(undefined);
    expect(Date.parse(s.status.nextScheduleTime!)).to.be.above(clock);
    const a = await seen(informers.agents, (await agents.get('default', 'worker'))!);
    expect(a.spec).to.include({ task: 2, instructions: 'scheduled' });
    expect(a.metadata.annotations?.[SCHEDULED_RUN_ANNOTATION]).to.equal(`s@${s.status.lastScheduleTime}`);
    await reconcile('s');
    await reconcile('s');
    expect((await agents.get('default', 'worker'))!.spec.task).to.equal(2);
    // Its task's end becomes the run's outcome.
    await settle('worker');
    expect((await reconcile('s')).status.lastRun).to.deep.include({ outcome: 'Complete', task: 2 });
  });

  it('Forbid skips a busy agent and records why', async () => {
    await agent('worker', true);
    await schedule('s', { concurrencyPolicy: 'Forbid' });
    const s = await reconcile('s');
    expect(s.status.lastRun).to.deep.include({ outcome: 'Skipped' });
    expect(s.status.lastRun!.reason).to.contain('busy with task 1');
    expect(s.status.pendingRun).to.equal(undefined);
    expect((await agents.get('default', 'worker'))!.spec.task).to.equal(1);
  });

  it("Allow queues the run behind the busy agent's task and starts it once the task ends", async () => {
    await agent('worker', true);
    await schedule('s', { concurrencyPolicy: 'Allow' });
    let s = await reconcile('s');
    expect(s.status.lastRun).to.deep.include({ outcome: 'Queued' });
    expect(s.status.pendingRun).to.not.equal(undefined);
    expect(cancelRequested((await agents.get('default', 'worker'))!)).to.equal(undefined);
    await settle('worker');
    s = await reconcile('s');
    expect(s.status.lastRun).to.deep.include({ outcome: 'Started', task: 2 });
    expect(s.status.pendingRun).to.equal(undefined);
  });

  it("Replace cancels the busy agent's task, then starts the run", async () => {
    await agent('worker', true);
    await schedule('s', { concurrencyPolicy: 'Replace' });
    const s = await reconcile('s');
    expect(s.status.lastRun).to.deep.include({ outcome: 'Queued' });
    expect(s.status.pendingRun).to.deep.include({ replacing: 1 });
    expect(cancelRequested((await agents.get('default', 'worker'))!)?.reason).to.contain('replaced by a run of schedule "s"');
    await settle('worker');
    expect((await reconcile('s')).status.lastRun).to.deep.include({ outcome: 'Started', task: 2 });
  });

  it('a run claimed and given before a crash is recorded, not given again', async () => {
    await agent('worker', false);
    await schedule('s', {});
    const time = new Date(Math.floor(clock / 60_000) * 60_000).toISOString();
    // What a reconcile stopped between giving the task and recording it leaves behind.
    await schedules.updateStatus('default', 's', (st) => {
      st.lastScheduleTime = time;
      st.pendingRun = { time };
    });
    await seen(
      informers.agents,
      await agents.update('default', 'worker', (a) => {
        a.spec.instructions = 'scheduled';
        a.spec.task += 1;
        a.metadata.annotations = { [SCHEDULED_RUN_ANNOTATION]: `s@${time}` };
      }),
    );
    const s = await reconcile('s');
    expect(s.status.lastRun).to.deep.include({ outcome: 'Started', task: 2, time });
    expect((await agents.get('default', 'worker'))!.spec.task).to.equal(2);
  });

  it('a missing agent fails the run and the Ready condition says so', async () => {
    await schedule('s', { agent: 'nobody' });
    const s = await reconcile('s');
    expect(s.status.lastRun).to.deep.include({ outcome: 'Failed' });
    expect(s.status.conditions?.find((c) => c.type === 'Ready')).to.deep.include({ status: 'False', reason: 'AgentNotFound' });
  });
});
