// The sleep-wake plugin on a real plugin context (SQLite registries with the admission chain,
// informers, controllers as the service makes them). No agent controller runs: the tests settle
// tasks themselves by writing the status as it would.

import { expect } from 'chai';

import { type Agent, agentFromRequest, ASLEEP, type Lifecycle } from '../../pkg/api/agent.js';
import { findCondition } from '../../pkg/api/condition.js';
import { SQUAD_LABEL } from '../../pkg/api/squad.js';
import { Controller } from '../../pkg/controller/framework/controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { type LoadedPlugins, loadPlugins } from '../../pkg/plugin/loader.js';
import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';
import { AUTO_DELETE_AFTER } from '../../plugins/sleep-wake/sleep-wake.js';
import { type TestPluginContext, testPluginContext } from '../support/plugin-context.js';
import { until } from '../support/waiting.js';

const NS = 'default';

describe('sleep-wake plugin', function () {
  this.timeout(10_000);

  let ctx: TestPluginContext;
  let controllers: Controller[];
  let plugins: LoadedPlugins;
  let cancels: { namespace: string; name: string; reason: string }[];
  let deletes: string[];

  beforeEach(async () => {
    controllers = [];
    cancels = [];
    deletes = [];
    const logger = createLogger({ level: 'silent' });
    ctx = testPluginContext({
      config: { dataDir: '/nonexistent', options: {} },
      provideEventStore: () => undefined,
      controller: (spec) => {
        const c = new Controller({ ...spec, logger });
        controllers.push(c);
        return c;
      },
      operations: {
        cancel: async (namespace, name, reason) => void cancels.push({ namespace, name, reason }),
        delete: async (_ns, name) => void deletes.push(name),
      },
    });
    plugins = await loadPlugins(['sleep-wake'], ctx, BUILTIN_PLUGINS);
    expect(controllers, 'sleep-wake makes one controller').to.have.length(1);
    await Promise.all(controllers.map((c) => c.start()));
  });

  afterEach(async () => {
    controllers.forEach((c) => c.stop());
    ctx.informers.agents.stop();
    ctx.informers.squads.stop();
    await plugins.teardown();
  });

  const agents = (): TestPluginContext['registry']['agents'] => ctx.registry.agents;
  const get = (name: string): Promise<Agent> => agents().mustGet(NS, name);
  const asleep = async (name: string): Promise<string | undefined> => findCondition((await get(name)).status.conditions, ASLEEP)?.status;
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await Promise.all(controllers.map((c) => c.idle()));
    }
  };
  /** An agent whose first task is done (as the agent controller leaves it). */
  async function idle(name: string, labels?: Record<string, string>): Promise<Agent> {
    const a = agentFromRequest({ name, instructions: 'first' }, NS);
    if (labels) a.metadata.labels = labels;
    await agents().create(a);
    return finishTask(name);
  }
  /** An agent working on its first task. */
  async function busy(name: string, labels?: Record<string, string>): Promise<Agent> {
    const a = agentFromRequest({ name, instructions: 'first' }, NS);
    if (labels) a.metadata.labels = labels;
    await agents().create(a);
    return agents().updateStatus(NS, name, (s) => {
      s.observedTask = 1; // handed to the worker, running
    });
  }
  const finishTask = (name: string): Promise<Agent> =>
    agents().updateStatus(NS, name, (s, cur) => {
      s.observedTask = cur.spec.task;
      s.taskStatus = 'Complete';
    });
  const setLifecycle = (name: string, lifecycle: Lifecycle): Promise<Agent> =>
    agents().update(NS, name, (a) => {
      a.spec.lifecycle = lifecycle;
    });

  it('puts an idle agent to sleep: Asleep True, status Sleeping', async () => {
    await idle('alpha');
    expect((await get('alpha')).status.status).to.not.equal('Sleeping');
    await setLifecycle('alpha', 'Sleep');
    await until('Asleep is True', async () => (await asleep('alpha')) === 'True');
    expect((await get('alpha')).status.status).to.equal('Sleeping');
    expect(cancels).to.deep.equal([]);
  });

  it('lets a busy solo agent finish its task before it sleeps, without cancelling it', async () => {
    await busy('alpha');
    await setLifecycle('alpha', 'Sleep');
    await settle();
    expect(await asleep('alpha')).to.not.equal('True');
    expect((await get('alpha')).status.status).to.not.equal('Sleeping');
    expect(cancels, 'a solo agent’s task is not cancelled').to.deep.equal([]);
    await finishTask('alpha');
    await until('Asleep is True', async () => (await asleep('alpha')) === 'True');
    expect((await get('alpha')).status).to.include({ status: 'Sleeping', taskStatus: 'Complete' });
  });

  it('cancels the task of a busy squad member put to sleep', async () => {
    await busy('m1', { [SQUAD_LABEL]: 'crew' });
    await setLifecycle('m1', 'Sleep');
    await until('the cancel is asked for', async () => cancels.length > 0);
    expect(cancels[0]).to.deep.equal({ namespace: NS, name: 'm1', reason: 'put to sleep' });
    expect(await asleep('m1'), 'asleep only once the task is settled').to.not.equal('True');
    // The cancel settles the task; then the member sleeps.
    await agents().updateStatus(NS, 'm1', (s) => {
      s.taskStatus = 'Cancelled';
    });
    await until('Asleep is True', async () => (await asleep('m1')) === 'True');
    expect((await get('m1')).status.status).to.equal('Sleeping');
  });

  it('notes the running task for AutoDelete on a busy agent, the next one on an idle agent', async () => {
    await busy('busy');
    await idle('quiet');
    const b = await setLifecycle('busy', 'AutoDelete');
    const q = await setLifecycle('quiet', 'AutoDelete');
    expect(b.metadata.annotations?.[AUTO_DELETE_AFTER]).to.equal('1');
    expect(q.metadata.annotations?.[AUTO_DELETE_AFTER]).to.equal('2');
    // The busy agent's task completes: it is deleted; the quiet one waits for its next task.
    await finishTask('busy');
    await until('busy is deleted', async () => deletes.includes('busy'));
    await settle();
    expect(deletes).to.deep.equal(['busy']);
  });

  it('shows an agent given a task while asleep awake at once, and resets its lifecycle Sleep', async () => {
    await idle('alpha');
    await setLifecycle('alpha', 'Sleep');
    await until('Asleep is True', async () => (await asleep('alpha')) === 'True');
    expect((await get('alpha')).status.status).to.equal('Sleeping');
    const woken = await agents().update(NS, 'alpha', (a) => {
      a.spec.instructions = 'wake up and work';
    });
    expect(woken.spec.task).to.equal(2);
    expect(woken.spec.lifecycle).to.equal('');
    expect(woken.status.status).to.not.equal('Sleeping');
    expect(woken.status.taskStatus).to.equal('InProgress');
    await until('Asleep is False', async () => (await asleep('alpha')) === 'False');
    // Finishing the task does not put it back to sleep: Sleep was an action, now done.
    await finishTask('alpha');
    await settle();
    expect(await asleep('alpha')).to.equal('False');
    expect((await get('alpha')).status.status).to.not.equal('Sleeping');
  });
});
