// The in-memory runtime the controller unit tests use passes the runtime conformance suite, and
// its scripted outcomes (fail, crash) do what they say.

import { expect } from 'chai';

import type { RuntimeEvent } from '../../pkg/runtime/runtime.js';
import { runtimeConformance } from '../conformance/runtime.js';
import { MemoryRuntime } from '../support/memory-runtime.js';

const task = { model: 'claude-sonnet-4-5', role: 'worker' as const, mcpServers: [] };

runtimeConformance(
  'MemoryRuntime',
  async () => {
    const runtime = new MemoryRuntime();
    return {
      runtime,
      workspaceExists: async (ref) => runtime.workspaceExists(ref),
      groupExists: async (group) => runtime.groups().includes(group),
      crash: async (ref) => {
        if (!(await runtime.crash(ref))) throw new Error(`no worker runs for ${ref.name}`);
      },
      quickTask: () => ({ ...task, instructions: '@say done' }),
      longTask: () => ({ ...task, instructions: '@hold' }),
      close: () => runtime.close(),
    };
  },
  { waitMs: 2000, quietMs: 20 },
);

describe('MemoryRuntime scripted outcomes', () => {
  const ref = { namespace: 'default', name: 'm' };
  const run = async (rt: MemoryRuntime, instructions: string): Promise<RuntimeEvent[]> => {
    const seen: RuntimeEvent[] = [];
    rt.watch((ev) => seen.push(ev));
    await rt.ensure({ ref, uid: 'u1' });
    while (!seen.some((e) => e.type === 'ready')) await new Promise((r) => setImmediate(r));
    expect(await rt.dispatch(ref, { taskId: 1, instructions, ...task })).to.equal(true);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    return seen;
  };
  const summary = (evs: RuntimeEvent[]): string[] => evs.map((e) => (e.type === 'event' ? e.event.type : e.type));

  it('@say completes with the said text as the result', async () => {
    const rt = new MemoryRuntime();
    const evs = await run(rt, 'hello\n@say all good');
    expect(summary(evs)).to.deep.equal(['ready', 'task_started', 'text', 'task_completed']);
    const end = evs.at(-1) as Extract<RuntimeEvent, { type: 'event' }>;
    expect(end.event.payload).to.include({ result: 'all good' });
    expect(rt.dispatched.map((d) => d.task.taskId)).to.deep.equal([1]);
  });

  it('@fail ends the task with an error; the worker stays', async () => {
    const rt = new MemoryRuntime();
    const evs = await run(rt, '@fail the model refused');
    expect(summary(evs)).to.deep.equal(['ready', 'task_started', 'error']);
    expect((evs.at(-1) as Extract<RuntimeEvent, { type: 'event' }>).event.payload).to.include({ message: 'the model refused' });
    expect((await rt.status(ref)).phase).to.equal('Ready');
  });

  it('@crash makes the worker exit during the task', async () => {
    const rt = new MemoryRuntime();
    const evs = await run(rt, '@crash');
    expect(summary(evs)).to.deep.equal(['ready', 'task_started', 'disconnected', 'exited']);
    expect(evs.at(-1)).to.deep.include({ code: 1 });
    expect((await rt.status(ref)).phase).to.equal('Absent');
  });

  it('a custom outcome replaces the directives; steer reaches a held task only', async () => {
    const rt = new MemoryRuntime({ outcome: () => ({ kind: 'hold' }) });
    const evs = await run(rt, '@say ignored');
    expect(summary(evs)).to.deep.equal(['ready', 'task_started']);
    expect(await rt.steer(ref, 1, 'more', 100)).to.equal(true);
    expect(await rt.steer(ref, 2, 'wrong task', 100)).to.equal(false);
    expect(rt.steered).to.deep.equal([{ ref, taskId: 1, content: 'more' }]);
  });
});
