// Schedules (docs/schedules.md) with real workers and the scripted model, in real time: a cron
// with a seconds field fires on its due times, once each; Forbid skips a busy agent; a trigger
// runs now; a restart keeps the schedule and runs a missed time only within its deadline.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { runTask, waitAgent } from '../support/agents.js';
import { busyFor, eventually, type Harness, startHarness } from '../support/harness.js';
import { cliFor } from '../support/cli.js';
import { EXIT } from '../../pkg/cli/exit-codes.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default/schedules';

interface Run {
  time: string;
  outcome: string;
  task?: number;
  reason?: string;
  triggered?: boolean;
}
interface ScheduleObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status: {
    lastScheduleTime?: string;
    nextScheduleTime?: string;
    lastRun?: Run;
    pendingRun?: unknown;
    conditions?: { type: string; status: string; reason: string }[];
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until the wall clock's seconds are `at` past a multiple of `every` seconds. */
async function alignTo(every: number, at: number): Promise<void> {
  const ms = every * 1000;
  const wait = (at * 1000 - (Date.now() % ms) + ms) % ms;
  await sleep(wait);
}

describe('schedules (integration)', function () {
  this.timeout(300_000);
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  const create = async (name: string, spec: Record<string, unknown>): Promise<ScheduleObject> => {
    const r = await h.api('POST', AGG, { apiVersion: 'agentplane.io/v1alpha1', kind: 'Schedule', metadata: { name }, spec });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    return r.body as ScheduleObject;
  };
  const get = async (name: string): Promise<ScheduleObject> => {
    const r = await h.api('GET', `${AGG}/${name}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as ScheduleObject;
  };
  const waitSchedule = (name: string, pred: (s: ScheduleObject) => boolean, what: string, ms = 60_000): Promise<ScheduleObject> =>
    eventually(
      async () => {
        const s = await get(name);
        return pred(s) ? s : undefined;
      },
      ms,
      `${name}: ${what}`,
    );
  /** The agent's task_started events, oldest first. */
  const started = async (agent: string): Promise<AgentEvent<'task_started'>[]> => {
    const r = await h.api('GET', `/api/v1/agents/${agent}/events?limit=200`);
    expect(r.status).to.equal(200);
    return (r.body.events as AgentEvent[]).filter((e): e is AgentEvent<'task_started'> => e.type === 'task_started').sort((a, b) => a.seq - b.seq);
  };

  it('refuses a cron or time zone that does not read with 422 naming the field', async () => {
    const bad = await h.api('POST', AGG, {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Schedule',
      metadata: { name: 'bad-cron' },
      spec: { agent: 'a', cron: '61 * * * *', instructions: 'x' },
    });
    expect(bad.status).to.equal(422);
    expect(bad.text).to.contain('spec.cron');
    const tz = await h.api('POST', AGG, {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Schedule',
      metadata: { name: 'bad-tz' },
      spec: { agent: 'a', cron: '* * * * *', timeZone: 'Mars/Olympus', instructions: 'x' },
    });
    expect(tz.status).to.equal(422);
    expect(tz.text).to.contain('spec.timeZone');
    const policy = await h.api('POST', AGG, {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Schedule',
      metadata: { name: 'bad-policy' },
      spec: { agent: 'a', cron: '* * * * *', instructions: 'x', concurrencyPolicy: 'Sometimes' },
    });
    expect(policy.status).to.equal(422);
    expect(policy.text).to.contain('spec.concurrencyPolicy');
  });

  it('REST mirror: create with defaults, list, get, patch (null removes), trigger, delete; 400 naming cron and timeZone', async () => {
    await runTask(h, 'rest-target', '@say ready');
    const bad = await h.api('POST', '/api/v1/schedules', { name: 'r-bad', agent: 'rest-target', cron: '* * *', instructions: 'x' });
    expect(bad.status).to.equal(400);
    expect(bad.body.details.causes.map((c: { field: string }) => c.field)).to.deep.equal(['cron']);
    const tz = await h.api('POST', '/api/v1/schedules', {
      name: 'r-bad',
      agent: 'rest-target',
      cron: '* * * * *',
      timeZone: 'Nowhere/Land',
      instructions: 'x',
    });
    expect(tz.status).to.equal(400);
    expect(tz.body.details.causes.map((c: { field: string }) => c.field)).to.deep.equal(['timeZone']);
    const missing = await h.api('POST', '/api/v1/schedules', { name: 'r-bad', cron: '* * * * *', instructions: 'x' });
    expect(missing.status).to.equal(400);
    expect(JSON.stringify(missing.body)).to.contain('agent');

    const made = await h.api('POST', '/api/v1/schedules', {
      name: 'r',
      agent: 'rest-target',
      cron: '0 3 * * *',
      timeZone: 'Asia/Tokyo',
      instructions: '@say from rest',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect(made.body).to.include({ name: 'r', namespace: 'default', concurrencyPolicy: 'Allow', suspend: false, timeZone: 'Asia/Tokyo' });
    const listed = await h.api('GET', '/api/v1/schedules?namespace=default');
    expect(listed.status).to.equal(200);
    expect(listed.body.schedules.map((x: { name: string }) => x.name)).to.include('r');
    const next = await eventually(
      async () => ((await h.api('GET', '/api/v1/schedules/r')).body.nextScheduleTime as string | null) ?? undefined,
      10_000,
      'next time',
    );
    // 03:00 in Tokyo is 18:00 UTC.
    expect(new Date(next).getUTCHours()).to.equal(18);

    const patched = await h.api('PATCH', '/api/v1/schedules/r', { suspend: true, timeZone: null });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.suspend).to.equal(true);
    expect(patched.body).to.not.have.property('timeZone');
    const badPatch = await h.api('PATCH', '/api/v1/schedules/r', { cron: '99 * * * *' });
    expect(badPatch.status).to.equal(400);
    expect(badPatch.body.details.causes.map((c: { field: string }) => c.field)).to.deep.equal(['cron']);
    await eventually(
      async () => (await h.api('GET', '/api/v1/schedules/r')).body.nextScheduleTime === null || undefined,
      10_000,
      'no next time while suspended',
    );

    const t = await h.api('POST', '/api/v1/schedules/r/trigger');
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    expect(t.body.lastRun).to.include({ outcome: 'Started', task: 2, triggered: true });
    await waitAgent(h, 'rest-target', (a) => a.taskStatus === 'Complete' && a.lastTaskMessage === 'from rest', 'the triggered run');
    expect((await h.api('POST', '/api/v1/schedules/nope/trigger')).status).to.equal(404);

    expect((await h.api('DELETE', '/api/v1/schedules/r')).status).to.equal(200);
    expect((await h.api('GET', '/api/v1/schedules/r')).status).to.equal(404);
  });

  it('fires on its due times, each once, and records each run', async () => {
    await runTask(h, 'ticker', '@say ready');
    // Every 15 s (a seconds field); created just after a due time, so the next two come 15 s apart.
    await alignTo(15, 1);
    await create('tick', { agent: 'ticker', cron: '*/15 * * * * *', instructions: '@say tick' });
    const s = await waitSchedule('tick', (x) => !!x.status.nextScheduleTime, 'next time');
    expect(s.spec.concurrencyPolicy).to.equal('Allow');
    const first = Date.parse(s.status.nextScheduleTime!);
    expect(first % 15_000).to.equal(0);
    await waitSchedule(
      'tick',
      (x) => Date.parse(x.status.lastScheduleTime ?? '0') >= first + 15_000 && x.status.lastRun?.outcome !== 'Started',
      'two runs',
      60_000,
    );
    // Stop it before a third, then count.
    expect((await h.api('PATCH', `${AGG}/tick`, { spec: { suspend: true } }, { 'content-type': 'application/merge-patch+json' })).status).to.equal(200);
    await waitAgent(h, 'ticker', (a) => a.taskStatus === 'Complete', 'last run done');
    const runs = (await started('ticker')).filter((e) => e.payload.instructions === '@say tick');
    const last = await get('tick');
    const handled = Date.parse(last.status.lastScheduleTime!);
    const dueTimes = (handled - first) / 15_000 + 1;
    expect(runs.length, JSON.stringify(runs)).to.equal(dueTimes);
    expect(runs.length).to.be.at.least(2);
    // On time: each task started within a few seconds of a due time.
    runs.forEach((e, i) => {
      const due = first + i * 15_000;
      const late = Date.parse(e.timestamp) - due;
      expect(late, `run ${i} started ${late} ms after ${new Date(due).toISOString()}`).to.be.within(0, 5_000);
    });
    expect(last.status.lastRun!.outcome).to.equal('Complete');
    expect(last.status.lastRun!.task).to.equal(runs.at(-1)!.task);
    expect(last.status.nextScheduleTime).to.equal(undefined);
  });

  it('Forbid skips a busy agent and says why; the agent keeps its task', async () => {
    const r = await h.api('POST', '/api/v1/agents', { name: 'busy', instructions: `@bash ${busyFor(40)}\n@say done` });
    expect(r.status).to.equal(201);
    await waitAgent(h, 'busy', (a) => a.taskStatus === 'InProgress', 'working');
    await create('forbidden', { agent: 'busy', cron: '*/5 * * * * *', instructions: '@say never', concurrencyPolicy: 'Forbid' });
    const s = await waitSchedule('forbidden', (x) => x.status.lastRun?.outcome === 'Skipped', 'a skipped run', 20_000);
    expect(s.status.lastRun!.reason).to.match(/busy with task 1 \(concurrencyPolicy Forbid\)/);
    expect(s.status.pendingRun).to.equal(undefined);
    await h.api('DELETE', `${AGG}/forbidden`);
    const a = await h.api('GET', '/api/v1/agents/busy');
    expect(a.body.taskStatus).to.equal('InProgress');
    // Its one task (the worker may still be starting it under load).
    await eventually(async () => (await started('busy')).length > 0, 30_000, 'task 1 started');
    expect((await started('busy')).map((e) => e.task)).to.deep.equal([1]);
    await h.api('POST', '/api/v1/agents/busy/cancel');
  });

  it('a trigger runs it now, suspended or not, and wakes a sleeping agent', async () => {
    await runTask(h, 'sleeper', '@say ready');
    expect((await h.api('PATCH', '/api/v1/agents/sleeper', { lifecycle: 'Sleep' })).status).to.equal(200);
    await waitAgent(h, 'sleeper', (a) => a.status === 'Sleeping', 'asleep');
    await create('yearly', { agent: 'sleeper', cron: '0 0 1 1 *', timeZone: 'Europe/Paris', instructions: '@say triggered', suspend: true });
    const t = await h.api('POST', `${AGG}/yearly/trigger`, {});
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    const run = (t.body as ScheduleObject).status.lastRun!;
    expect(run).to.include({ outcome: 'Started', task: 2, triggered: true });
    const a = await waitAgent(h, 'sleeper', (x) => x.taskStatus === 'Complete' && x.lastTaskMessage.includes('triggered'), 'the triggered task done');
    expect(a.lifecycle).to.not.equal('Sleep');
    const done = await waitSchedule('yearly', (x) => x.status.lastRun?.outcome === 'Complete', 'outcome');
    expect(done.status.lastScheduleTime).to.equal(undefined);
    expect((await h.api('POST', `${AGG}/missing/trigger`, {})).status).to.equal(404);
  });

  it('the CLI adds, lists, gets, suspends, resumes, triggers and removes a schedule', async () => {
    const cli = cliFor({ configDir: h.dataDir, server: h.url });
    await waitAgent(h, 'sleeper', (x) => x.taskStatus === 'Complete', 'idle');
    const bad = await cli(
      'schedule',
      'add',
      'nightly',
      '--agent',
      'sleeper',
      '--cron',
      '0 3 * * *',
      '--instructions',
      'x',
      '--starting-deadline-seconds',
      'soon',
    );
    expect(bad.code).to.equal(EXIT.USAGE);
    expect(bad.stderr).to.contain('--starting-deadline-seconds must be a whole number');
    const refused = await cli('schedule', 'add', 'nightly', '--agent', 'sleeper', '--cron', '0 3 * *', '--instructions', 'x');
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('cron');
    const args = ['--agent', 'sleeper', '--cron', '0 3 * * *', '--time-zone', 'Europe/Paris', '--concurrency-policy', 'Forbid'];
    const add = await cli('schedule', 'add', 'nightly', ...args, '--instructions', '@say nightly run');
    expect(add.code, add.stderr).to.equal(0);
    expect(add.stdout).to.equal('schedule/nightly created\n');
    expect((await cli('schedule', 'ls')).stdout).to.match(/^nightly\s+sleeper\s+0 3 \* \* \*/m);
    const got = await cli('schedule', 'get', 'nightly');
    expect(got.stdout).to.contain('Cron:     0 3 * * * (Europe/Paris)').and.contain('Policy:   Forbid').and.contain('Suspend:  false');
    expect((await cli('schedule', 'suspend', 'nightly')).stdout).to.equal('schedule/nightly suspended\n');
    expect((await get('nightly')).spec.suspend).to.equal(true);
    expect((await cli('schedule', 'resume', 'nightly')).stdout).to.equal('schedule/nightly resumed\n');
    expect((await get('nightly')).spec.suspend).to.equal(false);
    const fired = await cli('schedule', 'trigger', 'nightly');
    expect(fired.code, fired.stderr).to.equal(0);
    expect(fired.stdout).to.match(/^schedule\/nightly triggered: /);
    await waitAgent(h, 'sleeper', (x) => x.taskStatus === 'Complete' && x.lastTaskMessage.includes('nightly run'), 'the triggered run done');
    expect((await cli('schedule', 'rm', 'nightly')).stdout).to.equal('schedule/nightly deleted\n');
    const gone = await cli('schedule', 'get', 'nightly');
    expect(gone.code).to.not.equal(0);
    expect(gone.stderr).to.contain('not found');
  });

  it('a restart keeps schedules; a missed time starts once within startingDeadlineSeconds, never past it', async () => {
    await runTask(h, 'late', '@say ready');
    await runTask(h, 'strict', '@say ready');
    // Created 2 s after a due time (every 30 s); stopped until 8 s after the next one.
    await alignTo(30, 2);
    await create('late-ok', { agent: 'late', cron: '*/30 * * * * *', instructions: '@say late run' });
    await create('deadline', { agent: 'strict', cron: '*/30 * * * * *', instructions: '@say never late', startingDeadlineSeconds: 3 });
    const before = await waitSchedule('deadline', (x) => !!x.status.nextScheduleTime, 'next time');
    const missedTime = Date.parse(before.status.nextScheduleTime!);
    // The server is down across the due time: stopped, then started 8 s after it.
    await h.restart({}, Math.max(0, missedTime + 8_000 - Date.now()));
    const missed = await waitSchedule('deadline', (x) => x.status.lastRun?.outcome === 'Missed', 'missed run', 20_000);
    expect(missed.status.lastRun!.time).to.equal(new Date(missedTime).toISOString());
    expect(missed.status.lastRun!.reason).to.match(/past startingDeadlineSeconds \(3\)/);
    const ok = await waitSchedule('late-ok', (x) => ['Started', 'Complete'].includes(x.status.lastRun?.outcome ?? ''), 'late run started', 20_000);
    expect(ok.status.lastRun!.time).to.equal(new Date(missedTime).toISOString());
    // Before the next due time: exactly the one late run (task 2 after the warm-up), none on the strict agent.
    const taskOf = async (agent: string): Promise<number> =>
      (await h.api('GET', `/apis/agentplane.io/v1alpha1/namespaces/default/agents/${agent}`)).body.spec.task;
    expect(await taskOf('late')).to.equal(2);
    expect(await taskOf('strict')).to.equal(1);
    expect(Date.now()).to.be.below(missedTime + 30_000);
    // Suspended before the next due time, so what follows counts only the late run.
    for (const name of ['late-ok', 'deadline']) {
      expect((await h.api('PATCH', `${AGG}/${name}`, { spec: { suspend: true } }, { 'content-type': 'application/merge-patch+json' })).status).to.equal(200);
    }
    await waitSchedule('late-ok', (x) => x.status.lastRun?.outcome === 'Complete', 'late run done', 60_000);
    const beforeNext = (e: AgentEvent): boolean => Date.parse(e.timestamp) < missedTime + 30_000;
    expect((await started('late')).filter((e) => e.payload.instructions === '@say late run' && beforeNext(e))).to.have.length(1);
    expect((await started('strict')).filter((e) => e.payload.instructions === '@say never late')).to.have.length(0);
    await h.api('DELETE', `${AGG}/late-ok`);
    await h.api('DELETE', `${AGG}/deadline`);
  });
});
