// Checkpoints and forks on a real embedded server: real workers and engines, the scripted model.
// A checkpoint copies an agent's workspace and engine session between two tasks; a new agent
// created from it sees the files and resumes the conversation (the model is sent the original's
// earlier prompts), and what either writes afterwards stays its own.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';

import { getAgent, runTask, sleepingAgent, waitAgent } from '../support/agents.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';
import { cliFor } from '../support/cli.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default';

describe('checkpoints and forks (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  const workspace = (name: string): string => h.server.local!.workspace({ namespace: 'default', name });

  before(async () => {
    h = await startHarness();
    await runTask(h, 'orig', '@write notes.txt written by orig\n@say remember the word PLUM');
  });
  after(async () => h?.close());

  it('takes a checkpoint of an idle agent at once: 201 Ready, with the task it includes', async () => {
    const r = await h.api('POST', '/api/v1/agents/orig/checkpoints', { name: 'first' });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body).to.include({ name: 'first', agent: 'orig', namespace: 'default', phase: 'Ready', task: 1, fromCheckpoint: 'orig/first' });
    expect(r.body.bytes).to.be.greaterThan(0);
    const list = await h.api('GET', '/api/v1/agents/orig/checkpoints');
    expect(list.body.checkpoints.map((c: { name: string }) => c.name)).to.deep.equal(['first']);
    // The same object in the aggregated API, named "<agent>.<checkpoint>".
    const obj = await h.api('GET', `${AGG}/agentcheckpoints/orig.first`);
    expect(obj.status).to.equal(200);
    expect(obj.body).to.deep.include({ kind: 'AgentCheckpoint', spec: { agent: 'orig' } });
    expect(obj.body.status.phase).to.equal('Ready');
  });

  it('starts a fork with the files and the conversation; its writes stay its own', async () => {
    const events = await runTask(h, 'fork', '@bash cat notes.txt && echo forked >> notes.txt\n@say done', 'default', { fromCheckpoint: 'orig/first' });
    const result = events.find((e) => e.type === 'tool_result');
    expect(result?.payload).to.include({ output: 'written by orig' });
    // The fork's engine resumed the original's session: its model request carries the earlier prompt.
    const req = h.model.requests.find((r) => r.hasTools && r.lastUserText.startsWith('@bash cat notes.txt'));
    expect(req?.userTexts[0]).to.equal('@write notes.txt written by orig\n@say remember the word PLUM');
    expect(readFileSync(join(workspace('fork'), 'notes.txt'), 'utf8')).to.equal('written by origforked\n');
    expect(readFileSync(join(workspace('orig'), 'notes.txt'), 'utf8')).to.equal('written by orig');
    const agent = await h.api('GET', '/api/v1/agents/fork');
    expect(agent.body.fromCheckpoint).to.equal('orig/first');
  });

  it("leaves the original's later work out of an earlier checkpoint", async () => {
    await runTask(h, 'orig', '@bash echo later > later.txt\n@say later');
    await runTask(h, 'fork2', '@bash ls\n@say listed', 'default', { fromCheckpoint: 'orig/first' });
    const req = h.model.requests.find((r) => r.hasTools && r.lastUserText === '@bash ls\n@say listed');
    expect(req?.userTexts).to.have.length(2); // the checkpoint's one earlier prompt, then this one
    const ls = h.model.requests.find((r) => r.lastUserText === '@bash ls\n@say listed' && r.lastToolResult !== undefined);
    expect(ls?.lastToolResult).to.contain('notes.txt').and.not.contain('later.txt');
  });

  it("answers 202 while a running task's step lasts, and takes the copy at the step's end", async () => {
    const r = await h.api('POST', '/api/v1/agents', { name: 'orig', instructions: '@bash sleep 7\n@say slow' });
    expect(r.status).to.equal(200);
    const ws = new EventClient(`${h.url}/api/v1/agents/orig/ws`);
    await ws.until((evs) => evs.some((e) => e.task === 3 && e.type === 'tool_call'));
    const c = await h.api('POST', '/api/v1/agents/orig/checkpoints', { name: 'mid' });
    expect(c.status, JSON.stringify(c.body)).to.equal(202);
    expect(c.body).to.include({ phase: 'Pending', message: 'waiting for task 3 of agent "orig" to reach its next step' });
    await ws.untilTaskEnd(3);
    ws.close();
    const ready = await eventually(async () => {
      const g = await h.api('GET', '/api/v1/agents/orig/checkpoints/mid');
      return g.body.phase === 'Ready' ? g.body : undefined;
    });
    expect(ready).to.include({ task: 3, duringTask: true });
  });

  it('pauses a running task at its next step: the copy holds the task up to there, and the task goes on', async () => {
    const r = await h.api('POST', '/api/v1/agents', {
      name: 'orig',
      instructions: '@bash echo one > a.txt\n@bash sleep 3\n@bash echo two > b.txt\n@say stepped',
    });
    expect(r.status).to.equal(200);
    const ws = new EventClient(`${h.url}/api/v1/agents/orig/ws`);
    await ws.until((evs) => evs.some((e) => e.task === 4 && e.type === 'tool_call' && JSON.stringify(e.payload).includes('sleep 3')));
    const c = await h.api('POST', '/api/v1/agents/orig/checkpoints', { name: 'step' });
    expect(c.status, JSON.stringify(c.body)).to.equal(201);
    expect(c.body).to.include({ phase: 'Ready', task: 4, duringTask: true });
    const end = await ws.untilTaskEnd(4);
    ws.close();
    expect(end.find((e) => e.task === 4 && e.type === 'task_completed')?.payload).to.include({ result: 'stepped' });
    expect(readFileSync(join(workspace('orig'), 'b.txt'), 'utf8')).to.equal('two\n');
    // The fork has the first step's file, not the third's, and the task's prompt in its conversation.
    await runTask(h, 'stepfork', '@bash ls a.txt b.txt; true\n@say listed', 'default', { fromCheckpoint: 'orig/step' });
    const ls = h.model.requests.find((q) => q.lastUserText === '@bash ls a.txt b.txt; true\n@say listed' && q.lastToolResult !== undefined);
    expect(ls?.lastToolResult)
      .to.contain('a.txt')
      .and.to.match(/b\.txt'?: No such file/);
    expect(ls?.userTexts).to.include('@bash echo one > a.txt\n@bash sleep 3\n@bash echo two > b.txt\n@say stepped');
  });

  it('refuses what it cannot do with a clear error', async () => {
    const dup = await h.api('POST', '/api/v1/agents/orig/checkpoints', { name: 'first' });
    expect(dup.status).to.equal(409);
    expect(dup.body.error).to.equal('agent "orig" already has a checkpoint "first"');
    const bad = await h.api('POST', '/api/v1/agents/orig/checkpoints', { name: 'Not_A_Name' });
    expect(bad.status).to.equal(400);
    const noAgent = await h.api('POST', '/api/v1/agents/nobody/checkpoints', { name: 'x' });
    expect(noAgent.status).to.equal(404);
    const missing = await h.api('GET', '/api/v1/agents/orig/checkpoints/nope');
    expect(missing.status).to.equal(404);
    expect(missing.body.error).to.equal('agent "orig" has no checkpoint "nope" in namespace "default"');
    const unknownSource = await h.api('POST', '/api/v1/agents', { name: 'fork3', instructions: '@say hi', fromCheckpoint: 'orig/nope' });
    expect(unknownSource.status).to.equal(400);
    expect(JSON.stringify(unknownSource.body)).to.contain('checkpoint \\"orig/nope\\" not found');
    const malformed = await h.api('POST', '/api/v1/agents', { name: 'fork3', instructions: '@say hi', fromCheckpoint: 'orig' });
    expect(malformed.status).to.equal(400);
    const change = await h.api('PATCH', `${AGG}/agents/fork`, { spec: { fromCheckpoint: 'orig/mid' } }, { 'content-type': 'application/merge-patch+json' });
    expect(change.status).to.equal(422);
    expect(JSON.stringify(change.body)).to.contain('may only be set on create');
  });

  it('is driven from the CLI: checkpoint create, ls, get, run --from-checkpoint, rm', async () => {
    const cli = cliFor({ configDir: h.dataDir, server: h.url });
    const created = await cli('checkpoint', 'create', 'orig', 'cli');
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.equal('agentcheckpoint/orig.cli taken (task 4)\n');
    expect(created.stderr).to.contain('--from-checkpoint orig/cli');
    const ls = await cli('checkpoint', 'ls', 'orig');
    expect(ls.stdout).to.match(/^NAME\s+AGENT\s+PHASE\s+TASK\s+SIZE\s+AGE\n/);
    expect(ls.stdout).to.match(/\norig\.cli\s+orig\s+Ready\s+4\s/);
    const get = await cli('checkpoint', 'get', 'orig', 'cli', '-o', 'json');
    expect(JSON.parse(get.stdout)).to.include({ name: 'cli', agent: 'orig', phase: 'Ready', fromCheckpoint: 'orig/cli' });
    const run = await cli('run', 'clifork', '@bash cat notes.txt\n@say ok', '--from-checkpoint', 'orig/cli');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout + run.stderr).to.contain('written by orig');
    const missing = await cli('run', 'clifork2', '@say hi', '--from-checkpoint', 'orig/none');
    expect(missing.code).to.equal(4);
    expect(missing.stderr).to.contain('checkpoint "orig/none" not found');
    const rm = await cli('checkpoint', 'rm', 'orig', 'cli');
    expect(rm.stdout).to.equal('agentcheckpoint/orig.cli deleted\n');
  });

  it("takes a squad's members at one moment, and a new squad starts from them", async function () {
    this.timeout(240_000); // two squads of two engines each
    await sleepingAgent(h, 'mem-a');
    await sleepingAgent(h, 'mem-b');
    expect((await h.api('POST', '/api/v1/squads', { name: 'sq', members: [{ ref: { name: 'mem-a' } }, { ref: { name: 'mem-b' } }] })).status).to.equal(201);
    const r = await h.api('POST', '/api/v1/squads/sq/checkpoints', { name: 'snap' });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body).to.include({ squad: 'sq', name: 'snap', namespace: 'default' });
    const taken = r.body.checkpoints as { agent: string; squad: string; phase: string; takenAt: string }[];
    expect(taken.map((c) => [c.agent, c.squad, c.phase])).to.deep.equal([
      ['mem-a', 'sq', 'Ready'],
      ['mem-b', 'sq', 'Ready'],
    ]);
    expect(taken[0].takenAt).to.equal(taken[1].takenAt);
    const again = await h.api('POST', '/api/v1/squads/sq/checkpoints', { name: 'snap' });
    expect(again.status).to.equal(409);
    const fork = await h.api('POST', '/api/v1/squads', {
      name: 'sq2',
      members: [
        { name: 'mem-a2', spec: { instructions: '@bash cat me.txt\n@say a2', fromCheckpoint: 'mem-a/snap' } },
        { name: 'mem-b2', spec: { instructions: '@bash cat me.txt\n@say b2', fromCheckpoint: 'mem-b/snap' } },
      ],
    });
    expect(fork.status, JSON.stringify(fork.body)).to.equal(201);
    for (const [name, file] of [
      ['mem-a2', 'mem-a'],
      ['mem-b2', 'mem-b'],
    ] as const) {
      await eventually(async () => (await getAgent(h, name))?.taskStatus === 'Complete', 120_000, `${name}: its first task done`);
      const evs = await h.api('GET', `/api/v1/agents/${name}/events?limit=50`);
      const result = (evs.body.events as { type: string; payload: { output?: string } }[]).find((e) => e.type === 'tool_result');
      expect(result?.payload.output).to.equal(file);
    }
    const badFork = await h.api('POST', '/api/v1/squads', {
      name: 'sq3',
      members: [
        { name: 'mem-a3', spec: { instructions: '@say a', fromCheckpoint: 'mem-a/none' } },
        { name: 'mem-b3', spec: { instructions: '@say b' } },
      ],
    });
    expect(badFork.status).to.equal(400);
    expect(JSON.stringify(badFork.body)).to.contain('checkpoint \\"mem-a/none\\" not found');
  });

  it('deletes a checkpoint and its copy; forks made from it keep working', async () => {
    const d = await h.api('DELETE', '/api/v1/agents/orig/checkpoints/first');
    expect(d.status).to.equal(200);
    expect((await h.api('GET', '/api/v1/agents/orig/checkpoints/first')).status).to.equal(404);
    const copies = join(h.dataDir, 'checkpoints', 'default');
    await eventually(async () => !existsSync(join(copies, 'orig.first')), 10_000, 'the copy removed');
    await runTask(h, 'fork', '@bash cat notes.txt\n@say still here');
    await waitAgent(h, 'fork', (a) => a.taskStatus === 'Complete');
  });
});
