// What the server accepts from a worker (the control channel is untrusted input: a tool in the
// agent's sandbox can speak for its worker): every message a real worker sends passes; every bad
// shape is refused with a reason naming the field; the order rules; the event size cap; and the
// metered usage that replaces a worker's claims.

import { expect } from 'chai';

import { capEventSize, payloadBytes, TRUNCATED_MARKER } from '../../pkg/api/event-size.js';
import type { EventDraft } from '../../pkg/api/event.js';
import { parseWorkerMessage } from '../../pkg/api/worker-protocol-schema.js';
import { MAX_EVENT_BYTES, MAX_WORKER_MESSAGE_BYTES, WorkerCloseCode } from '../../pkg/api/worker-protocol.js';
import { BODY_LIMIT } from '../../pkg/server/app.js';
import { meteredEnd } from '../../pkg/controller/task-usage.js';
import { MessageRate, TaskBudget } from '../../pkg/runtime/channel/limits.js';
import { checkWorkerMessage } from '../../pkg/runtime/channel/worker-input.js';

const ts = '2026-11-27T11:00:00.000Z';
const completed = { result: 'done', cost_usd: 0.0123, duration_ms: 1500, turns: 2, stop_reason: 'end_turn', session_id: 'sess-1' };

/** Every message a real worker sends (pkg/worker/agent-worker.ts, engine.ts). */
const GOOD: Record<string, unknown> = {
  'hello, first connect': { type: 'hello' },
  'hello after a reconnect': { type: 'hello', runningTaskId: 3, resumed: true },
  task_started: { type: 'event', taskId: 1, event: { type: 'task_started', payload: { instructions: 'go' }, timestamp: ts } },
  text: { type: 'event', taskId: 1, event: { type: 'text', payload: { content: 'hi' }, timestamp: ts } },
  thinking: { type: 'event', taskId: 1, event: { type: 'thinking', payload: { content: '' }, timestamp: ts } },
  tool_call: {
    type: 'event',
    taskId: 1,
    event: { type: 'tool_call', payload: { id: 'toolu_1', tool: 'Bash', input: { command: 'ls', nested: [1, { a: null }] } }, timestamp: ts },
  },
  tool_result: {
    type: 'event',
    taskId: 1,
    event: { type: 'tool_result', payload: { id: 'toolu_1', tool: '', output: 'a\nb', isError: false }, timestamp: ts },
  },
  user_message: { type: 'event', taskId: 1, event: { type: 'user_message', payload: { content: 'also this' }, timestamp: ts } },
  task_completed: { type: 'event', taskId: 1, event: { type: 'task_completed', payload: completed, timestamp: ts } },
  task_cancelled: { type: 'event', taskId: 2, event: { type: 'task_cancelled', payload: { reason: 'cancelled by request' }, timestamp: ts } },
  error: { type: 'event', taskId: 2, event: { type: 'error', payload: { message: 'boom', reason: 'EngineError' } } },
  steered: { type: 'steered', id: '5f0c6c1e-1d7a-4a53-9d51-0d0b8a2b6c11', accepted: true },
};

const event = (e: Record<string, unknown>, taskId: unknown = 1) => JSON.stringify({ type: 'event', taskId, event: e });

