import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { testPluginContext } from '../support/plugin-context.js';

import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';
import { CORE_NEEDS, DEFAULT_PLUGINS, loadPlugins as load, PluginError, type LoadedPlugins } from '../../pkg/plugin/loader.js';
import type { PluginContext } from '../../pkg/plugin/types.js';
import type { EventStore } from '../../pkg/registry/events.js';
import { rejection } from '../support/assert.js';

/** The loader as cmd/ calls it: with the built-in table. */
const loadPlugins = (names: string[], ctx: PluginContext): Promise<LoadedPlugins> => load(names, ctx, BUILTIN_PLUGINS);

const fixture = (file: string): string => fileURLToPath(new URL(`../fixtures/plugins/${file}`, import.meta.url));
/** The same fixture as a path relative to the working directory, starting with "./". */
const relFixture = (file: string): string => {
  const rel = path.relative(process.cwd(), fixture(file));
  return rel.startsWith('.') ? rel : `./${rel}`;
};

describe('plugin loader', function () {
  this.timeout(10_000);

  let dir: string;
  let log: string[];
  let provided: EventStore[];
  let ctx: PluginContext;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-plugins-'));
    log = [];
    provided = [];
    ctx = testPluginContext({
      config: { dataDir: dir, options: { recorder: log } },
      provideEventStore: (s) => void provided.push(s),
    });
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('DEFAULT_PLUGINS are the sqlite event store, then sleep-wake', () => {
    expect(DEFAULT_PLUGINS).to.deep.equal(['event-store-sqlite', 'sleep-wake']);
  });

  it('loads every default plugin by name; sleep-wake registers its admission plugin and a controller', async () => {
    const admitted: string[] = [];
    const controllers: string[] = [];
    const loaded = await loadPlugins(DEFAULT_PLUGINS, {
      ...ctx,
      admission: { register: (p) => void admitted.push(p.name) },
      controller: (spec) => (controllers.push(spec.name), ctx.controller(spec)),
    });
    expect(loaded.names).to.deep.equal(DEFAULT_PLUGINS);
    expect(admitted).to.deep.equal(['AutoDeleteTask']);
    expect(controllers).to.deep.equal(['sleep-wake']);
    await loaded.teardown();
  });

  it('knows no built-in plugin without the table cmd/ passes: pkg/ names none', async () => {
    const err = await rejection(load(['sleep-wake'], ctx), PluginError);
    expect(err.message).to.match(/^plugin "sleep-wake": cannot be loaded/);
  });

  it('loads the built-in event-store-sqlite by name: it provides a working event store', async () => {
    const loaded = await loadPlugins(['event-store-sqlite'], ctx);
    try {
      expect(loaded.names).to.deep.equal(['event-store-sqlite']);
      expect(provided).to.have.length(1);
      const store = provided[0];
      const ev = await store.append({ namespace: 'default', name: 'a', uid: 'u' }, { type: 'text', payload: { content: 'hi' } });
      expect(ev.seq).to.equal(1);
      expect(fs.existsSync(path.join(dir, 'events.db'))).to.equal(true);
    } finally {
      await loaded.teardown();
    }
    // Teardown closed the store.
    let closedErr: unknown;
    try {
      await provided[0].lastSeq({ namespace: 'default', name: 'a', uid: 'u' });
    } catch (e) {
      closedErr = e;
    }
    expect(closedErr).to.be.instanceOf(Error);
  });

  it('loads nothing for an empty list', async () => {
    const loaded = await loadPlugins([], ctx);
    expect(loaded.names).to.deep.equal([]);
    await loaded.teardown();
  });

  it('rejects an unknown name with a PluginError naming it and listing the built-ins', async () => {
    const err = await rejection(loadPlugins(['no-such-plugin-xyz'], ctx), PluginError);
    expect(err.plugin).to.equal('no-such-plugin-xyz');
    expect(err.name).to.equal('PluginError');
    expect(err.message).to.match(/^plugin "no-such-plugin-xyz": cannot be loaded/);
    expect(err.message).to.contain('built-in plugins are: event-store-sqlite');
  });

  it('rejects a module path that does not exist', async () => {
    const missing = path.join(dir, 'missing-plugin.js');
    const err = await rejection(loadPlugins([missing], ctx), PluginError);
    expect(err.plugin).to.equal(missing);
    expect(err.message).to.contain('cannot be loaded');
  });

  it('loads third-party plugins by absolute and relative path, in order, and tears down in reverse', async () => {
    const loaded = await loadPlugins([fixture('good-a.js'), relFixture('good-b.js'), fixture('no-teardown.js'), 'event-store-sqlite'], ctx);
    expect(loaded.names).to.deep.equal(['fixture-a', 'fixture-b', 'fixture-no-teardown', 'event-store-sqlite']);
    expect(log).to.deep.equal(['setup:fixture-a', 'setup:fixture-b', 'setup:fixture-no-teardown']);
    expect(provided).to.have.length(1);
    await loaded.teardown();
    expect(log.slice(3)).to.deep.equal(['teardown:fixture-b', 'teardown:fixture-a']);
  });

  it('loads plugins in the configured order (reversed list, reversed setups)', async () => {
    const loaded = await loadPlugins([relFixture('good-b.js'), fixture('good-a.js')], ctx);
    expect(loaded.names).to.deep.equal(['fixture-b', 'fixture-a']);
    await loaded.teardown();
    expect(log).to.deep.equal(['setup:fixture-b', 'setup:fixture-a', 'teardown:fixture-a', 'teardown:fixture-b']);
  });

  it('runs each teardown only once, however often teardown() is called', async () => {
    const loaded = await loadPlugins([fixture('good-a.js'), relFixture('good-b.js')], ctx);
    await loaded.teardown();
    await loaded.teardown();
    expect(log.filter((l) => l.startsWith('teardown:'))).to.deep.equal(['teardown:fixture-b', 'teardown:fixture-a']);
  });

  it('rejects a module without { name, setup } with "must export", after tearing down earlier plugins', async () => {
    const bad = fixture('bad-shape.js');
    const err = await rejection(loadPlugins([fixture('good-a.js'), bad], ctx), PluginError);
    expect(err.plugin).to.equal(bad);
    expect(err.message).to.contain('must export');
    expect(log).to.deep.equal(['setup:fixture-a', 'teardown:fixture-a']);
  });

  it('reports a failing setup as "setup failed" and runs earlier plugins’ teardowns in reverse', async () => {
    const throws = fixture('setup-throws.js');
    const err = await rejection(loadPlugins([fixture('good-a.js'), relFixture('good-b.js'), throws, fixture('no-teardown.js')], ctx), PluginError);
    expect(err.plugin).to.equal(throws);
    expect(err.message).to.contain('setup failed: database unreachable');
    expect(log).to.deep.equal(['setup:fixture-a', 'setup:fixture-b', 'setup:fixture-setup-throws', 'teardown:fixture-b', 'teardown:fixture-a']);
  });

  it('closes an earlier built-in store when a later plugin fails', async () => {
    await rejection(loadPlugins(['event-store-sqlite', fixture('setup-throws.js')], ctx), PluginError);
    expect(provided).to.have.length(1);
    let err: unknown;
    try {
      await provided[0].lastSeq({ namespace: 'n', name: 'a', uid: 'u' });
    } catch (e) {
      err = e;
    }
    expect(err, 'the built-in store was closed by the rollback').to.be.instanceOf(Error);
  });

  it('a LoadedPlugins value exposes names and teardown', async () => {
    const loaded: LoadedPlugins = await loadPlugins([fixture('no-teardown.js')], ctx);
    expect(loaded.names).to.deep.equal(['fixture-no-teardown']);
    await loaded.teardown();
    expect(log).to.deep.equal(['setup:fixture-no-teardown']);
  });

  it('refuses a configuration without a plugin the core needs (the Asleep condition), rolling back the others', async () => {
    const err = await rejection(load(['event-store-sqlite', fixture('good-a.js')], ctx, BUILTIN_PLUGINS, CORE_NEEDS), Error);
    expect(err.message).to.contain('condition/Asleep').and.to.contain('"sleep-wake"').and.to.contain('--plugins');
    expect(log).to.deep.equal(['setup:fixture-a', 'teardown:fixture-a']);
  });

  it('loads the default plugins with the core needs met', async () => {
    const loaded = await load(DEFAULT_PLUGINS, ctx, BUILTIN_PLUGINS, CORE_NEEDS);
    expect(loaded.names).to.deep.equal(DEFAULT_PLUGINS);
    await loaded.teardown();
  });
});
