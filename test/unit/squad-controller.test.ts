// The squad controller against real storage: registries on SQLite with the admission chain wired
// as serve.ts wires it (ConnectorsExist, SquadMembership), shared informers with the membership
// indexes, and cancel as a request on the agent. No agent controller runs: the tests set the
// agents' state (asleep, busy) themselves.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { type Agent, agentFromRequest, ASLEEP, isBusy } from '../../pkg/api/agent.js';
import { CANCEL_TASK_ANNOTATION } from '../../pkg/api/agent-annotations.js';
import { setCondition } from '../../pkg/api/condition.js';
import type { Connector } from '../../pkg/api/connector.js';
import { ApiError } from '../../pkg/api/errors.js';
import { claimOf, type Squad, SQUAD_KIND, type SquadMember } from '../../pkg/api/squad.js';
import { SquadController } from '../../pkg/controller/squad-controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { AdmissionChain, readThrough } from '../../pkg/registry/admission/admission.js';
import { connectorsExist } from '../../pkg/registry/admission/connectors-exist.js';
import { squadMembership } from '../../pkg/registry/admission/squad-membership.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { indexMembership } from '../../pkg/registry/squad/membership.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';
import { cancelRunningTask } from '../../pkg/registry/agent/requests.js';
import { until } from '../support/waiting.js';

const NS = 'default';

