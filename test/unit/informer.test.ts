import { FINALIZER_AGENT_CLEANUP } from '../../pkg/api/deletion.js';
import { expect } from 'chai';

import type { Agent } from '../../pkg/api/agent.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer, type EventHandler, type InformerSource } from '../../pkg/registry/cache/informer.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { idleAgentDraft } from '../support/objects.js';

const logger = createLogger({ level: 'silent' });

const draft = idleAgentDraft;

const names = (objs: Agent[]): string[] => objs.map((o) => o.metadata.name).sort();

/** Records handler calls as strings, e.g. "add a", "update a 3->4", "delete a". */
function recorder(): { log: string[]; handler: EventHandler<Agent> } {
  const log: string[] = [];
  return {
    log,
    handler: {
      add: (o) => void log.push(`add ${o.metadata.name}`),
      update: (old, o) => void log.push(`update ${o.metadata.name} ${old.metadata.resourceVersion}->${o.metadata.resourceVersion}`),
      delete: (o) => void log.push(`delete ${o.metadata.name}`),
    },
  };
}

describe('Informer (on SqliteState)', function () {
  this.timeout(10_000);

  let state: SqliteState;
  let agents: Registry<Agent>;
  let informer: Informer<Agent> | undefined;

  beforeEach(() => {
    state = new SqliteState(':memory:');
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
  });

  afterEach(() => {
    informer?.stop();
    informer = undefined;
    state.close();
  });

  it('lists on start, resolves once synced, and answers get/list from the cache', async () => {
    await agents.create(draft('a'));
    await agents.create(draft('b', {}, 'other'));
    informer = new Informer(agents, logger);
    expect(informer.hasSynced()).to.equal(false);
    const { log, handler } = recorder();
    informer.addHandler(handler);

    await informer.start();
    expect(informer.hasSynced()).to.equal(true);
    expect(names(informer.list())).to.deep.equal(['a', 'b']);
    expect(names(informer.list('other'))).to.deep.equal(['b']);
    expect(informer.get('default', 'a')?.metadata.name).to.equal('a');
    expect(informer.get('other', 'a')).to.equal(undefined);
    expect(log.sort()).to.deep.equal(['add a', 'add b']);
    // start() again is the same, finished, start: no second list, no second add.
    await informer.start();
    expect(log).to.have.length(2);
  });

  it('keeps the cache current and tells handlers of adds, updates and deletes', async () => {
    informer = new Informer(agents, logger);
    const { log, handler } = recorder();
    informer.addHandler(handler);
    await informer.start();

    const a = await agents.create(draft('a'));
    expect(informer.get('default', 'a')?.metadata.resourceVersion).to.equal(a.metadata.resourceVersion);
    const a2 = await agents.update('default', 'a', (o) => void (o.spec.instructions = 'something else'));
    expect(informer.get('default', 'a')?.spec.instructions).to.equal('something else');
    const a3 = await agents.delete('default', 'a'); // marked: its finalizer holds it
    await agents.removeFinalizer('default', 'a', FINALIZER_AGENT_CLEANUP);
    expect(informer.get('default', 'a')).to.equal(undefined);
    expect(informer.list()).to.deep.equal([]);
    expect(log).to.deep.equal([
      'add a',
      `update a ${a.metadata.resourceVersion}->${a2.metadata.resourceVersion}`,
      `update a ${a2.metadata.resourceVersion}->${a3.metadata.resourceVersion}`,
      'delete a',
    ]);
  });

  it('gives a handler added after sync synthetic adds for what is cached, then live events; unsubscribe ends them', async () => {
    await agents.create(draft('a'));
    await agents.create(draft('b'));
    informer = new Informer(agents, logger);
    await informer.start();

    const { log, handler } = recorder();
    const unsubscribe = informer.addHandler(handler);
    expect([...log].sort()).to.deep.equal(['add a', 'add b']);
    await agents.create(draft('c'));
    expect(log[2]).to.equal('add c');
    unsubscribe();
    await agents.create(draft('d'));
    expect(log).to.have.length(3);
  });

  it('a throwing handler does not keep other handlers or the cache from a change', async () => {
    informer = new Informer(agents, logger);
    await informer.start();
    informer.addHandler({
      add: () => {
        throw new Error('boom');
      },
    });
    const { log, handler } = recorder();
    informer.addHandler(handler);
    await agents.create(draft('a'));
    expect(log).to.deep.equal(['add a']);
    expect(informer.get('default', 'a')).to.not.equal(undefined);
  });

  it('maintains indexes across adds, updates and deletes, including one added after sync', async () => {
    await agents.create(draft('a', { team: 'red' }));
    informer = new Informer(agents, logger);
    informer.addIndex('team', (o) => (o.metadata.labels?.team ? [o.metadata.labels.team] : []));
    await informer.start();
    informer.addIndex('namespace', (o) => [o.metadata.namespace]);
    expect(() => informer!.addIndex('team', () => [])).to.throw(/already exists/);
    expect(() => informer!.byIndex('nope', 'x')).to.throw(/no index/);

    expect(names(informer.byIndex('team', 'red'))).to.deep.equal(['a']);
    expect(names(informer.byIndex('namespace', 'default'))).to.deep.equal(['a']);

    await agents.create(draft('b', { team: 'red' }));
    await agents.create(draft('c', { team: 'blue' }, 'other'));
    expect(names(informer.byIndex('team', 'red'))).to.deep.equal(['a', 'b']);
    expect(names(informer.byIndex('namespace', 'other'))).to.deep.equal(['c']);

    await agents.update('default', 'a', (o) => void (o.metadata.labels = { team: 'blue' }));
    expect(names(informer.byIndex('team', 'red'))).to.deep.equal(['b']);
    expect(names(informer.byIndex('team', 'blue'))).to.deep.equal(['a', 'c']);
    // The indexed object is the current one, not a stale copy.
    expect(informer.byIndex('team', 'blue').find((o) => o.metadata.name === 'a')?.metadata.labels).to.deep.equal({ team: 'blue' });

    await agents.delete('default', 'b').then(() => agents.removeFinalizer('default', 'b', FINALIZER_AGENT_CLEANUP));
    expect(informer.byIndex('team', 'red')).to.deep.equal([]);
    expect(informer.byIndex('team', 'green')).to.deep.equal([]);
  });

  it('relists when the watch from the list is expired (410), announcing only the differences', async () => {
    await agents.create(draft('a'));
    await agents.create(draft('b'));
    await agents.create(draft('c'));
    let lists = 0;
    // The real store, with a gap between the first list and its watch long enough for the
    // store's watch window (1000 changes) to move past the list's resourceVersion.
    const source: InformerSource<Agent> = {
      list: async (filter) => {
        const res = await agents.list(filter);
        if (++lists === 1) {
          for (let i = 0; i < 1010; i++) await agents.updateStatus('default', 'a', (s) => void (s.lastTaskMessage = `m${i}`));
          await agents.delete('default', 'b').then(() => agents.removeFinalizer('default', 'b', FINALIZER_AGENT_CLEANUP));
          await agents.create(draft('d'));
        }
        return res;
      },
      watch: (fn, opts) => agents.watch(fn, opts),
    };
    informer = new Informer(source, logger);
    const { log, handler } = recorder();
    informer.addHandler(handler);
    await informer.start();
    expect(log.sort()).to.deep.equal(['add a', 'add b', 'add c']);
    log.length = 0;

    const deadline = Date.now() + 2000;
    while (lists < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(lists, 'relisted').to.equal(2);
    expect(names(informer.list())).to.deep.equal(['a', 'c', 'd']);
    expect(informer.get('default', 'a')?.status.lastTaskMessage).to.equal('m1009');
    // c did not change: no event for it.
    expect(log.map((l) => l.replace(/ \d+->\d+$/, '')).sort()).to.deep.equal(['add d', 'delete b', 'update a']);

    // The watch after the relist is live.
    await agents.create(draft('e'));
    expect(informer.get('default', 'e')).to.not.equal(undefined);
    expect(log).to.include('add e');
  });

  it('stop() ends the watch', async () => {
    informer = new Informer(agents, logger);
    await informer.start();
    informer.stop();
    await agents.create(draft('a'));
    expect(informer.get('default', 'a')).to.equal(undefined);
  });
});
