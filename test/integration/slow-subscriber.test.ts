// Back-pressure on the event WebSocket: a client that stops reading is closed with 4008 "fell
// behind, resume with since=N" once more than SUBSCRIBER_BUFFER_BYTES wait for it, and resumes
// with since; meanwhile the agent's appends and a fast client on the same agent never wait for it.

import { expect } from 'chai';
import WebSocket from 'ws';

import type { AgentEvent } from '../../pkg/api/event.js';
import { DEFAULT_NAMESPACE } from '../../pkg/api/meta.js';
import { streamOf } from '../../pkg/controller/agent-controller.js';
import { FELL_BEHIND_CLOSE_CODE } from '../../pkg/server/event-follow.js';
import { EventClient, startHarness, type Harness } from '../support/harness.js';
import { opened } from '../support/waiting.js';

/** Enough bytes to fill loopback's socket buffers (several MB each way) and the 1 MiB on top. */
const EVENTS = 5000;
const CONTENT = 'y'.repeat(4000);

describe('slow event subscribers', function () {
  this.timeout(120_000);
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  it('closes a client that stopped reading with 4008 and since=N; it resumes from N, while a fast client got everything', async () => {
    const r = await h.api('POST', '/api/v1/agents', { name: 'chatty', instructions: '@say ready' });
    expect(r.status).to.equal(201);
    const warm = new EventClient(`${h.url}/api/v1/agents/chatty/ws`);
    await warm.opened();
    await warm.untilTaskEnd();
    warm.close();
    const agent = (await h.server.agents.get(DEFAULT_NAMESPACE, 'chatty'))!;
    const stream = streamOf(agent);
    const start = await h.server.events.lastSeq(stream);
    const ws = `${h.url}/api/v1/agents/chatty/ws?since=${start}`;

    const fast = new EventClient(ws);
    const slow = new WebSocket(ws.replace(/^http/, 'ws'));
    await Promise.all([fast.opened(), opened(slow)]);
    const slowGot: number[] = [];
    slow.on('message', (d) => slowGot.push((JSON.parse((d as Buffer).toString()) as AgentEvent).seq));
    const slowClosed = new Promise<{ code: number; reason: string }>((resolve) =>
      slow.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
    slow.pause(); // stops reading: the server's writes pile up

    // The agent's side: bursts of appends, as a worker's events arrive.
    for (let sent = 0; sent < EVENTS; sent += 100) {
      await Promise.all(
        Array.from({ length: 100 }, () => h.server.events.append(stream, { type: 'text', task: agent.spec.task, payload: { content: CONTENT } })),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    const last = start + EVENTS;
    // Every append went through, and the fast client got every event in order, with the slow
    // client still not reading.
    await fast.until((evs) => evs.length >= EVENTS);
    expect(fast.events.map((e) => e.seq)).to.deep.equal(Array.from({ length: EVENTS }, (_, i) => start + i + 1));
    expect(fast.closed).to.equal(undefined);
    const behind = await h.api('GET', '/metrics');
    expect(behind.text).to.match(/^agentplane_websocket_fell_behind_total 1$/m);

    // The slow client reads again: what was sent to it, then the close that says where to resume.
    slow.resume();
    const closed = await slowClosed;
    expect(closed.code).to.equal(FELL_BEHIND_CLOSE_CODE);
    const m = /^fell behind, resume with since=(\d+)$/.exec(closed.reason);
    expect(m, closed.reason).to.not.equal(null);
    const resumeAt = Number(m![1]);
    expect(resumeAt).to.be.below(last);
    expect(slowGot).to.deep.equal(Array.from({ length: resumeAt - start }, (_, i) => start + i + 1));

    const again = new EventClient(`${h.url}/api/v1/agents/chatty/ws?since=${resumeAt}`);
    await again.opened();
    await again.until((evs) => evs.length >= last - resumeAt);
    expect(again.events.map((e) => e.seq)).to.deep.equal(Array.from({ length: last - resumeAt }, (_, i) => resumeAt + i + 1));
    again.close();
    fast.close();
  });
});