describe('SquadController', function () {
  this.timeout(10_000);

  let dir: string;
  let state: SqliteState;
  let agents: Registry<Agent>;
  let squads: Registry<Squad>;
  let informers: { agents: Informer<Agent>; squads: Informer<Squad>; connectors: Informer<Connector> };
  let controller: SquadController;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-squad-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    const logger = createLogger({ level: 'silent' });
    const admission = new AdmissionChain();
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy, admission);
    squads = new Registry<Squad>(state.store<Squad>('Squad'), squadStrategy, admission);
    const connectors = new Registry<Connector>(state.store<Connector>('Connector'), connectorStrategy, admission);
    informers = { agents: new Informer(agents, logger), squads: new Informer(squads, logger), connectors: new Informer(connectors, logger) };
    indexMembership(informers.agents, informers.squads);
    admission.register(connectorsExist(readThrough(informers.connectors, connectors)), squadMembership(agents, readThrough(informers.connectors, connectors)));
    controller = new SquadController({
      squads,
      agents,
      informers,
      cancel: (namespace, name, reason) => cancelRunningTask(agents, namespace, name, reason),
      logger,
    });
  });

  afterEach(() => {
    controller.controller.stop();
    Object.values(informers).forEach((i) => i.stop());
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const start = async (): Promise<void> => {
    await Promise.all(Object.values(informers).map((i) => i.start()));
    await controller.controller.start();
  };
  /** Lets every queued reconcile run: informers deliver, then the queue drains. */
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await controller.controller.idle();
    }
  };
  const get = (name: string): Promise<Agent | undefined> => agents.get(NS, name);
  const claim = async (name: string): Promise<string | undefined> => {
    const a = await get(name);
    return a && claimOf(a);
  };
  const members = async (squad: string): Promise<SquadMember[] | undefined> => (await squads.get(NS, squad))?.spec.members;
  const refs = (...names: string[]): SquadMember[] => names.map((name) => ({ ref: { name } }));

  /** A sleeping agent with no task, as sleep-wake leaves one. */
  async function sleeper(name: string): Promise<Agent> {
    const a = agentFromRequest({ name, instructions: 'nothing yet' }, NS);
    a.spec.task = 0;
    await agents.create(a);
    return agents.updateStatus(NS, name, (s) => {
      s.conditions = setCondition(s.conditions ?? [], { type: ASLEEP, status: 'True', reason: 'SleepRequested', message: 'asleep (test)' });
    });
  }
  const squadOf = (name: string, m: SquadMember[], orphanTTL = ''): Squad => ({
    apiVersion: '',
    kind: SQUAD_KIND,
    metadata: { name, namespace: NS, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    spec: { members: m, orphanTTL, breakUp: false },
    status: { phase: 'Pending' },
  });

  it('claims ref members when the squad is created, and keeps them (phase Sleeping)', async () => {
    await sleeper('a');
    await sleeper('b');
    await start();
    await squads.create(squadOf('crew', refs('a', 'b')));
    await until('the phase is Sleeping', async () => (await squads.get(NS, 'crew'))?.status.phase === 'Sleeping');
    await settle();
    expect(await members('crew')).to.deep.equal(refs('a', 'b'));
    expect(await claim('a')).to.equal('crew');
  });

  // The squad controller hears of the claims (agent updates) before the informer has the new
  // squad, takes the squad for deleted and releases them; it claims them again later.
  it('keeps the claims of a squad just created: they hold when create returns, and a second squad cannot take its member', async () => {
    for (const n of ['a', 'b', 'c']) await sleeper(n);
    await start();
    await squads.create(squadOf('first', refs('a', 'b')));
    const claimsAfterCreate = [await claim('a'), await claim('b')];
    const second = await squads.create(squadOf('second', refs('c', 'a'))).then(
      () => 'created',
      (e: unknown) => (e instanceof ApiError ? e.code : e),
    );
    await settle();
    expect({ claimsAfterCreate, second, first: await members('first') }).to.deep.equal({
      claimsAfterCreate: ['first', 'first'],
      second: 409,
      first: refs('a', 'b'),
    });
  });

  it('refuses (409) a squad naming an agent another squad claims, and leaves its other members unclaimed', async () => {
    for (const n of ['a', 'b', 'c']) await sleeper(n);
    await start();
    await squads.create(squadOf('first', refs('a', 'b')));
    const err = await squads.create(squadOf('second', refs('c', 'a'))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).code).to.equal(409);
    expect((err as ApiError).message).to.match(/already a member of squad "first"/);
    expect(await squads.get(NS, 'second')).to.equal(undefined);
    expect(await claim('c'), 'the claim on c is undone').to.equal(undefined);
    expect(await claim('a')).to.equal('first');
    await settle();
    expect(await claim('c')).to.equal(undefined);
    expect(await claim('a')).to.equal('first');
  });

  it('creates embedded members as agents born claimed, and turns the entries into refs', async () => {
    await start();
    await squads.create(
      squadOf('crew', [
        { name: 'e1', spec: { instructions: 'first job', model: 'm-1' } },
        { name: 'e2', spec: { instructions: 'second job' } },
      ]),
    );
    await until('the entries are refs', async () => JSON.stringify(await members('crew')) === JSON.stringify(refs('e1', 'e2')));
    const e1 = await get('e1');
    expect(e1?.metadata.labels).to.deep.include({ 'agentplane.io/squad': 'crew' });
    expect(e1?.spec).to.include({ instructions: 'first job', model: 'm-1', task: 1 });
    expect(await claim('e2')).to.equal('crew');
  });

  it('drops an embedded member whose agent someone else created meanwhile, without adopting it', async () => {
    await sleeper('r1');
    await sleeper('r2');
    await squads.create(squadOf('crew', [{ name: 'e1', spec: { instructions: 'squad job' } }, ...refs('r1', 'r2')]));
    // Before the controller runs, someone creates e1 directly, without the squad's label.
    await agents.create(agentFromRequest({ name: 'e1', instructions: 'my own job' }, NS));
    await start();
    await until('e1 is dropped', async () => JSON.stringify(await members('crew')) === JSON.stringify(refs('r1', 'r2')));
    await settle();
    const e1 = await get('e1');
    expect(claimOf(e1!), 'not adopted').to.equal(undefined);
    expect(e1?.spec.instructions).to.equal('my own job');
    expect(await claim('r1')).to.equal('crew');
    expect(await claim('r2')).to.equal('crew');
  });

  it('releases a removed member’s claim and requests the cancel of its task when busy', async () => {
    for (const n of ['a', 'b', 'c']) await sleeper(n);
    await start();
    await squads.create(squadOf('crew', refs('a', 'b', 'c')));
    // A task wakes b.
    const busy = await agents.update(NS, 'b', (x) => {
      x.spec.instructions = 'work';
    });
    expect(isBusy(busy)).to.equal(true);
    await settle();
    await squads.update(NS, 'crew', (s) => {
      s.spec.members = s.spec.members.filter((m) => !('ref' in m) || m.ref.name !== 'b');
    });
    await until('b is released', async () => (await claim('b')) === undefined);
    const b = (await get('b'))!;
    expect(b.metadata.annotations?.[CANCEL_TASK_ANNOTATION]).to.equal(String(b.spec.task));
    expect(b.spec.task).to.equal(1);
    await settle();
    expect(await claim('a')).to.equal('crew');
    expect(await claim('c')).to.equal('crew');
    expect(await members('crew')).to.deep.equal(refs('a', 'c'));
    // b is awake now (busy): adding it back is refused.
    await squads
      .update(NS, 'crew', (s) => {
        s.spec.members.push({ ref: { name: 'b' } });
      })
      .then(
        () => expect.fail('b is awake (busy): it may not join again'),
        (e: unknown) => expect((e as ApiError).code).to.equal(409),
      );
  });

  it('does not request a cancel for an idle member removed', async () => {
    for (const n of ['a', 'b', 'c']) await sleeper(n);
    await start();
    await squads.create(squadOf('crew', refs('a', 'b', 'c')));
    await settle();
    await squads.update(NS, 'crew', (s) => {
      s.spec.members = refs('a', 'b');
    });
    await until('c is released', async () => (await claim('c')) === undefined);
    expect((await get('c'))?.metadata.annotations?.[CANCEL_TASK_ANNOTATION]).to.equal(undefined);
  });

  it('deletes the squad when one member is left, and releases both claims', async () => {
    await sleeper('a');
    await sleeper('b');
    await start();
    await squads.create(squadOf('crew', refs('a', 'b')));
    await settle();
    await squads.update(NS, 'crew', (s) => {
      s.spec.members = refs('a');
    });
    await until('the squad is gone', async () => (await squads.get(NS, 'crew')) === undefined);
    await until('both claims are released', async () => (await claim('a')) === undefined && (await claim('b')) === undefined);
    expect(await get('a')).to.not.equal(undefined);
    expect(await get('b')).to.not.equal(undefined);
  });

  it('marks a squad with no members Orphaned, and deletes it after its orphanTTL by a requeue', async () => {
    await sleeper('a');
    await sleeper('b');
    await start();
    const seen: { phase: string; orphanedSince?: string; at: number }[] = [];
    informers.squads.addHandler({ update: (_o, s) => void seen.push({ ...s.status, at: Date.now() }) });
    await squads.create(squadOf('crew', refs('a', 'b'), '200ms'));
    await settle();
    await squads.update(NS, 'crew', (s) => {
      s.spec.members = [];
    });
    await until('the squad is gone', async () => (await squads.get(NS, 'crew')) === undefined);
    const deletedAt = Date.now();
    const orphaned = seen.find((s) => s.phase === 'Orphaned');
    expect(orphaned, 'the squad was Orphaned before it went').to.not.equal(undefined);
    expect(orphaned!.orphanedSince).to.be.a('string');
    expect(deletedAt - Date.parse(orphaned!.orphanedSince!)).to.be.at.least(200);
    expect(await claim('a')).to.equal(undefined);
    expect(await claim('b')).to.equal(undefined);
  });

  it('deletes a squad breaking up once every member is asleep', async () => {
    await sleeper('a');
    await sleeper('b');
    await start();
    await squads.create(squadOf('crew', refs('a', 'b')));
    await settle();
    await squads.update(NS, 'crew', (s) => {
      s.spec.breakUp = true;
    });
    await until('the squad is gone', async () => (await squads.get(NS, 'crew')) === undefined);
    await until('the claims are released', async () => (await claim('a')) === undefined && (await claim('b')) === undefined);
  });

  it('releases every claim when the squad is deleted through the registry', async () => {
    for (const n of ['a', 'b', 'c']) await sleeper(n);
    await start();
    await squads.create(squadOf('crew', refs('a', 'b', 'c')));
    await settle();
    await squads.delete(NS, 'crew');
    await until('the claims are released', async () => {
      const claims = await Promise.all(['a', 'b', 'c'].map(claim));
      return claims.every((c) => c === undefined);
    });
    expect((await get('a'))?.status.status).to.equal('Sleeping');
  });
});
