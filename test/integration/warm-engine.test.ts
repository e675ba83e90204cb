// The warm engine and idle release end to end, on real workers and the real engine against the
// scripted model: an agent's engine process outlives its task (the next task is one more message
// in the same session), survives a cancel and a model change, is replaced (resuming the session)
// when its settings change, and goes away with the worker after the idle timeout until a task
// brings both back.

import { readFileSync, readdirSync } from 'node:fs';
import { expect } from 'chai';
import type { Condition } from '../../pkg/api/condition.js';
import type { RecordedRequest } from '../../pkg/scriptedmodel/index.js';
import { runTask } from '../support/agents.js';
import { busyFor, EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default/agents';

/** Each process's parent and command line (NULs kept between arguments). */
function processTable(): Map<number, { ppid: number; cmdline: string }> {
  const table = new Map<number, { ppid: number; cmdline: string }>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      table.set(Number(d), { ppid, cmdline: readFileSync(`/proc/${d}/cmdline`, 'utf8') });
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

/**
 * The processes the server runs for one agent: its sandbox (whose command line binds the agent's
 * workspace) and everything under it: the worker and its engine.
 */
function agentProcesses(h: Harness, name: string): { pid: number; cmdline: string }[] {
  const table = processTable();
  const mark = `${h.dataDir}/workspaces/default/${name}\0`;
  const ofAgent = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 50; hops++) {
      const row = table.get(p);
      if (!row) return false;
      if (row.cmdline.includes(mark)) return true;
      p = row.ppid;
    }
    return false;
  };
  return [...table].filter(([pid]) => ofAgent(pid)).map(([pid, row]) => ({ pid, cmdline: row.cmdline }));
}

/** The agent's engine processes (the Claude Code binary the SDK starts). */
const engines = (h: Harness, name: string): number[] =>
  agentProcesses(h, name)
    .filter((p) => p.cmdline.includes('claude-agent-sdk'))
    .map((p) => p.pid);

/** The model requests of a task (with tools: not the engine's auxiliary calls), by its prompt. */
const requestsOf = (h: Harness, prompt: string): RecordedRequest[] => h.model.requests.filter((r) => r.hasTools && r.lastUserText === prompt);

async function workerReady(h: Harness, name: string): Promise<Condition | undefined> {
  const r = await h.api('GET', `${AGG}/${name}`);
  return (r.body.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'WorkerReady');
}

