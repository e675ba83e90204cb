// Messages between agents end to end (docs/messages.md), with real workers and the scripted model:
// a message reaches a running task as a follow-up, an idle agent as a new task, and a sleeping one
// once it wakes (queued; `wake: true` wakes it); a manager agent's send_message tool reaches
// another agent of its namespace, both logs show the message, and another namespace is refused.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { busyFor, eventually, EventClient, type Harness, startHarness } from '../support/harness.js';
import { cliEnv, runCli } from '../support/cli.js';

const ofType = (evs: AgentEvent[], type: string): AgentEvent[] => evs.filter((e) => e.type === type);
const resultOf = (evs: AgentEvent[], task: number): string =>
  (evs.find((e) => e.type === 'task_completed' && e.task === task)?.payload as { result: string } | undefined)?.result ?? '';

describe('messages between agents (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  const history = async (name: string, ns = 'default'): Promise<AgentEvent[]> =>
    (await h.api('GET', `/api/v1/agents/${name}/events?limit=200&namespace=${ns}`)).body.events as AgentEvent[];
  /** The agent's phase, task number and task status (the aggregated API's object shows the number). */
  const agent = async (name: string, ns = 'default') => {
    const o = (await h.api('GET', `/apis/agentplane.io/v1alpha1/namespaces/${ns}/agents/${name}`)).body;
    return { status: o.status?.status as string, task: o.spec?.task as number, taskStatus: (o.status?.taskStatus ?? '') as string };
  };
  const message = (name: string, body: unknown, ns = 'default') => h.api('POST', `/api/v1/agents/${name}/messages?namespace=${ns}`, body);
  const untilIdle = (name: string, task: number, ns = 'default') =>
    eventually(
      async () => {
        const a = await agent(name, ns);
        return a.task === task && a.taskStatus !== 'InProgress' && a.taskStatus !== '' && a;
      },
      60_000,
      `${name} done with task ${task}`,
    );

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('reaches a running task as a follow-up the model reads', async () => {
    const first = await h.api('POST', '/api/v1/agents', { name: 'runner', instructions: `@bash ${busyFor(4)}\n@say first plan` });
    expect(first.status).to.equal(201);
    const ws = new EventClient(`${h.url}/api/v1/agents/runner/ws`);
    await ws.until((evs) => evs.some((e) => e.type === 'tool_call'));
    const r = await message('runner', { from: 'alice', text: 'Also mention the mangoes\n@echo' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.deep.equal({ agent: 'runner', namespace: 'default', from: 'alice', delivery: 'followUp', task: 1, woken: false });
    await ws.untilTaskEnd(1);
    ws.close();
    expect(resultOf(ws.events, 1)).to.contain('Message from alice:').and.to.contain('Also mention the mangoes');
    expect(ofType(ws.events, 'task_completed')).to.have.length(1);
    const msgs = ofType(await history('runner'), 'message');
    expect(msgs).to.have.length(1);
    expect(msgs[0]).to.deep.include({
      task: 1,
      payload: { from: 'alice', to: 'runner', text: 'Also mention the mangoes\n@echo', direction: 'received', delivery: 'followUp' },
    });
  });

  it('starts a task on an idle agent, from the authenticated user by default', async () => {
    expect((await h.api('POST', '/api/v1/agents', { name: 'idler', instructions: '@say ready' })).status).to.equal(201);
    await untilIdle('idler', 1);
    const r = await message('idler', { text: 'hello idle agent\n@echo' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ delivery: 'task', task: 2 });
    const from = r.body.from as string;
    expect(from).to.be.a('string').and.not.equal('');
    await untilIdle('idler', 2);
    const evs = await history('idler');
    const started = evs.find((e) => e.type === 'task_started' && e.task === 2)!;
    expect(started.payload).to.deep.equal({ instructions: `Message from ${from}:\nhello idle agent\n@echo` });
    expect(resultOf(evs, 2)).to.contain('hello idle agent');
    expect(ofType(evs, 'message').map((e) => e.payload)).to.deep.equal([
      { from, to: 'idler', text: 'hello idle agent\n@echo', direction: 'received', delivery: 'task' },
    ]);
  });

  describe('a sleeping agent', () => {
    before(async () => {
      expect((await h.api('POST', '/api/v1/agents', { name: 'sleeper', instructions: '@say zzz', lifecycle: 'Sleep' })).status).to.equal(201);
      await eventually(async () => (await agent('sleeper')).status === 'Sleeping', 60_000, 'sleeper asleep');
    });

    it('keeps the message queued, and delivers it as the next task when woken', async () => {
      const r = await message('sleeper', { from: 'bob', text: 'first queued\n@say got q1' });
      expect(r.status, JSON.stringify(r.body)).to.equal(202);
      expect(r.body).to.include({ delivery: 'queued', woken: false });
      const second = await message('sleeper', { from: 'carol', text: 'second queued' });
      expect(second.status).to.equal(202);
      // Still asleep, no task given, a while later.
      await new Promise((res) => setTimeout(res, 1500));
      expect(await agent('sleeper')).to.include({ status: 'Sleeping', task: 1 });
      expect(ofType(await history('sleeper'), 'message').map((e) => (e.payload as { delivery: string }).delivery)).to.deep.equal(['queued', 'queued']);

      expect((await h.api('PATCH', '/api/v1/agents/sleeper', { lifecycle: 'Wake' })).status).to.equal(200);
      await untilIdle('sleeper', 2);
      const evs = await history('sleeper');
      const started = evs.find((e) => e.type === 'task_started' && e.task === 2)!;
      expect((started.payload as { instructions: string }).instructions).to.equal(
        'Message from bob:\nfirst queued\n@say got q1\n\nMessage from carol:\nsecond queued',
      );
      expect(resultOf(evs, 2)).to.equal('got q1');
      expect((await agent('sleeper')).task).to.equal(2); // delivered once
    });

    it('with wake: true wakes it and delivers at once', async () => {
      expect((await h.api('PATCH', '/api/v1/agents/sleeper', { lifecycle: 'Sleep' })).status).to.equal(200);
      await eventually(async () => (await agent('sleeper')).status === 'Sleeping', 60_000, 'sleeper asleep again');
      const r = await message('sleeper', { from: 'dave', text: 'wake up now\n@echo', wake: true });
      expect(r.status, JSON.stringify(r.body)).to.equal(202);
      expect(r.body).to.include({ delivery: 'queued', woken: true });
      await untilIdle('sleeper', 3);
      const evs = await history('sleeper');
      expect(resultOf(evs, 3)).to.contain('wake up now');
      expect((await agent('sleeper')).status).to.not.equal('Sleeping');
    });
  });

  describe("a manager agent's agentplane tools", () => {
    before(async () => {
      // Workers (agents are managers by default): the tools are a manager's only.
      expect((await h.api('POST', '/api/v1/agents', { name: 'helper', role: 'worker', instructions: '@say ready' })).status).to.equal(201);
      expect((await h.api('POST', '/api/v1/agents?namespace=team-b', { name: 'outsider', role: 'worker', instructions: '@say ready' })).status).to.equal(201);
      await untilIdle('helper', 1);
      await untilIdle('outsider', 1, 'team-b');
    });

    it('send_message reaches another agent of the namespace, and both logs show the message', async () => {
      const script = [
        '@tool mcp__agentplane__list_agents {}',
        '@tool mcp__agentplane__send_message {"to":"helper","text":"please report\\n@echo"}',
        '@say sent',
      ].join('\n');
      const r = await h.api('POST', '/api/v1/agents', { name: 'boss', role: 'manager', instructions: script });
      expect(r.status).to.equal(201);
      await untilIdle('boss', 1);
      const bossEvents = await history('boss');
      const results = ofType(bossEvents, 'tool_result').map((e) => e.payload as { tool: string; output: string; isError: boolean });
      const listed = results.find((p) => p.tool === 'mcp__agentplane__list_agents')!;
      expect(listed.isError).to.equal(false);
      const names = (JSON.parse(listed.output) as { agents: { name: string }[] }).agents.map((a) => a.name);
      expect(names).to.include.members(['boss', 'helper']).and.not.include('outsider');
      const sent = results.find((p) => p.tool === 'mcp__agentplane__send_message')!;
      expect(sent, JSON.stringify(results)).to.deep.include({ isError: false });
      expect(sent.output).to.contain('delivered to "helper"');
      expect(ofType(bossEvents, 'message').map((e) => e.payload)).to.deep.equal([
        { from: 'boss', to: 'helper', text: 'please report\n@echo', direction: 'sent', delivery: 'task' },
      ]);

      await untilIdle('helper', 2);
      const helperEvents = await history('helper');
      expect(ofType(helperEvents, 'message').map((e) => e.payload)).to.deep.equal([
        { from: 'boss', to: 'helper', text: 'please report\n@echo', direction: 'received', delivery: 'task' },
      ]);
      expect(resultOf(helperEvents, 2)).to.contain('Message from boss:').and.to.contain('please report');
    });

    it("refuses a message to another namespace's agent", async () => {
      const script = '@tool mcp__agentplane__send_message {"to":"team-b/outsider","text":"cross the line"}\n@say tried';
      expect((await h.api('PATCH', '/api/v1/agents/boss', { instructions: script })).status).to.equal(200);
      await untilIdle('boss', 2);
      const result = ofType(await history('boss'), 'tool_result').find((e) => e.task === 2)!.payload as { output: string; isError: boolean };
      expect(result.isError).to.equal(true);
      expect(result.output).to.contain('only agents of its own namespace');
      const outsider = await agent('outsider', 'team-b');
      expect(outsider.task).to.equal(1);
      expect(ofType(await history('outsider', 'team-b'), 'message')).to.have.length(0);
    });

    it("holds send_message for a person when the agent's approval policy names it, and a denial sends nothing", async () => {
      const script = '@tool mcp__agentplane__send_message {"to":"helper","text":"unapproved words"}\n@say asked';
      const r = await h.api('POST', '/api/v1/agents', {
        name: 'gated-boss',
        role: 'manager',
        approval: { tools: ['mcp__agentplane__*'] },
        instructions: script,
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const pending = await eventually(
        async () => {
          const list = (await h.api('GET', '/api/v1/agents/gated-boss/approvals')).body.approvals as { id: string; tool: string; state?: string }[];
          return list?.length ? list : undefined;
        },
        60_000,
        'an approval request',
      );
      expect(pending[0].tool).to.equal('mcp__agentplane__send_message');
      const decided = await h.api('POST', `/api/v1/agents/gated-boss/approvals/${pending[0].id}`, { decision: 'deny', reason: 'not now' });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      await untilIdle('gated-boss', 1);
      const result = ofType(await history('gated-boss'), 'tool_result')[0].payload as { isError: boolean };
      expect(result.isError).to.equal(true);
      expect(ofType(await history('helper'), 'message').map((e) => (e.payload as { text: string }).text)).to.not.include('unapproved words');
    });

    it('gives the tools to managers only', () => {
      const toolsOf = (marker: string): string[] => h.model.requests.find((q) => q.hasTools && q.lastUserText.includes(marker))?.tools ?? [];
      expect(toolsOf('Message from boss:')).to.not.include('mcp__agentplane__send_message'); // helper, a worker
      expect(toolsOf('mcp__agentplane__list_agents')).to.include.members(['mcp__agentplane__send_message', 'mcp__agentplane__list_agents']);
    });
  });

  describe('bad requests', () => {
    const cases: [string, unknown, string][] = [
      ['no text', { from: 'x' }, 'text'],
      ['empty text', { text: '' }, 'text'],
      ['a number for from', { text: 'hi', from: 7 }, 'from'],
      ['a string for wake', { text: 'hi', wake: 'yes' }, 'wake'],
      ['an unknown field', { text: 'hi', urgent: true }, 'urgent'],
    ];
    for (const [what, body, field] of cases) {
      it(`answers 400 naming the field for ${what}`, async () => {
        const r = await message('idler', body);
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        expect(JSON.stringify(r.body.details.causes)).to.contain(field);
      });
    }

    it('answers 404 for a missing agent', async () => {
      const r = await message('nobody', { text: 'hello?' });
      expect(r.status).to.equal(404);
    });
  });

  it('is served by the aggregated API as agents/messages', async () => {
    await untilIdle('idler', 2);
    const r = await h.api('POST', '/apis/agentplane.io/v1alpha1/namespaces/default/agents/idler/messages', {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'AgentMessage',
      from: 'kube-user',
      text: 'via kubectl\n@say via kube',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ kind: 'AgentMessage', agent: 'idler', from: 'kube-user', delivery: 'task', task: 3 });
    await untilIdle('idler', 3);
    const bad = await h.api('POST', '/apis/agentplane.io/v1alpha1/namespaces/default/agents/idler/messages', { text: 5 });
    expect(bad.status).to.equal(422);
    // The envelope's fields keep their types: a metadata that is no object is refused, not dropped.
    for (const metadata of [
      'x',
      { uid: 5 },
      { generation: 2 ** 63 },
      { ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'n', uid: {} }] },
      { managedFields: [{ time: '' }] },
    ]) {
      const badMeta = await h.api('POST', '/apis/agentplane.io/v1alpha1/namespaces/default/agents/idler/messages', { metadata, text: 'hi' });
      expect(badMeta.status, JSON.stringify(metadata)).to.equal(422);
      expect(JSON.stringify(badMeta.body)).to.contain('metadata');
    }
    const discovery = (await h.api('GET', '/apis/agentplane.io/v1alpha1')).body.resources as { name: string; kind: string; verbs: string[] }[];
    expect(discovery.find((r) => r.name === 'agents/messages')).to.deep.include({ kind: 'AgentMessage', verbs: ['create'] });
  });

  describe('agentplane message (CLI)', () => {
    // The CLI's config lives in the harness's data directory, removed with it.
    const cli = (args: string[]) => runCli(cliEnv({ configDir: h.dataDir, server: h.url, env: { NO_COLOR: '1' } }), args);

    it('sends a message with --from and says how it was delivered', async () => {
      await untilIdle('idler', 3);
      const r = await cli(['message', 'idler', 'from the command line\n@say cli ok', '--from', 'ops']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('message from ops to agent/idler: delivered as its new task 4\n');
      await untilIdle('idler', 4);
      const last = ofType(await history('idler'), 'message').at(-1)!;
      expect(last.payload).to.deep.include({ from: 'ops', to: 'idler', delivery: 'task' });
    });

    it('queues for a sleeping agent and wakes it with --wake', async () => {
      expect((await h.api('PATCH', '/api/v1/agents/sleeper', { lifecycle: 'Sleep' })).status).to.equal(200);
      await eventually(async () => (await agent('sleeper')).status === 'Sleeping', 60_000, 'sleeper asleep');
      const queued = await cli(['message', 'sleeper', 'later', '--from', 'ops']);
      expect(queued.code, queued.stderr).to.equal(0);
      expect(queued.stdout).to.contain('queued: the agent sleeps');
      const woken = await cli(['message', 'sleeper', 'now\n@say both', '--wake', '-o', 'json']);
      expect(woken.code, woken.stderr).to.equal(0);
      expect(JSON.parse(woken.stdout)).to.include({ delivery: 'queued', woken: true });
      const a = await untilIdle('sleeper', 4);
      expect(a.status).to.not.equal('Sleeping');
    });

    it("fails with the server's words for a missing agent", async () => {
      const r = await cli(['message', 'nobody', 'hello?']);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.contain('nobody');
    });
  });
});
