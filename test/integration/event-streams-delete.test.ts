// Event streams across an agent's deletion: seqs never repeat for a name (a cursor from the deleted
// agent resumes on the re-created one), and readers connected when the agent is deleted are told
// (WebSocket close 4410 "agent deleted"; the aggregated log?follow=true stream ends).

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { busyFor, EventClient, eventually, type Harness, startHarness } from '../support/harness.js';
import { LineStream } from '../support/line-stream.js';

const NS = '/apis/agentplane.io/v1alpha1/namespaces/default';
const wsUrl = (h: Harness, name: string, query = ''): string => `${h.url}/api/v1/agents/${name}/ws${query}`;
const contents = (evs: AgentEvent[]): string[] => evs.flatMap((e) => (e.type === 'text' ? [(e.payload as { content: string }).content] : []));

describe('event streams across delete (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  /** Sends a task and waits for its end over a WebSocket; returns the events. */
  const run = async (name: string, instructions: string): Promise<AgentEvent[]> => {
    const r = await h.api('POST', '/api/v1/agents', { name, instructions });
    expect([200, 201], r.text).to.include(r.status);
    const ws = new EventClient(wsUrl(h, name));
    try {
      return [...(await ws.untilTaskEnd())];
    } finally {
      ws.close();
    }
  };

  describe('seq across delete and re-create', () => {
    let oldEvents: AgentEvent[];
    let oldLast: number;

    before(async () => {
      oldEvents = await run('phoenix', '@say first life');
      oldLast = oldEvents.at(-1)!.seq;
      expect(contents(oldEvents)).to.include('first life');
      const del = await h.api('DELETE', '/api/v1/agents/phoenix');
      expect(del.status, del.text).to.equal(200);
      expect((await h.api('GET', '/api/v1/agents/phoenix')).status).to.equal(404);
      const again = await h.api('POST', '/api/v1/agents', { name: 'phoenix', instructions: '@say second life' });
      expect(again.status, again.text).to.equal(201);
    });

    it("a WebSocket resuming with since=<last seq of the deleted agent> receives the new agent's events", async () => {
      const ws = new EventClient(wsUrl(h, 'phoenix', `?since=${oldLast}`));
      try {
        const evs = await ws.untilTaskEnd();
        expect(evs[0]).to.include({ type: 'task_started', task: 1, seq: oldLast + 1 });
        expect(evs[0].payload).to.deep.equal({ instructions: '@say second life' });
        expect(contents(evs)).to.include('second life');
        expect(contents(evs)).not.to.include('first life');
        expect(evs.every((e) => e.seq > oldLast)).to.equal(true);
        expect(evs.at(-1)!.type).to.equal('task_completed');
      } finally {
        ws.close();
      }
    });

    it("a cursor from the middle of the deleted agent's stream, or since=0, gets all of the new one and none of the old", async () => {
      for (const since of [0, Math.max(1, oldLast - 2)]) {
        const ws = new EventClient(wsUrl(h, 'phoenix', `?since=${since}`));
        try {
          const evs = await ws.untilTaskEnd();
          expect(evs[0].seq, `since=${since}`).to.equal(oldLast + 1);
          expect(contents(evs), `since=${since}`).not.to.include('first life');
        } finally {
          ws.close();
        }
      }
    });

    it("REST history shows only the new agent's events, and `before` pages through them", async () => {
      const all = await h.api('GET', '/api/v1/agents/phoenix/events?limit=200');
      expect(all.status).to.equal(200);
      const evs = all.body.events as AgentEvent[];
      expect(evs.length).to.be.greaterThan(1);
      expect(evs.map((e) => e.seq)).to.deep.equal(evs.map((_, i) => oldLast + 1 + i));
      expect(contents(evs)).not.to.include('first life');
      const second = evs[1].seq;
      const page = await h.api('GET', `/api/v1/agents/phoenix/events?before=${second}`);
      expect(page.status).to.equal(200);
      expect(page.body.events.map((e: AgentEvent) => e.seq)).to.deep.equal([oldLast + 1]);
      const none = await h.api('GET', `/api/v1/agents/phoenix/events?before=${oldLast + 1}`);
      expect(none.body.events).to.deep.equal([]);
      const last2 = await h.api('GET', '/api/v1/agents/phoenix/events?limit=2');
      expect(last2.body.events.map((e: AgentEvent) => e.seq)).to.deep.equal(evs.slice(-2).map((e) => e.seq));
    });

    it("the aggregated API's events and log?since=<old seq> agree", async () => {
      const list = await h.api('GET', `${NS}/agents/phoenix/events?limit=200`);
      expect(list.status).to.equal(200);
      expect(list.body.items[0].seq).to.equal(oldLast + 1);
      const log = await h.api('GET', `${NS}/agents/phoenix/log?since=${oldLast}`);
      expect(log.status).to.equal(200);
      const lines = log.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as AgentEvent);
      expect(lines.map((e) => e.seq)).to.deep.equal(list.body.items.map((e: AgentEvent) => e.seq));
    });
  });

  describe('readers of a deleted agent are told', () => {
    it('a WebSocket on an idle agent closes with 4410 "agent deleted" within seconds of DELETE', async () => {
      await run('farewell', '@say hello');
      const ws = new EventClient(wsUrl(h, 'farewell', '?since=0'));
      await ws.opened();
      await ws.untilTaskEnd();
      const start = Date.now();
      const del = await h.api('DELETE', '/api/v1/agents/farewell');
      expect(del.status, del.text).to.equal(200);
      const closed = await eventually(async () => ws.closed, 5_000, 'the WebSocket to close');
      expect(closed).to.deep.equal({ code: 4410, reason: 'agent deleted' });
      expect(Date.now() - start).to.be.lessThan(5_000);
    });

    it('a WebSocket on an agent in the middle of a task closes with 4410 before DELETE has finished cleaning up', async () => {
      const r = await h.api('POST', '/api/v1/agents', { name: 'midtask', instructions: `@bash ${busyFor(60)}\n@say never` });
      expect(r.status).to.equal(201);
      const ws = new EventClient(wsUrl(h, 'midtask'));
      await ws.until((evs) => evs.some((e) => e.type === 'tool_call'));
      const start = Date.now();
      const del = h.api('DELETE', '/api/v1/agents/midtask');
      const closed = await eventually(async () => ws.closed, 5_000, 'the WebSocket to close');
      expect(closed).to.deep.equal({ code: 4410, reason: 'agent deleted' });
      expect(Date.now() - start).to.be.lessThan(5_000);
      expect([200, 202]).to.include((await del).status);
      // Reconnecting is refused: the agent is gone (or going).
      const again = new EventClient(wsUrl(h, 'midtask'));
      await again.opened().then(
        () => expect.fail('upgrade should be refused'),
        (err: Error) => expect(err.message).to.contain('404'),
      );
    });

    it('log?follow=true through the aggregated API ends within seconds of the delete', async () => {
      await run('logged', '@say logged');
      const follow = await LineStream.open<AgentEvent>(`${h.url}${NS}/agents/logged/log?follow=true`);
      expect(follow.status).to.equal(200);
      await follow.until((evs) => evs.some((e) => e.type === 'task_completed'), 10_000, 'replay');
      const start = Date.now();
      const del = await h.api('DELETE', `${NS}/agents/logged`);
      expect([200, 202], del.text).to.include(del.status);
      await follow.end(5_000);
      expect(follow.ended).to.equal(true);
      expect(Date.now() - start).to.be.lessThan(5_000);
    });
  });
});
