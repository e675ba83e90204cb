// Writes read the informer's cache first (pkg/registry/first-reads.ts): with a current cache no
// storage read at all; with a stale one (another writer on the same database, which this
// process's cache does not hear of) the write still lands on storage's latest object.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Agent, AgentSpec } from '../../pkg/api/agent.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { Store } from '../../pkg/registry/store.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { ApiError } from '../../pkg/api/errors.js';
import { rejection } from '../support/assert.js';

const logger = createLogger({ level: 'silent' });

function draft(name: string, spec: Partial<AgentSpec> = {}): Agent {
  return {
    apiVersion: '',
    kind: '',
    metadata: { name, namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    spec: { instructions: 'do the thing', ...spec } as AgentSpec,
    status: undefined as unknown as Agent['status'],
  };
}

/** The store, counting its reads of one object. */
function counted(store: Store<Agent>): { store: Store<Agent>; gets: () => number } {
  let n = 0;
  const get = store.get.bind(store);
  store.get = (namespace, name) => {
    n++;
    return get(namespace, name);
  };
  return { store, gets: () => n };
}

describe('Registry: writes read the cache first', function () {
  this.timeout(10_000);
  let dir: string;
  let mine: SqliteState;
  let other: SqliteState;
  let informer: Informer<Agent>;
  let agents: Registry<Agent>;
  let gets: () => number;
  /** Another writer: the same database through its own connection, unheard by this process's cache. */
  let elsewhere: Registry<Agent>;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-first-reads-'));
    mine = new SqliteState(path.join(dir, 'state.db'));
    other = new SqliteState(path.join(dir, 'state.db'));
    const c = counted(mine.store<Agent>('Agent'));
    gets = c.gets;
    agents = new Registry<Agent>(c.store, agentStrategy);
    informer = new Informer(agents, logger);
    agents.readFirstFrom(informer);
    await informer.start();
    elsewhere = new Registry<Agent>(other.store<Agent>('Agent'), agentStrategy);
  });
  afterEach(() => {
    informer.stop();
    mine.close();
    other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates, updates and writes status without reading storage while the cache is current', async () => {
    await agents.create(draft('a'));
    await agents.update('default', 'a', (x) => void (x.metadata.labels = { team: 'a' }));
    const written = await agents.updateStatus('default', 'a', (s) => void (s.lastTaskMessage = 'hello'));
    expect(gets()).to.equal(0);
    expect(written.status.lastTaskMessage).to.equal('hello');
    expect(written.metadata.labels).to.deep.equal({ team: 'a' });
    const stored = (await mine.store<Agent>('Agent').get('default', 'a'))!;
    expect([stored.metadata.resourceVersion, stored.status.lastTaskMessage]).to.deep.equal([written.metadata.resourceVersion, 'hello']);
  });

  it('a write over a stale cached copy lands on storage’s latest object, read once', async () => {
    await agents.create(draft('a'));
    await elsewhere.update('default', 'a', (x) => void (x.metadata.labels = { by: 'elsewhere' }));
    const written = await agents.updateStatus('default', 'a', (s) => void (s.lastTaskMessage = 'mine'));
    expect(gets()).to.equal(1);
    expect(written.metadata.labels).to.deep.equal({ by: 'elsewhere' });
    expect(written.status.lastTaskMessage).to.equal('mine');
  });

  it('what a stale cached copy says needs no write is checked against storage', async () => {
    await agents.create(draft('a', {}));
    await agents.update('default', 'a', (x) => void (x.metadata.labels = { team: 'a' }));
    await elsewhere.update('default', 'a', (x) => void delete x.metadata.labels);
    // The cache still shows the label: setting it again looks like no change there.
    const written = await agents.update('default', 'a', (x) => void (x.metadata.labels = { team: 'a' }));
    expect(written.metadata.labels).to.deep.equal({ team: 'a' });
    expect((await other.store<Agent>('Agent').get('default', 'a'))!.metadata.labels).to.deep.equal({ team: 'a' });
  });

  it('a refusal decided on a stale cached copy is decided again on storage’s', async () => {
    await agents.create(draft('a'));
    await elsewhere.update('default', 'a', (x) => void (x.metadata.labels = { ready: 'yes' }));
    const written = await agents.update('default', 'a', (x) => {
      if (x.metadata.labels?.ready !== 'yes') throw new Error('not ready');
      x.metadata.annotations = { go: 'yes' };
    });
    expect(written.metadata.annotations).to.deep.equal({ go: 'yes' });
  });

  it('a create of a name another writer took is refused by storage', async () => {
    await elsewhere.create(draft('taken'));
    const err = await rejection(agents.create(draft('taken')), ApiError);
    expect(err).to.include({ reason: 'AlreadyExists', code: 409 });
  });
});
