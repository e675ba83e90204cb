// Durability across a service restart: agents, events and workspaces persist; a task that was
// running when the service stopped is settled as an error, and the agent takes the next task.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { busyFor, EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

describe('service restart (integration)', function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('keeps agents, history and workspaces, and settles the interrupted task', async () => {
    await h.api('POST', '/api/v1/agents', { name: 'durable', instructions: '@bash echo v1 > state.txt\n@say saved' });
    const ws = new EventClient(`${h.url}/api/v1/agents/durable/ws`);
    await ws.untilTaskEnd();
    ws.close();
    await h.api('POST', '/api/v1/agents', { name: 'durable', instructions: `@bash ${busyFor(60)}\n@say never` });
    const ws2 = new EventClient(`${h.url}/api/v1/agents/durable/ws`);
    await ws2.until((evs) => evs.some((e) => e.type === 'tool_call'));
    ws2.close();

    await h.restart();

    const agent = await eventually(async () => {
      const r = await h.api('GET', '/api/v1/agents/durable');
      return r.body.taskStatus === 'Error' && r.body;
    });
    expect(agent.lastTaskMessage).to.contain('service restarted');
    const hist = await h.api('GET', '/api/v1/agents/durable/events?limit=200');
    const types = hist.body.events.map((e: { type: string }) => e.type);
    expect(types.filter((t: string) => t === 'task_started')).to.have.length(2);
    expect(types.at(-1)).to.equal('error');
    expect(readFileSync(join(h.dataDir, 'workspaces', 'default', 'durable', 'state.txt'), 'utf8')).to.equal('v1\n');

    const next = await h.api('POST', '/api/v1/agents', { name: 'durable', instructions: '@bash cat state.txt\n@say read' });
    expect(next.status).to.equal(200);
    const ws3 = new EventClient(`${h.url}/api/v1/agents/durable/ws`);
    const evs = await ws3.untilTaskEnd(3);
    ws3.close();
    expect(evs.at(-1)!.type).to.equal('task_completed');
    expect((evs.find((e) => e.type === 'tool_result')!.payload as { output: string }).output).to.contain('v1');
  });
});
