// Squads, sleep and wake: one test per row of the transition table (docs/squads.md), each
// asserting what a client sees (REST, WebSocket) and where workers really run (the runtime).

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { busyFor, EventClient, eventually, type Harness, startHarness } from '../support/harness.js';
import { getAgent, getSquad, runTask, sleepingAgent, waitAgent, waitSquad } from '../support/agents.js';

const ref = (name: string) => ({ namespace: 'default', name });

describe('squads, sleep and wake (integration)', function () {
  let h: Harness;
  const group = (squad: string): string => `squad:default/${squad}`;
  const placement = (name: string) => h.server.local!.placement(ref(name));
  const pid = (name: string) => h.server.local!.pid(ref(name));
  const workerEnv = (name: string): Promise<string> => eventuallyPid(name).then((p) => readFileSync(`/proc/${p}/environ`, 'utf8').split('\0').join('\n'));
  const eventuallyPid = (name: string): Promise<number> => eventually(async () => pid(name), 15_000, `${name}'s worker pid`);
  const squadOf = (name: string, members: string[], extra: Record<string, unknown> = {}) =>
    h.api('POST', '/api/v1/squads', { name, members: members.map((m) => ({ ref: { name: m } })), ...extra });

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  describe('solo sleep and wake', () => {
    it('Sleep on an idle solo agent stops its worker and keeps its workspace', async () => {
      await sleepingAgent(h, 'nappy');
      expect(placement('nappy')).to.equal(undefined);
      expect(existsSync(join(h.dataDir, 'workspaces/default/nappy/me.txt'))).to.equal(true);
    });

    it('a task sent to a sleeping agent clears Sleeping (200), the task runs, and the agent stays awake', async () => {
      const r = await h.api('POST', '/api/v1/agents', { name: 'nappy', instructions: '@bash cat me.txt\n@say awake' });
      expect(r.status).to.equal(200);
      // Sleep is an action, not a standing rule: the reply already shows the agent woken.
      expect(r.body).to.include({ taskStatus: 'InProgress', lifecycle: '' });
      expect(r.body.status).to.not.equal('Sleeping');
      const ws = new EventClient(`${h.url}/api/v1/agents/nappy/ws`);
      const evs = await ws.untilTaskEnd(2);
      ws.close();
      expect(evs.map((e) => e.type)).to.include('task_started');
      expect((evs.find((e) => e.type === 'tool_result')!.payload as { output: string }).output).to.equal('nappy');
      const a = await waitAgent(h, 'nappy', (x) => x.taskStatus === 'Complete', 'task done');
      expect(a.status).to.equal('Running');
      await new Promise((r) => setTimeout(r, 300));
      expect((await getAgent(h, 'nappy'))!.status).to.equal('Running');
      expect(placement('nappy')).to.equal(null);
    });

    it('Sleep on a busy solo agent lets the task finish, then sleeps', async () => {
      await runTask(h, 'busybee', '@say first');
      const r = await h.api('POST', '/api/v1/agents', { name: 'busybee', instructions: `@bash ${busyFor(2)}\n@say done` });
      expect(r.status).to.equal(200);
      await waitAgent(h, 'busybee', (a) => a.lastTaskMessage.startsWith('Bash'), 'running its tool');
      await h.api('PATCH', '/api/v1/agents/busybee', { lifecycle: 'Sleep' });
      expect((await getAgent(h, 'busybee'))!.status).not.to.equal('Sleeping');
      const a = await waitAgent(h, 'busybee', (x) => x.status === 'Sleeping', 'asleep after the task');
      expect(a.taskStatus).to.equal('Complete');
    });

    it('Wake wakes without a task', async () => {
      await h.api('PATCH', '/api/v1/agents/busybee', { lifecycle: 'Wake' });
      await waitAgent(h, 'busybee', (a) => a.status === 'Running', 'running');
      expect(placement('busybee')).to.equal(null);
    });

    it('AutoDelete deletes the agent after its next task completes', async () => {
      await runTask(h, 'mayfly', '@say one');
      await h.api('PATCH', '/api/v1/agents/mayfly', { lifecycle: 'AutoDelete' });
      await new Promise((r) => setTimeout(r, 300));
      expect(await getAgent(h, 'mayfly')).to.not.equal(undefined);
      await runTask(h, 'mayfly', '@bash touch x\n@say two');
      await eventually(async () => (await getAgent(h, 'mayfly')) === undefined, 15_000, 'auto-deleted');
      await eventually(async () => !existsSync(join(h.dataDir, 'workspaces/default/mayfly')), 15_000, 'workspace removed');
    });
  });

  describe('transition table (docs/squads.md)', () => {
    let bobEventsBefore = 0;
    let aliceWs: EventClient;
    before(async () => {
      for (const n of ['alice', 'bob', 'carol']) await sleepingAgent(h, n);
    });

    it('squad creation: refs to sleeping agents; all asleep, so no group and phase Sleeping', async () => {
      const r = await squadOf('crew', ['alice', 'bob'], { orphanTTL: '30m' });
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ name: 'crew', namespace: 'default', orphanTTL: '30m', breakUpRequested: false, orphanedSince: null });
      expect(r.body.members.map((m: { name: string }) => m.name)).to.deep.equal(['alice', 'bob']);
      await waitSquad(h, 'crew', (s) => s?.phase === 'Sleeping', 'Sleeping');
      expect(h.server.local!.groups()).not.to.include(group('crew'));
    });

    it('member Sleeping + a task is sent: Phase cleared of Sleeping; the task is forwarded and runs', async () => {
      bobEventsBefore = (await h.api('GET', '/api/v1/agents/bob/events?limit=200')).body.events.length;
      const r = await h.api('POST', '/api/v1/agents', {
        name: 'alice',
        instructions: `@bash cat $AGENTPLANE_SQUAD_DIR/bob/me.txt && ${busyFor(4)}\n@say read bob`,
      });
      expect(r.status).to.equal(200);
      expect(r.body.status).to.not.equal('Sleeping');
      expect(r.body.taskStatus).to.equal('InProgress');
      await waitAgent(h, 'alice', (a) => a.status === 'Running' && a.taskStatus === 'InProgress', 'woken and working');
      aliceWs = new EventClient(`${h.url}/api/v1/agents/alice/ws`);
      await aliceWs.until((evs) => evs.some((e) => e.type === 'task_started' && (e.payload as { instructions: string }).instructions.includes('read bob')));
    });

    it('squad pod removed + a member is woken: squad pod rebuilt; the woken member runs its task; other sleeping members start with WAKE_IDLE=true, re-running nothing', async () => {
      await eventually(async () => placement('alice') === group('crew') && placement('bob') === group('crew'), 15_000, 'both in the group');
      expect(await workerEnv('bob')).to.contain('AGENTPLANE_WAKE_IDLE=true');
      expect(await workerEnv('alice')).not.to.contain('AGENTPLANE_WAKE_IDLE');
      expect((await getAgent(h, 'bob'))!.status).to.equal('Sleeping');
      const evs = await aliceWs.untilTaskEnd();
      aliceWs.close();
      expect(evs.at(-1)!.type).to.equal('task_completed');
      // Members read each other's workspaces.
      expect((evs.find((e) => e.type === 'tool_result')!.payload as { output: string }).output).to.equal('bob');
      const bobEventsAfter = (await h.api('GET', '/api/v1/agents/bob/events?limit=200')).body.events.length;
      expect(bobEventsAfter).to.equal(bobEventsBefore); // bob did not re-run anything
    });

    it('squad, all members Sleeping: the squad pod is removed; persistent volumes (workspaces) are preserved', async () => {
      const done = await waitAgent(h, 'alice', (a) => a.taskStatus === 'Complete', 'task done');
      expect(done.status).to.equal('Running'); // woken for good by its task
      await h.api('PATCH', '/api/v1/agents/alice', { lifecycle: 'Sleep' });
      await waitAgent(h, 'alice', (a) => a.status === 'Sleeping', 'asleep');
      await eventually(async () => !h.server.local!.groups().includes(group('crew')), 15_000, 'group removed');
      expect(placement('alice')).to.equal(undefined);
      expect(placement('bob')).to.equal(undefined);
      await waitSquad(h, 'crew', (s) => s?.phase === 'Sleeping', 'Sleeping');
      for (const n of ['alice', 'bob']) expect(existsSync(join(h.dataDir, `workspaces/default/${n}/me.txt`))).to.equal(true);
    });

    it('squad member (any phase) + PATCH lifecycle Sleep: Phase Sleeping; its task is cancelled; its container (worker) keeps running idle inside the squad pod', async () => {
      await h.api('PATCH', '/api/v1/agents/bob', { lifecycle: 'Wake' });
      await waitAgent(h, 'bob', (a) => a.status === 'Running', 'bob awake');
      await h.api('POST', '/api/v1/agents', { name: 'alice', instructions: `@bash ${busyFor(60)}\n@say never` });
      await waitAgent(h, 'alice', (a) => a.lastTaskMessage.startsWith('Bash'), 'alice busy');
      const alicePid = await eventuallyPid('alice');
      const ws = new EventClient(`${h.url}/api/v1/agents/alice/ws`);
      await h.api('PATCH', '/api/v1/agents/alice', { lifecycle: 'Sleep' });
      const evs = await ws.untilTaskEnd();
      ws.close();
      expect(evs.at(-1)!.type).to.equal('task_cancelled');
      await waitAgent(h, 'alice', (a) => a.status === 'Sleeping' && a.taskStatus === 'Cancelled', 'asleep, cancelled');
      expect(placement('alice')).to.equal(group('crew'));
      expect(pid('alice')).to.equal(alicePid);
    });

    it('agent not asleep + POST members: unchanged, 409 Conflict "must be asleep in order to team up"', async () => {
      await h.api('PATCH', '/api/v1/agents/carol', { lifecycle: 'Wake' });
      await waitAgent(h, 'carol', (a) => a.status === 'Running', 'carol awake');
      const r = await h.api('POST', '/api/v1/squads/crew/members', { ref: { name: 'carol' } });
      expect(r.status).to.equal(409);
      expect(r.body.error).to.equal('agent "carol" must be asleep in order to team up');
      expect((await getSquad(h, 'crew'))!.members.map((m) => m.name)).to.deep.equal(['alice', 'bob']);
    });

    it('running squad + POST members, agent asleep: the agent is a member, injected as an extra worker; no pod restart; existing members unaffected', async () => {
      await h.api('PATCH', '/api/v1/agents/carol', { lifecycle: 'Sleep' });
      await waitAgent(h, 'carol', (a) => a.status === 'Sleeping', 'carol asleep');
      await h.api('POST', '/api/v1/agents', { name: 'bob', instructions: `@bash ${busyFor(3)} && echo survived\n@say bob done` });
      await waitAgent(h, 'bob', (a) => a.lastTaskMessage.startsWith('Bash'), 'bob busy');
      const before = { alice: pid('alice'), bob: pid('bob') };
      const ws = new EventClient(`${h.url}/api/v1/agents/bob/ws`);
      const r = await h.api('POST', '/api/v1/squads/crew/members', { ref: { name: 'carol' } });
      expect(r.status).to.equal(200);
      expect(r.body.members.map((m: { name: string }) => m.name)).to.deep.equal(['alice', 'bob', 'carol']);
      await eventually(async () => placement('carol') === group('crew'), 15_000, 'carol injected');
      expect(await workerEnv('carol')).to.contain('AGENTPLANE_WAKE_IDLE=true');
      const evs = await ws.untilTaskEnd();
      ws.close();
      expect(evs.at(-1)!.type).to.equal('task_completed');
      expect((evs.find((e) => e.type === 'tool_result')!.payload as { output: string }).output).to.equal('survived');
      expect({ alice: pid('alice'), bob: pid('bob') }).to.deep.equal(before);
    });

    it('squad member + DELETE member: solo, alive, workspace kept, in-flight task cancelled', async () => {
      await h.api('PATCH', '/api/v1/agents/bob', { lifecycle: '' });
      await h.api('POST', '/api/v1/agents', { name: 'bob', instructions: `@bash ${busyFor(60)}\n@say never` });
      await waitAgent(h, 'bob', (a) => a.lastTaskMessage.startsWith('Bash'), 'bob busy');
      const ws = new EventClient(`${h.url}/api/v1/agents/bob/ws`);
      const r = await h.api('DELETE', '/api/v1/squads/crew/members/bob');
      expect(r.status).to.equal(200);
      expect(r.body.members.map((m: { name: string }) => m.name)).to.deep.equal(['alice', 'carol']);
      const evs = await ws.untilTaskEnd();
      ws.close();
      expect(evs.at(-1)!.type).to.equal('task_cancelled');
      await eventually(async () => placement('bob') === null, 15_000, 'bob solo');
      await waitAgent(h, 'bob', (a) => a.status === 'Running', 'bob alive');
      expect(existsSync(join(h.dataDir, 'workspaces/default/bob/me.txt'))).to.equal(true);
    });

    it('squad + break-up: marked for dissolution; the record is deleted once every member is asleep; members then become solo agents; volumes kept', async () => {
      // crew is alice (asleep, idle in the pod) and carol (asleep): the group is down.
      await eventually(async () => !h.server.local!.groups().includes(group('crew')), 15_000, 'group down');
      const r = await h.api('POST', '/api/v1/squads/crew/break-up');
      expect(r.status).to.equal(200);
      expect(r.body.breakUpRequested).to.equal(true);
      await waitSquad(h, 'crew', (s) => s === undefined, 'record deleted');
      for (const n of ['alice', 'carol']) {
        expect((await getAgent(h, n))!.status).to.equal('Sleeping');
        expect(placement(n)).to.equal(undefined);
        expect(existsSync(join(h.dataDir, `workspaces/default/${n}/me.txt`))).to.equal(true);
      }
    });

    it('squad marked for break-up + task sent to a sleeping member: the member wakes, runs, returns to Sleeping; break-up completes eventually', async () => {
      for (const n of ['dora', 'eve']) await sleepingAgent(h, n);
      await squadOf('pair', ['dora', 'eve']);
      await h.api('POST', '/api/v1/agents', { name: 'eve', instructions: `@bash ${busyFor(2)}\n@say last job` });
      await waitAgent(h, 'eve', (a) => a.taskStatus === 'InProgress' && a.status !== 'Sleeping', 'eve woken');
      const r = await h.api('POST', '/api/v1/squads/pair/break-up');
      expect(r.body.breakUpRequested).to.equal(true);
      expect(await getSquad(h, 'pair')).to.not.equal(undefined); // eve is awake: not yet
      const a = await waitAgent(h, 'eve', (x) => x.status === 'Sleeping', 'eve back to sleep');
      expect(a.taskStatus).to.equal('Complete');
      await waitSquad(h, 'pair', (s) => s === undefined, 'break-up completed');
    });

    it('squad, membership drops to exactly one: dissolved, the lone agent reverts to solo', async () => {
      for (const n of ['fay', 'gus']) await sleepingAgent(h, n);
      await squadOf('trio', ['fay', 'gus']);
      await h.api('PATCH', '/api/v1/agents/gus', { lifecycle: 'Wake' });
      await eventually(async () => placement('gus') === group('trio'), 15_000, 'gus in the group');
      const r = await h.api('DELETE', '/api/v1/squads/trio/members/fay');
      expect(r.status).to.equal(200);
      await waitSquad(h, 'trio', (s) => s === undefined, 'record removed');
      await eventually(async () => placement('gus') === null, 15_000, 'gus solo');
      expect(h.server.local!.groups()).not.to.include(group('trio'));
      await waitAgent(h, 'gus', (a) => a.status === 'Running', 'gus running solo');
    });

    it('squad, last member removed: Orphaned, record deleted after orphanTTL', async () => {
      for (const n of ['hal', 'ivy']) await sleepingAgent(h, n);
      await squadOf('ghosts', ['hal', 'ivy'], { orphanTTL: '2s' });
      const dels = await Promise.all([h.api('DELETE', '/api/v1/agents/hal'), h.api('DELETE', '/api/v1/agents/ivy')]);
      expect(dels.map((d) => d.status)).to.deep.equal([200, 200]);
      let orphan: Awaited<ReturnType<typeof getSquad>>;
      await waitSquad(h, 'ghosts', (s) => ((orphan = s), s?.phase === 'Orphaned'), 'Orphaned');
      expect(orphan!.members).to.deep.equal([]);
      expect(Date.parse(orphan!.orphanedSince!)).to.be.closeTo(Date.now(), 10_000);
      await waitSquad(h, 'ghosts', (s) => s === undefined, 'deleted after orphanTTL');
    });
  });

  describe('squad bad input', () => {
    before(async () => {
      for (const n of ['kim', 'lee']) await sleepingAgent(h, n);
    });

    it('fewer than two members -> 400', async () => {
      const r = await squadOf('solo', ['kim']);
      expect(r.status).to.equal(400);
      expect(r.body.details.causes.map((c: { field: string }) => c.field)).to.include('members');
    });

    it('a member both ref and spec -> 400', async () => {
      const r = await h.api('POST', '/api/v1/squads', {
        name: 'mixed',
        members: [{ ref: { name: 'kim' }, name: 'kim', spec: { instructions: 'x' } }, { ref: { name: 'lee' } }],
      });
      expect(r.status).to.equal(400);
      expect(r.body.details.causes[0].field).to.equal('members[0]');
    });

    it('unknown agent -> 404', async () => {
      const r = await squadOf('ghostly', ['kim', 'nobody']);
      expect(r.status).to.equal(404);
      expect(r.body.error).to.contain('nobody');
    });

    it('bad orphanTTL -> 400', async () => {
      for (const ttl of ['soon', '10', '-5m', '0s']) {
        const r = await squadOf('timed', ['kim', 'lee'], { orphanTTL: ttl });
        expect(r.status, ttl).to.equal(400);
        expect(r.body.details.causes.map((c: { field: string }) => c.field).join()).to.contain('orphanTTL');
      }
    });

    it('an agent already in another squad -> 409', async () => {
      expect((await squadOf('first', ['kim', 'lee'])).status).to.equal(201);
      await sleepingAgent(h, 'max');
      const r = await squadOf('second', ['max', 'kim']);
      expect(r.status).to.equal(409);
      expect(r.body.error).to.contain('already a member of squad "first"');
      const add = await h.api('POST', '/api/v1/squads/first/members', { ref: { name: 'kim' } });
      expect(add.status).to.equal(409);
    });

    it('unknown squad -> 404 on every verb; bad add-member body -> 400', async () => {
      for (const [m, p, b] of [
        ['GET', '/api/v1/squads/nope'],
        ['DELETE', '/api/v1/squads/nope'],
        ['POST', '/api/v1/squads/nope/members', { ref: { name: 'max' } }],
        ['DELETE', '/api/v1/squads/nope/members/max'],
        ['POST', '/api/v1/squads/nope/break-up'],
      ] as [string, string, unknown?][]) {
        expect((await h.api(m, p, b)).status, `${m} ${p}`).to.equal(404);
      }
      expect((await h.api('POST', '/api/v1/squads/first/members', { name: 'x' })).status).to.equal(400);
      expect((await h.api('DELETE', '/api/v1/squads/first/members/max')).status).to.equal(404);
    });

    it('an embedded spec naming an unknown connector -> 400, nothing created', async () => {
      const r = await h.api('POST', '/api/v1/squads', {
        name: 'wired',
        members: [
          { name: 'pia', spec: { instructions: 'x', connectors: ['nowhere'] } },
          { name: 'quin', spec: { instructions: 'x' } },
        ],
      });
      expect(r.status).to.equal(400);
      expect(r.body.details.causes[0].message).to.contain('connector "nowhere" not found');
      expect(await getAgent(h, 'pia')).to.equal(undefined);
      expect(await getSquad(h, 'wired')).to.equal(undefined);
    });

    it('embedded specs create agents that join, and become refs', async () => {
      const r = await h.api('POST', '/api/v1/squads', {
        name: 'fresh',
        members: [
          { name: 'nia', spec: { instructions: '@bash echo nia > me.txt\n@say nia ready', role: 'worker' } },
          { name: 'oz', spec: { instructions: '@say oz ready' } },
        ],
      });
      expect(r.status).to.equal(201);
      await waitAgent(h, 'nia', (a) => a.taskStatus === 'Complete', 'nia ran');
      await waitAgent(h, 'oz', (a) => a.taskStatus === 'Complete', 'oz ran');
      expect(placement('nia')).to.equal(group('fresh'));
      const s = await getSquad(h, 'fresh');
      expect(s!.members.map((m) => m.name)).to.deep.equal(['nia', 'oz']);
      expect(s!.phase).to.equal('Running');
    });

    it('DELETE squad: members become solo and keep their workspaces', async () => {
      const r = await h.api('DELETE', '/api/v1/squads/fresh');
      expect(r.status).to.equal(200);
      await eventually(async () => placement('nia') === null && placement('oz') === null, 15_000, 'members solo');
      expect(existsSync(join(h.dataDir, 'workspaces/default/nia/me.txt'))).to.equal(true);
      expect((await h.api('GET', '/api/v1/squads')).body.squads.map((s: { name: string }) => s.name)).not.to.include('fresh');
    });
  });
});