describe('warm engine (integration)', function () {
  this.timeout(120_000);

  describe('between tasks', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ idleTimeoutMs: 0 });
    });
    after(async () => {
      await h?.close();
    });

    it('runs a second task in the same engine process, which has the first in its conversation', async () => {
      const first = await runTask(h, 'warm', '@say one');
      expect(first.at(-1)?.type).to.equal('task_completed');
      const [engine, ...more] = engines(h, 'warm');
      expect(engine, 'an engine process under the worker').to.be.a('number');
      expect(more).to.deep.equal([]);

      const second = await runTask(h, 'warm', '@say two');
      expect(second.at(-1)?.type).to.equal('task_completed');
      expect(engines(h, 'warm')).to.deep.equal([engine]);
      const [req] = requestsOf(h, '@say two');
      expect(req?.userTexts).to.deep.equal(['@say one', '@say two']);
    });

    it('cancels mid-turn by interrupting it: the session survives and the next task continues it', async () => {
      await runTask(h, 'interrupted', '@say hello');
      const [engine] = engines(h, 'interrupted');
      const busy = `@bash ${busyFor(60)}\n@say never`;
      const post = await h.api('POST', '/api/v1/agents', { name: 'interrupted', instructions: busy });
      expect(post.status).to.equal(200);
      const ws = new EventClient(`${h.url}/api/v1/agents/interrupted/ws`);
      try {
        await ws.until((evs) => evs.some((e) => e.type === 'tool_call' && e.task === 2));
        const c = await h.api('POST', '/api/v1/agents/interrupted/cancel');
        expect(c.status, JSON.stringify(c.body)).to.equal(200);
        const evs = await ws.untilTaskEnd(2);
        expect(evs.filter((e) => e.task === 2).at(-1)?.type).to.equal('task_cancelled');
      } finally {
        ws.close();
      }
      expect(engines(h, 'interrupted')).to.deep.equal([engine]);

      const next = await runTask(h, 'interrupted', '@say after the cancel');
      expect(next.at(-1)?.type).to.equal('task_completed');
      expect(engines(h, 'interrupted')).to.deep.equal([engine]);
      const [req] = requestsOf(h, '@say after the cancel');
      // The engine notes the interruption in front of the next message.
      expect(req?.userTexts.slice(0, 2)).to.deep.equal(['@say hello', busy]);
      expect(req?.userTexts[2]).to.match(/interrupted[\s\S]*@say after the cancel$/);
    });

    // The engine reports its session's running total; a warm session runs many tasks.
    it("gives each task's end its own cost, a cancelled one's included; the cost metric is their sum", async () => {
      const metric = async (): Promise<number> => Number(/^agentplane_task_cost_usd_total (\S+)$/m.exec((await h.api('GET', '/metrics')).text)?.[1] ?? 0);
      const costOf = (evs: { type: string; payload: unknown }[]): number => (evs.at(-1)!.payload as { cost_usd: number }).cost_usd;
      const before = await metric();
      const first = await runTask(h, 'spender', '@say the same words');
      const second = await runTask(h, 'spender', '@say the same words');
      expect(engines(h, 'spender')).to.have.length(1);
      const [one, two] = [costOf(first), costOf(second)];
      expect(one).to.be.greaterThan(0);
      // The same one-turn task: about the same cost (the conversation grew a little), never the sum.
      expect(two / one, `task 1 $${one}, task 2 $${two}`).to.be.within(0.8, 1.3);

      const post = await h.api('POST', '/api/v1/agents', { name: 'spender', instructions: `@bash ${busyFor(60)}\n@say never` });
      expect(post.status).to.equal(200);
      const ws = new EventClient(`${h.url}/api/v1/agents/spender/ws`);
      let three: number;
      try {
        await ws.until((evs) => evs.some((e) => e.type === 'tool_call' && e.task === 3));
        expect((await h.api('POST', '/api/v1/agents/spender/cancel')).status).to.equal(200);
        const end = (await ws.untilTaskEnd(3)).filter((e) => e.task === 3).at(-1)!;
        expect(end.type).to.equal('task_cancelled');
        three = (end.payload as { cost_usd?: number }).cost_usd ?? 0;
        expect(three, 'the cancelled turn spent one model request').to.be.within(0.5 * one, 2 * one);
        expect(end.payload).to.have.property('usage');
      } finally {
        ws.close();
      }
      const fourth = await runTask(h, 'spender', '@say the same words');
      expect(costOf(fourth) / one, 'the cancelled task is not in the next one').to.be.within(0.8, 1.5);
      expect((await metric()) - before).to.be.closeTo(one + two + three + costOf(fourth), 1e-9);
    });

    it('starts an engine resuming the session when the model or the system prompt changes', async () => {
      await runTask(h, 'configured', '@say first');
      const [first] = engines(h, 'configured');
      expect((await h.api('PATCH', '/api/v1/agents/configured', { model: 'scripted-model-2' })).status).to.equal(200);
      await runTask(h, 'configured', '@say on the second model');
      const [second, ...more] = engines(h, 'configured');
      expect(more).to.deep.equal([]);
      expect(second).to.be.a('number').and.not.equal(first);
      const [onSecond] = requestsOf(h, '@say on the second model');
      expect(onSecond?.model).to.equal('scripted-model-2');
      expect(onSecond?.userTexts).to.deep.equal(['@say first', '@say on the second model']);

      expect((await h.api('PATCH', '/api/v1/agents/configured', { systemPrompt: 'You answer in haiku.' })).status).to.equal(200);
      const evs = await runTask(h, 'configured', '@say in haiku');
      expect(evs.at(-1)?.type).to.equal('task_completed');
      const now = engines(h, 'configured');
      expect(now).to.have.length(1);
      expect(now[0]).to.not.equal(second);
      const [req] = requestsOf(h, '@say in haiku');
      expect(req?.system).to.contain('You answer in haiku.');
      expect(req?.model).to.equal('scripted-model-2');
      expect(req?.userTexts).to.deep.equal(['@say first', '@say on the second model', '@say in haiku']);

      // Settled again: the next task stays in this engine.
      await runTask(h, 'configured', '@say still here');
      expect(engines(h, 'configured')).to.deep.equal(now);
    });
  });

  describe('idle agents', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ idleTimeoutMs: 2_000 });
    });
    after(async () => {
      await h?.close();
    });

    it('give back worker and engine after the idle timeout, say so, and come back for the next task in the same session', async () => {
      await runTask(h, 'napper', '@say before the nap');
      expect(engines(h, 'napper')).to.have.length(1);
      const released = await eventually(
        async () => {
          const c = await workerReady(h, 'napper');
          return c?.reason === 'Released' ? c : undefined;
        },
        30_000,
        'WorkerReady reason Released',
      );
      expect(released.status).to.equal('False');
      expect(released.message).to.match(/released after 2s without a task/);
      await eventually(async () => agentProcesses(h, 'napper').length === 0, 10_000, 'no process left for the agent');
      const view = await h.api('GET', '/api/v1/agents/napper');
      expect(view.body).to.include({ status: 'Running', taskStatus: 'Complete' });
      const metrics = await h.api('GET', '/metrics');
      expect(metrics.text).to.match(/^agentplane_workers_released_total [1-9]/m);
      // The task's first model request was timed at the model proxy.
      expect(metrics.text).to.match(/^agentplane_task_first_model_request_seconds_count [1-9]/m);

      const evs = await runTask(h, 'napper', '@say after the nap');
      expect(evs.at(-1)?.type).to.equal('task_completed');
      const [req] = requestsOf(h, '@say after the nap');
      expect(req?.userTexts).to.deep.equal(['@say before the nap', '@say after the nap']);
      const ready = await workerReady(h, 'napper');
      expect(ready).to.include({ status: 'True', reason: 'Connected' });
      expect(engines(h, 'napper')).to.have.length(1);
    });
  });
});
