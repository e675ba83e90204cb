import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { type Agent, agentFromRequest } from '../../pkg/api/agent.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { watchAgentGone } from '../../pkg/server/event-follow.js';
import { waitForAgent } from '../../pkg/server/services/agent-wait.js';
import { until } from '../support/waiting.js';

// Every live reader (WebSocket, log?follow) learns when its agent goes, and every REST operation
// that waits for an agent's state sees it: through one watch of the store for all of them, so an
// agent write costs one copy of the object, not one per waiter (pkg/server/agent-changes.ts).
describe('one agent watch for every live reader and REST wait', () => {
  let dir: string;
  let state: SqliteState;
  let agents: Registry<Agent>;
  /** Watches of the real registry open now. */
  let open = 0;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-gone-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    const registry = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
    open = 0;
    agents = Object.assign(registry, {
      watch: (...args: Parameters<Registry<Agent>['watch']>) => {
        open++;
        const stop = Registry.prototype.watch.apply(registry, args);
        return () => (open--, stop());
      },
    });
    for (const name of ['a', 'b', 'c']) await agents.create(agentFromRequest({ name, instructions: 'hi', lifecycle: 'Sleep' }, 'default'));
  });
  afterEach(() => {
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("tells only the deleted agent's readers, however many there are, through one watch released by the last reader", async () => {
    const fired: string[] = [];
    const stops: (() => void)[] = [];
    for (const name of ['a', 'b', 'c'])
      for (let i = 0; i < 100; i++) {
        const agent = (await agents.get('default', name))!;
        stops.push(watchAgentGone(agents, agent, () => fired.push(name)));
      }
    const known = (await agents.get('default', 'a'))!;
    const waiting = waitForAgent(agents, known.metadata, (a) => a?.status.taskStatus === 'Complete', known, 5_000);
    expect(open).to.equal(1);
    // A write that leaves the agent in place tells no reader; the REST wait sees it, in its own copy.
    await agents.updateStatus('default', 'a', (s) => void (s.taskStatus = 'Complete'));
    const waited = await waiting;
    expect(waited.settled).to.equal(true);
    expect(waited.agent.status.taskStatus).to.equal('Complete');
    waited.agent.status.taskStatus = 'Error';
    expect((await agents.get('default', 'a'))!.status.taskStatus).to.equal('Complete');
    await agents.delete('default', 'b');
    await until("b's readers told", () => fired.length === 100, 2_000);
    expect(new Set(fired)).to.deep.equal(new Set(['b']));
    for (const stop of stops) stop();
    expect(open).to.equal(0);
    await agents.delete('default', 'a');
    expect(fired).to.have.length(100);
  });

  it('a reader that subscribes after its agent was marked for deletion is told at once, by the look after subscribing', async () => {
    const before = (await agents.get('default', 'c'))!;
    await agents.delete('default', 'c');
    let told = 0;
    watchAgentGone(agents, before, () => told++);
    await until('told', () => told === 1, 2_000);
    expect(open, 'the reader is gone, and with it the watch').to.equal(0);
  });
});