/** Bad input, and a fragment the refusal must contain (it names what is wrong). */
const BAD: [string, string, string][] = [
  ['not JSON', '{not json', 'not JSON'],
  ['null', 'null', 'not a JSON object'],
  ['a number', '42', 'not a JSON object'],
  ['a string', '"hello"', 'not a JSON object'],
  ['an array', '[{"type":"hello"}]', 'not a JSON object'],
  ['no type', '{}', 'unknown message type undefined'],
  ['an unknown type', '{"type":"shutdown"}', 'unknown message type "shutdown"'],
  ['a type of the wrong kind', '{"type":7}', 'unknown message type 7'],
  ['a prototype key as type', '{"type":"constructor"}', 'unknown message type "constructor"'],
  ['hello with a string task', '{"type":"hello","runningTaskId":"3"}', 'runningTaskId must be an integer'],
  ['hello with an extra field', '{"type":"hello","admin":true}', 'admin is not a known field'],
  ['an event without taskId', JSON.stringify({ type: 'event', event: { type: 'text', payload: { content: 'x' } } }), 'taskId is required'],
  ['an event with taskId a string', event({ type: 'text', payload: { content: 'x' } }, '1'), 'taskId must be an integer'],
  ['an event of task 0', event({ type: 'text', payload: { content: 'x' } }, 0), 'taskId must be at least 1'],
  ['an event of a fractional task', event({ type: 'text', payload: { content: 'x' } }, 1.5), 'taskId must be an integer'],
  ['an event without event', '{"type":"event","taskId":1}', 'event is required'],
  ['an event that is null', '{"type":"event","taskId":1,"event":null}', 'event must be a JSON object'],
  ['an unknown event type', event({ type: 'shell', payload: {} }), 'event.type must be one of'],
  [
    'a model_retry (the proxy’s, not a worker’s)',
    event({ type: 'model_retry', payload: { attempt: 1, of: 8, delayMs: 1, status: 529, message: 'x' } }),
    'event.type must be one of',
  ],
  ['an event without payload', event({ type: 'text' }), 'event.payload is required'],
  ['a payload that is a string', event({ type: 'text', payload: 'x' }), 'event.payload must be a JSON object'],
  ['text without content', event({ type: 'text', payload: {} }), 'event.payload.content is required'],
  ['text with content a number', event({ type: 'text', payload: { content: 1 } }), 'event.payload.content must be a string'],
  ['tool_call without input', event({ type: 'tool_call', payload: { id: 'a', tool: 'Bash' } }), 'event.payload.input is required'],
  [
    'a tool name of 2000 characters',
    event({ type: 'tool_call', payload: { id: 'a', tool: 'x'.repeat(2000), input: {} } }),
    'event.payload.tool must be at most 1024 characters',
  ],
  [
    'tool_result with isError a string',
    event({ type: 'tool_result', payload: { id: 'a', tool: 'Bash', output: '', isError: 'no' } }),
    'event.payload.isError must be true or false',
  ],
  [
    'task_completed claiming usage',
    event({
      type: 'task_completed',
      payload: { ...completed, usage: { input_tokens: 1e9, output_tokens: 1e9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
    }),
    'event.payload.usage is not a known field',
  ],
  [
    'task_completed with a negative cost',
    event({ type: 'task_completed', payload: { ...completed, cost_usd: -5 } }),
    'event.payload.cost_usd must be at least 0',
  ],
  ['task_completed without a result', event({ type: 'task_completed', payload: { ...completed, result: undefined } }), 'event.payload.result is required'],
  [
    'an event with a field of the service’s (task)',
    JSON.stringify({ type: 'event', taskId: 1, event: { type: 'text', task: 9, payload: { content: 'x' } } }),
    'event.task is not a known field',
  ],
  ['a timestamp that is no time', event({ type: 'text', payload: { content: 'x' }, timestamp: 'yesterday' }), 'event.timestamp'],
  ['steered without accepted', '{"type":"steered","id":"x"}', 'accepted is required'],
];

describe('worker protocol: what the server accepts from a worker', () => {
  describe('parseWorkerMessage', () => {
    for (const [what, msg] of Object.entries(GOOD)) {
      it(`accepts ${what}`, () => {
        expect(parseWorkerMessage(JSON.stringify(msg))).to.deep.equal({ message: msg });
      });
    }
    for (const [what, raw, reason] of BAD) {
      it(`refuses ${what}, saying why`, () => {
        const out = parseWorkerMessage(raw);
        expect(out).to.have.property('error').that.is.a('string').and.contains(reason);
      });
    }
  });

  describe('checkWorkerMessage (frame, shape and order)', () => {
    const msg = (m: unknown) => Buffer.from(JSON.stringify(m));
    const limits = { maxMessageBytes: 1000 };
    const greeted = { greeted: true, grant: { lastTask: 3 } };

    it('passes hello first, then events of tasks the worker was given (earlier ones too)', () => {
      expect(checkWorkerMessage({ greeted: false, grant: {} }, msg(GOOD['hello, first connect']), false, limits)).to.have.property('message');
      for (const taskId of [1, 3]) expect(checkWorkerMessage(greeted, msg({ ...(GOOD.text as object), taskId }), false, limits)).to.have.property('message');
    });

    const refused: [string, Parameters<typeof checkWorkerMessage>[0], Buffer, boolean, number, string][] = [
      ['a binary frame', greeted, msg(GOOD.text), true, WorkerCloseCode.invalid, 'binary'],
      ['a message over the size limit', greeted, Buffer.alloc(1001, 0x20), false, 1009, 'over 1000 bytes'],
      ['a bad shape', greeted, Buffer.from('null'), false, WorkerCloseCode.invalid, 'not a JSON object'],
      ['an event before hello', { greeted: false, grant: { lastTask: 3 } }, msg(GOOD.text), false, WorkerCloseCode.outOfOrder, 'event before hello'],
      ['a second hello', greeted, msg(GOOD['hello, first connect']), false, WorkerCloseCode.outOfOrder, 'a second hello'],
      [
        'an event of a task never given',
        greeted,
        msg({ ...(GOOD.text as object), taskId: 4 }),
        false,
        WorkerCloseCode.outOfOrder,
        'task 4, which this worker was never given',
      ],
      ['an event when no task was given at all', { greeted: true, grant: {} }, msg(GOOD.text), false, WorkerCloseCode.outOfOrder, 'task 1'],
      [
        'an event from an unassigned warm-pool slot',
        { greeted: true, grant: { slot: true, lastTask: 3 } },
        msg(GOOD.text),
        false,
        WorkerCloseCode.outOfOrder,
        'warm-pool slot',
      ],
      [
        'a steer answer from an unassigned warm-pool slot',
        { greeted: true, grant: { slot: true } },
        msg(GOOD.steered),
        false,
        WorkerCloseCode.outOfOrder,
        'warm-pool slot',
      ],
    ];
    for (const [what, conn, data, binary, code, reason] of refused) {
      it(`refuses ${what} (close code ${code})`, () => {
        const out = checkWorkerMessage(conn, data, binary, limits);
        expect(out).to.deep.include({ code });
        expect((out as { error: string }).error).to.contain(reason);
      });
    }
  });

  describe('the size cap of an event', () => {
    const MAX = 4096;
    it('the documented message limit is the listener’s ws maxPayload, and an event fits in it with room', () => {
      expect(MAX_WORKER_MESSAGE_BYTES).to.equal(BODY_LIMIT);
      expect(MAX_EVENT_BYTES + 64 * 1024, 'an event as JSON, with its envelope').to.be.below(MAX_WORKER_MESSAGE_BYTES);
    });

    it('leaves an event that fits as it is', () => {
      const d: EventDraft = { type: 'text', payload: { content: 'x'.repeat(100) } };
      expect(capEventSize(d, MAX)).to.equal(d);
    });

    it('cuts a long tool result to fit, ending with the marker, keeping the other fields', () => {
      const d: EventDraft = { type: 'tool_result', payload: { id: 'toolu_1', tool: 'Read', output: 'y'.repeat(50_000), isError: false } };
      const c = capEventSize(d, MAX) as EventDraft<'tool_result'>;
      expect(payloadBytes(c.payload))
        .to.be.at.most(MAX)
        .and.above(MAX - 200);
      expect(c.payload.output.endsWith(TRUNCATED_MARKER)).to.equal(true);
      expect(c.payload).to.deep.include({ id: 'toolu_1', tool: 'Read', isError: false });
      expect((d.payload as { output: string }).output, 'the original is not changed').to.have.length(50_000);
    });

    it('cuts strings that JSON escapes to six bytes each, and several long strings inside a tool input', () => {
      const escaped = capEventSize({ type: 'text', payload: { content: '\u0001'.repeat(20_000) } }, MAX);
      expect(payloadBytes(escaped.payload)).to.be.at.most(MAX);
      const input = { a: 'a'.repeat(10_000), list: ['b'.repeat(9_000), 'c'.repeat(8_000)], n: 5 };
      const call = capEventSize({ type: 'tool_call', payload: { id: 't', tool: 'Write', input } }, MAX) as EventDraft<'tool_call'>;
      expect(payloadBytes(call.payload)).to.be.at.most(MAX);
      expect((call.payload.input as { n: number }).n).to.equal(5);
    });

    it('a task_completed with a huge result still ends the task: cut, with its figures', () => {
      const c = capEventSize({ type: 'task_completed', payload: { ...completed, result: 'r'.repeat(100_000) } }, MAX) as EventDraft<'task_completed'>;
      expect(c.type).to.equal('task_completed');
      expect(c.payload).to.deep.include({ turns: 2, session_id: 'sess-1' });
      expect(payloadBytes(c.payload)).to.be.at.most(MAX);
    });
  });

  describe('a task’s event budget and a connection’s message rate', () => {
    it('passes events up to the count, ends the task on the next, then drops the rest', () => {
      const b = new TaskBudget('uid', 1, { maxEventBytes: 1000, maxEventsPerTask: 3, maxTaskEventBytes: 1e9 });
      const e: EventDraft = { type: 'text', payload: { content: 'x' } };
      expect([b.add(e), b.add(e), b.add(e)]).to.deep.equal([e, e, e]);
      expect(b.add(e)).to.equal('exceeded');
      expect(b.add(e)).to.equal('drop');
      expect(b.exceededMessage()).to.contain('at most 3 events');
    });

    it('counts bytes as stored (after the cut) against the task’s byte budget', () => {
      const b = new TaskBudget('uid', 1, { maxEventBytes: 1000, maxEventsPerTask: 100, maxTaskEventBytes: 2500 });
      const big: EventDraft = { type: 'text', payload: { content: 'x'.repeat(5000) } };
      expect(b.add(big)).to.be.an('object');
      expect(b.add(big)).to.be.an('object');
      expect(b.bytes).to.be.at.most(2000);
      expect(b.add(big)).to.equal('exceeded');
    });

    it('refuses an event no cut brings under the size (no strings to cut)', () => {
      const b = new TaskBudget('uid', 1, { maxEventBytes: 100, maxEventsPerTask: 100, maxTaskEventBytes: 1e9 });
      expect(b.add({ type: 'tool_call', payload: { id: 't', tool: 'x', input: Array.from({ length: 100 }, (_, i) => i) } })).to.equal('too big');
    });

    it('allows a burst, then the sustained rate', () => {
      let now = 0;
      const r = new MessageRate({ messagesPerSecond: 10, messageBurst: 5, now: () => now });
      expect(Array.from({ length: 6 }, () => r.take())).to.deep.equal([true, true, true, true, true, false]);
      now += 100; // one message's worth
      expect([r.take(), r.take()]).to.deep.equal([true, false]);
      now += 10_000; // refilled, never past the burst
      expect(Array.from({ length: 6 }, () => r.take()).filter(Boolean)).to.have.length(5);
    });
  });

  describe('usage comes from the meter, never from the worker', () => {
    const claimed: EventDraft<'task_completed'> = {
      type: 'task_completed',
      payload: { ...completed, cost_usd: 1e6, usage: { input_tokens: 1e9, output_tokens: 1e9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
    };
    const metered = { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

    it('replaces claimed tokens with the metered ones and caps the cost by what they could cost', () => {
      const out = meteredEnd(claimed, { usage: metered });
      expect(out.payload.usage).to.deep.equal(metered);
      // 1000 input at $15/M and 100 output at $75/M at most.
      expect(out.payload.cost_usd).to.be.closeTo(0.0225, 1e-9);
      expect(
        meteredEnd({ ...claimed, payload: { ...claimed.payload, cost_usd: 0.001 } }, { usage: metered }).payload.cost_usd,
        'a real estimate below the ceiling stays',
      ).to.equal(0.001);
    });

    it('with nothing metered: no usage and no cost', () => {
      const out = meteredEnd(claimed, { usage: undefined });
      expect(out.payload).to.not.have.property('usage');
      expect(out.payload.cost_usd).to.equal(0);
    });

    it('without a meter at all: only the claimed usage goes', () => {
      const out = meteredEnd(claimed, undefined);
      expect(out.payload).to.not.have.property('usage');
      expect(out.payload.cost_usd).to.equal(1e6);
    });
  });
});
