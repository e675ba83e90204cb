import { expect } from 'chai';
import type { Squad } from '../../pkg/api/squad.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { SquadIndex } from '../../pkg/registry/squad/index.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';

const squad = (name: string, members: string[], namespace = 'default'): Squad => ({
  apiVersion: '',
  kind: 'Squad',
  metadata: { name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
  spec: { members: members.map((m) => ({ ref: { name: m } })), orphanTTL: '', breakUp: false },
  status: { phase: 'Pending' },
});

describe('SquadIndex', () => {
  let state: SqliteState;
  let squads: Registry<Squad>;
  let index: SquadIndex;
  let changes: [string, string, string[]][];

  beforeEach(async () => {
    state = new SqliteState(':memory:');
    squads = new Registry<Squad>(state.store<Squad>('Squad'), squadStrategy);
    await squads.create(squad('early', ['ann', 'ben']));
    index = new SquadIndex(squads);
    changes = [];
    index.onChange((ns, s, touched) => changes.push([ns, s, touched]));
    await index.start();
  });
  afterEach(() => {
    index.stop();
    state.close();
  });

  it('knows squads that existed before it started', () => {
    expect(index.squadOf('default', 'ann')).to.equal('early');
    expect(index.membersOf('default', 'early')).to.deep.equal(['ann', 'ben']);
    expect(index.squadOf('other', 'ann')).to.equal(undefined);
  });

  it('follows changes and announces every agent they touched', async () => {
    await squads.create(squad('late', ['cat', 'dan'], 'team'));
    expect(index.squadOf('team', 'cat')).to.equal('late');
    await squads.update('default', 'early', (s) => {
      s.spec.members = [{ ref: { name: 'ann' } }, { ref: { name: 'eli' } }];
    });
    expect(index.squadOf('default', 'ben')).to.equal(undefined);
    expect(index.squadOf('default', 'eli')).to.equal('early');
    await squads.delete('default', 'early');
    expect(index.squadOf('default', 'ann')).to.equal(undefined);
    expect(changes.slice(-3)).to.deep.equal([
      ['team', 'late', ['cat', 'dan']],
      ['default', 'early', ['ann', 'ben', 'eli']],
      ['default', 'early', ['ann', 'eli']],
    ]);
  });
});
