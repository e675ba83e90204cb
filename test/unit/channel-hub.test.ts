import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';
import WebSocket, { WebSocketServer } from 'ws';

import type { EventDraft } from '../../pkg/api/event.js';
import type { ObjectRef } from '../../pkg/api/meta.js';
import type { ServerMessage, TaskMessage, WorkerMessage } from '../../pkg/api/worker-protocol.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { WorkerHub } from '../../pkg/runtime/channel/hub.js';

const logger = createLogger({ level: 'silent' });
const refA: ObjectRef = { namespace: 'default', name: 'alpha' };
const refB: ObjectRef = { namespace: 'team', name: 'alpha' };

interface Client {
  ws: WebSocket;
  received: ServerMessage[];
  next(): Promise<ServerMessage>;
  send(msg: WorkerMessage | string): void;
  closed: Promise<{ code: number; reason: string }>;
}

async function until(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(2);
  }
}

const task = (taskId: number): TaskMessage => ({
  type: 'task',
  taskId,
  instructions: `do task ${taskId}`,
  model: 'claude-sonnet-4-5',
  role: 'worker',
  mcpServers: [{ name: 'github', namespace: 'default', revision: 'uid-1/1' }],
});

describe('WorkerHub', function () {
  this.timeout(10_000);

  describe('tokens', () => {
    it('authenticates the issued token and returns its grant', () => {
      const hub = new WorkerHub(logger);
      const token = hub.issueToken(refA, 'uid-a');
      expect(token).to.be.a('string').with.length.greaterThan(30);
      const grant = hub.authenticate(token);
      expect(grant).to.deep.equal({ ref: refA, uid: 'uid-a', token });
    });

    it('rejects a wrong, empty or missing token', () => {
      const hub = new WorkerHub(logger);
      const token = hub.issueToken(refA, 'uid-a');
      expect(hub.authenticate(undefined)).to.equal(undefined);
      expect(hub.authenticate('')).to.equal(undefined);
      expect(hub.authenticate('not-the-token')).to.equal(undefined);
      // Same length, one character different.
      const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      expect(hub.authenticate(flipped)).to.equal(undefined);
      expect(hub.authenticate(`${token}x`)).to.equal(undefined);
    });

    it('issues different tokens per agent, each mapping to its own grant', () => {
      const hub = new WorkerHub(logger);
      const ta = hub.issueToken(refA, 'uid-a');
      const tb = hub.issueToken(refB, 'uid-b');
      expect(ta).to.not.equal(tb);
      expect(hub.authenticate(ta)?.ref).to.deep.equal(refA);
      expect(hub.authenticate(tb)?.ref).to.deep.equal(refB);
      expect(hub.authenticate(tb)?.uid).to.equal('uid-b');
    });

    it('re-issuing invalidates the old token', () => {
      const hub = new WorkerHub(logger);
      const old = hub.issueToken(refA, 'uid-a');
      const fresh = hub.issueToken(refA, 'uid-a2');
      expect(fresh).to.not.equal(old);
      expect(hub.authenticate(old)).to.equal(undefined);
      expect(hub.authenticate(fresh)?.uid).to.equal('uid-a2');
    });

    it('revoke invalidates the token even without a connection', () => {
      const hub = new WorkerHub(logger);
      const t = hub.issueToken(refA, 'uid-a');
      hub.revoke(refA);
      expect(hub.authenticate(t)).to.equal(undefined);
      expect(hub.isConnected(refA)).to.equal(false);
    });
  });

  describe('over a real WebSocket', () => {
    let hub: WorkerHub;
    let wss: WebSocketServer;
    let url: string;
    const clients: WebSocket[] = [];

    beforeEach(async () => {
      hub = new WorkerHub(logger);
      wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      wss.on('connection', (ws, req) => {
        const auth = req.headers.authorization;
        const grant = hub.authenticate(auth?.startsWith('Bearer ') ? auth.slice(7) : undefined);
        if (!grant) return ws.close(4401, 'unauthorized');
        hub.attach(ws, grant);
      });
      await once(wss, 'listening');
      url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    });

    afterEach(async () => {
      for (const c of clients.splice(0)) c.terminate();
      hub.closeAll();
      await new Promise<void>((r) => wss.close(() => r()));
    });

    async function connect(token: string | undefined): Promise<Client> {
      const ws = new WebSocket(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
      clients.push(ws);
      const received: ServerMessage[] = [];
      const waiters: ((m: ServerMessage) => void)[] = [];
      ws.on('message', (data) => {
        const msg = JSON.parse((data as Buffer).toString()) as ServerMessage;
        const w = waiters.shift();
        if (w) w(msg);
        else received.push(msg);
      });
      const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
      await once(ws, 'open');
      return {
        ws,
        received,
        next: () => (received.length ? Promise.resolve(received.shift()!) : new Promise((r) => waiters.push(r))),
        send: (msg) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
        closed,
      };
    }

    /** Connects with a fresh token and waits until the hub emitted 'connected' for the hello. */
    async function attachWorker(ref: ObjectRef, uid: string, runningTaskId?: number): Promise<Client> {
      const token = hub.issueToken(ref, uid);
      const connected = once(hub, 'connected');
      const c = await connect(token);
      c.send({ type: 'hello', ...(runningTaskId !== undefined ? { runningTaskId } : {}) });
      await connected;
      return c;
    }

    it('emits connected on hello with the running task id, and tracks it', async () => {
      const token = hub.issueToken(refA, 'uid-a');
      const connected = once(hub, 'connected');
      const c = await connect(token);
      await until(() => hub.isConnected(refA));
      expect(hub.connectedCount).to.equal(1);
      c.send({ type: 'hello', runningTaskId: 3 });
      const [ref, running] = await connected;
      expect(ref).to.deep.equal(refA);
      expect(running).to.equal(3);
      expect(hub.runningTask(refA)).to.equal(3);
      expect(hub.isConnected(refB)).to.equal(false);
    });

    it('emits connected with undefined for a hello without a running task', async () => {
      const token = hub.issueToken(refA, 'uid-a');
      const connected = once(hub, 'connected');
      const c = await connect(token);
      c.send({ type: 'hello' });
      const [, running] = await connected;
      expect(running).to.equal(undefined);
      expect(hub.runningTask(refA)).to.equal(undefined);
    });

    it('assigns a warm-pool slot to an agent: its connection and token then speak for the agent', async () => {
      const slot: ObjectRef = { namespace: '.warm-pool', name: 'slot-1' };
      const token = hub.issueToken(slot, 'uid-slot', { slot: true });
      const reported: string[] = [];
      hub.on('connected', (ref) => reported.push(`connected ${ref.namespace}/${ref.name}`));
      hub.on('disconnected', (ref) => reported.push(`disconnected ${ref.namespace}/${ref.name}`));
      const ready = once(hub, 'slotReady');
      const c = await connect(token);
      c.send({ type: 'hello' });
      expect((await ready)[0]).to.deep.equal(slot);
      // A slot is no agent: not reported connected, not counted.
      expect(reported).to.deep.equal([]);
      expect(hub.connectedCount).to.equal(0);
      const events: string[] = [];
      hub.on('event', (ref, uid, _t, d) => events.push(`${ref.name} ${uid} ${d.type}`));

      expect(hub.assign(slot, refA, 'uid-a')).to.equal(true);
      expect(await c.next()).to.deep.equal({ type: 'assign', namespace: 'default', name: 'alpha', uid: 'uid-a' });
      expect(reported).to.deep.equal(['connected default/alpha']);
      expect(hub.isConnected(refA)).to.equal(true);
      expect(hub.connectedCount).to.equal(1);
      expect(hub.authenticate(token)).to.deep.equal({ ref: refA, uid: 'uid-a', token });
      expect(hub.hasGrant(slot)).to.equal(false);
      expect(hub.assign(slot, refB, 'uid-b'), 'a slot is assigned once').to.equal(false);

      expect(hub.send(refA, task(2))).to.equal(true);
      await c.next();
      c.send({ type: 'event', taskId: 2, event: { type: 'text', payload: { content: 'mine' } } });
      await until(() => events.length === 1);
      expect(events).to.deep.equal(['alpha uid-a text']);
      hub.revoke(refA);
      await c.closed;
      expect(hub.authenticate(token)).to.equal(undefined);
    });

    it("does not assign a slot that is not connected, nor an agent's grant", async () => {
      const slot: ObjectRef = { namespace: '.warm-pool', name: 'slot-2' };
      hub.issueToken(slot, 'uid-slot', { slot: true });
      expect(hub.assign(slot, refA, 'uid-a')).to.equal(false);
      await attachWorker(refB, 'uid-b');
      expect(hub.assign(refB, refA, 'uid-a')).to.equal(false);
      expect(hub.hasGrant(refA)).to.equal(false);
    });

    it('emits worker events as (ref, uid, taskId, draft), in order', async () => {
      const c = await attachWorker(refA, 'uid-a', 4);
      const got: [ObjectRef, string, number, EventDraft][] = [];
      hub.on('event', (ref, uid, taskId, draft) => got.push([ref, uid, taskId, draft]));
      const drafts: EventDraft[] = [
        { type: 'task_started', payload: { instructions: 'go' } },
        { type: 'text', payload: { content: 'working' } },
        { type: 'tool_call', payload: { id: 't1', tool: 'Bash', input: { command: 'ls' } } },
      ];
      for (const d of drafts) c.send({ type: 'event', taskId: 4, event: d });
      await until(() => got.length === 3);
      expect(got).to.deep.equal(drafts.map((d) => [refA, 'uid-a', 4, d]));
    });

    it('closes the connection on a malformed message (4400), and the agent is reported disconnected', async () => {
      const c = await attachWorker(refA, 'uid-a', 1);
      const gone = once(hub, 'disconnected');
      c.send('{not json');
      expect(await c.closed).to.deep.equal({ code: 4400, reason: 'not JSON' });
      expect((await gone)[0]).to.deep.equal(refA);
      expect(hub.isConnected(refA)).to.equal(false);
    });

    it('survives null, a bare event and a throwing listener: each closes only that connection', async () => {
      // Before: `null` or an event without `event` threw a TypeError out of the listener, and the
      // process exited.
      const other = await attachWorker(refB, 'uid-b', 1);
      for (const [raw, code] of [
        ['null', 4400],
        ['{"type":"event","taskId":1}', 4400],
      ] as const) {
        const c = await attachWorker(refA, 'uid-a', 1);
        c.send(raw);
        expect((await c.closed).code).to.equal(code);
      }
      // A listener that throws (a bug downstream) costs that connection only.
      const c = await attachWorker(refA, 'uid-a', 1);
      const boom = () => {
        throw new Error('downstream bug');
      };
      hub.on('event', boom);
      c.send({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: 'x' } } });
      expect(await c.closed).to.deep.equal({ code: 1011, reason: 'the server failed to handle a message' });
      hub.off('event', boom);
      expect(hub.isConnected(refB), 'the other agent’s worker stays').to.equal(true);
      const seen = once(hub, 'event');
      other.send({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: 'still here' } } });
      expect((await seen)[3].payload).to.deep.equal({ content: 'still here' });
    });

    it('closes an event of a task the worker was never given (4403), and a flood (4429)', async () => {
      const c = await attachWorker(refA, 'uid-a');
      hub.send(refA, task(2));
      await c.next();
      c.send({ type: 'event', taskId: 3, event: { type: 'text', payload: { content: 'x' } } });
      expect(await c.closed).to.deep.equal({ code: 4403, reason: 'an event of task 3, which this worker was never given' });

      hub = new WorkerHub(logger, { messagesPerSecond: 10, messageBurst: 20 });
      const f = await attachWorker(refA, 'uid-a', 1);
      let passed = 0;
      hub.on('event', () => passed++);
      for (let i = 0; i < 100; i++) f.send({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: `${i}` } } });
      expect((await f.closed).code).to.equal(4429);
      // The hello took one of the burst; nothing read after the close is handed on.
      expect(passed).to.equal(19);
      // Reconnecting does not refill the bucket: the next connection is refused as soon as it floods again.
      const again = await connect(hub.issueToken(refA, 'uid-a'));
      again.send({ type: 'hello', runningTaskId: 1 });
      for (let i = 0; i < 20; i++) again.send({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: `${i}` } } });
      expect((await again.closed).code).to.equal(4429);
      expect(passed, 'a fresh connection got no fresh burst').to.be.below(19 + 10);
    });

    it('cuts an oversized event, and ends a task past its event budget with TooManyEvents, once', async () => {
      hub = new WorkerHub(logger, { maxEventBytes: 2000, maxEventsPerTask: 3 });
      const c = await attachWorker(refA, 'uid-a');
      hub.send(refA, task(1));
      await c.next();
      const got: [number, EventDraft][] = [];
      hub.on('event', (_r, _u, t, d) => got.push([t, d]));
      c.send({ type: 'event', taskId: 1, event: { type: 'tool_result', payload: { id: 't', tool: 'Read', output: 'z'.repeat(100_000), isError: false } } });
      for (let i = 0; i < 5; i++) c.send({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: `${i}` } } });
      const cancel = await c.next();
      expect(cancel).to.deep.include({ type: 'cancel', taskId: 1 });
      await until(() => got.length === 4);
      await sleep(50);
      expect(got.map(([, d]) => d.type)).to.deep.equal(['tool_result', 'text', 'text', 'error']);
      expect(JSON.stringify(got[0][1].payload).length).to.be.at.most(2000);
      expect(got[3][1].payload).to.deep.include({ reason: 'TooManyEvents' });
      // The connection stays: a real worker answers the cancel; the next task counts from zero.
      expect(hub.isConnected(refA)).to.equal(true);
      hub.send(refA, task(2));
      await c.next();
      c.send({ type: 'event', taskId: 2, event: { type: 'text', payload: { content: 'next task' } } });
      await until(() => got.length === 5);
      expect(got[4]).to.deep.equal([2, { type: 'text', payload: { content: 'next task' } }]);
    });

    it('tells a reconnecting worker still running a task ended for its budget to stop it', async () => {
      hub = new WorkerHub(logger, { maxEventsPerTask: 2 });
      const c = await attachWorker(refA, 'uid-a');
      hub.send(refA, task(1));
      await c.next();
      for (let i = 0; i < 3; i++) c.send({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: `${i}` } } });
      expect(await c.next()).to.deep.include({ type: 'cancel', taskId: 1 });
      // Another connection (the real worker, after a tool spoke for it) says it runs task 1.
      const token = hub.issueToken(refA, 'uid-a');
      const real = await connect(token);
      real.send({ type: 'hello', runningTaskId: 1, resumed: true });
      expect(await real.next()).to.deep.include({ type: 'cancel', taskId: 1 });
    });

    it('drops an earlier task’s late end without a close, and keeps the current task running', async () => {
      const c = await attachWorker(refA, 'uid-a');
      const got: string[] = [];
      hub.on('event', (_r, _u, t, d) => got.push(`${t}:${d.type}`));
      hub.send(refA, task(1));
      await c.next();
      c.send({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: 'one' } } });
      hub.send(refA, task(2));
      await c.next();
      c.send({ type: 'event', taskId: 2, event: { type: 'text', payload: { content: 'two' } } });
      c.send({ type: 'event', taskId: 1, event: { type: 'task_cancelled', payload: { reason: 'settled late' } } });
      c.send({ type: 'event', taskId: 2, event: { type: 'text', payload: { content: 'still two' } } });
      await until(() => got.length === 3);
      expect(got).to.deep.equal(['1:text', '2:text', '2:text']);
      expect(hub.runningTask(refA)).to.equal(2);
      expect(hub.isConnected(refA)).to.equal(true);
    });

    it('send() delivers the task as JSON and runningTask() tracks it until a terminal event', async () => {
      const c = await attachWorker(refA, 'uid-a');
      expect(hub.runningTask(refA)).to.equal(undefined);
      const msg = task(7);
      expect(hub.send(refA, msg)).to.equal(true);
      expect(hub.runningTask(refA)).to.equal(7);
      expect(await c.next()).to.deep.equal(msg);

      // A non-terminal event keeps it running.
      const events: string[] = [];
      hub.on('event', (_r, _u, _t, d) => events.push(d.type));
      c.send({ type: 'event', taskId: 7, event: { type: 'text', payload: { content: 'hi' } } });
      await until(() => events.length === 1);
      expect(hub.runningTask(refA)).to.equal(7);

      c.send({
        type: 'event',
        taskId: 7,
        event: {
          type: 'task_completed',
          payload: { result: 'ok', cost_usd: 0, duration_ms: 1, turns: 1, stop_reason: 'end_turn', session_id: 's' },
        },
      });
      await until(() => events.length === 2);
      expect(hub.runningTask(refA)).to.equal(undefined);
    });

    for (const terminal of [
      { type: 'task_cancelled', payload: { reason: 'cancelled by request' } },
      { type: 'error', payload: { message: 'boom', reason: 'EngineError' } },
    ] as EventDraft[]) {
      it(`clears the running task after a ${terminal.type} event`, async () => {
        const c = await attachWorker(refA, 'uid-a');
        hub.send(refA, task(2));
        await c.next();
        expect(hub.runningTask(refA)).to.equal(2);
        const seen = once(hub, 'event');
        c.send({ type: 'event', taskId: 2, event: terminal });
        await seen;
        expect(hub.runningTask(refA)).to.equal(undefined);
      });
    }

    it('send() delivers a cancel message without changing the running task', async () => {
      const c = await attachWorker(refA, 'uid-a', 5);
      expect(hub.send(refA, { type: 'cancel', taskId: 5, reason: 'stop' })).to.equal(true);
      expect(await c.next()).to.deep.equal({ type: 'cancel', taskId: 5, reason: 'stop' });
      expect(hub.runningTask(refA)).to.equal(5);
    });

    it("steer() sends the follow-up and resolves with the worker's answer", async () => {
      const c = await attachWorker(refA, 'uid-a', 5);
      const taken = hub.steer(refA, 5, 'also this', 2000);
      const msg = await c.next();
      expect(msg).to.deep.include({ type: 'steer', taskId: 5, content: 'also this' });
      const id = (msg as { id: string }).id;
      c.send({ type: 'steered', id: 'someone-else', accepted: false }); // not ours: ignored
      c.send({ type: 'steered', id, accepted: true });
      expect(await taken).to.equal(true);

      const refused = hub.steer(refA, 5, 'too late', 2000);
      c.send({ type: 'steered', id: ((await c.next()) as { id: string }).id, accepted: false });
      expect(await refused).to.equal(false);
    });

    it('steer() resolves undefined without a connection, on disconnect, and on timeout', async () => {
      expect(await hub.steer(refB, 1, 'x', 2000)).to.equal(undefined);
      const c = await attachWorker(refA, 'uid-a', 5);
      expect(await hub.steer(refA, 5, 'unanswered', 50)).to.equal(undefined);
      const pending = hub.steer(refA, 5, 'cut off', 5000);
      await c.next();
      await c.next();
      c.ws.close();
      expect(await pending).to.equal(undefined);
    });

    it('send() returns false for an agent without a connection', async () => {
      await attachWorker(refA, 'uid-a');
      expect(hub.send(refB, task(1))).to.equal(false);
      expect(hub.runningTask(refB)).to.equal(undefined);
    });

    it('routes messages to the right agent when two are connected', async () => {
      const a = await attachWorker(refA, 'uid-a');
      const b = await attachWorker(refB, 'uid-b');
      expect(hub.connectedCount).to.equal(2);
      hub.send(refB, task(11));
      hub.send(refA, task(22));
      expect(await b.next()).to.deep.include({ taskId: 11 });
      expect(await a.next()).to.deep.include({ taskId: 22 });
      const from: [string, string][] = [];
      hub.on('event', (ref, uid) => from.push([`${ref.namespace}/${ref.name}`, uid]));
      b.send({ type: 'event', taskId: 11, event: { type: 'text', payload: { content: 'b' } } });
      await until(() => from.length === 1);
      expect(from).to.deep.equal([['team/alpha', 'uid-b']]);
    });

    it('revoke closes the socket with 4401 and forgets the connection and token', async () => {
      const token = hub.issueToken(refA, 'uid-a');
      const c = await connect(token);
      c.send({ type: 'hello' });
      await until(() => hub.isConnected(refA));
      hub.revoke(refA);
      const { code, reason } = await c.closed;
      expect(code).to.equal(4401);
      expect(reason).to.equal('revoked');
      expect(hub.isConnected(refA)).to.equal(false);
      expect(hub.authenticate(token)).to.equal(undefined);
      expect(hub.send(refA, task(1))).to.equal(false);
    });

    it('a second attach replaces the first, which is closed with 4409; closing the old one does not disconnect the new', async () => {
      const first = await attachWorker(refA, 'uid-a');
      const disconnects: ObjectRef[] = [];
      hub.on('disconnected', (ref) => disconnects.push(ref));

      const second = await attachWorker(refA, 'uid-a');
      const { code } = await first.closed;
      expect(code).to.equal(4409);
      await sleep(20);
      expect(disconnects, 'the replaced connection is not reported as a disconnect').to.deep.equal([]);
      expect(hub.isConnected(refA)).to.equal(true);
      expect(hub.connectedCount).to.equal(1);

      // Messages now go to the second connection.
      hub.send(refA, task(9));
      expect(await second.next()).to.deep.include({ taskId: 9 });
      expect(first.received).to.deep.equal([]);
    });

    it('emits disconnected when the worker goes away', async () => {
      const c = await attachWorker(refA, 'uid-a');
      const gone = once(hub, 'disconnected');
      c.ws.close(1000, 'bye');
      const [ref] = await gone;
      expect(ref).to.deep.equal(refA);
      expect(hub.isConnected(refA)).to.equal(false);
      expect(hub.runningTask(refA)).to.equal(undefined);
    });

    it('closeAll closes every connection with 1001', async () => {
      const a = await attachWorker(refA, 'uid-a');
      const b = await attachWorker(refB, 'uid-b');
      hub.closeAll();
      const [ca, cb] = await Promise.all([a.closed, b.closed]);
      expect(ca.code).to.equal(1001);
      expect(cb.code).to.equal(1001);
      expect(hub.connectedCount).to.equal(0);
    });
  });
});
