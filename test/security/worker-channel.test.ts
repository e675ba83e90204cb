// The worker control channel is untrusted input: a tool in an agent's sandbox can read its
// worker's token (`/proc/*/environ`) and dial the channel itself. Against a real server with real
// workers on the scripted model, the attacker (this test, holding the token the way a tool would:
// from the worker process's environment) sends malformed JSON, `null`, wrong types, a huge frame,
// unknown types, out-of-order events, an oversized event and a flood, and posts invented usage.
// After each: the server answers /healthz and the API, the channel was closed with the documented
// code and a structured log line naming the agent, and another agent's task, running all along,
// completes. Before this suite's fixes, `null` ended the server process (and this test with it).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';
import WebSocket from 'ws';

import { TRUNCATED_MARKER } from '../../pkg/api/event-size.js';
import type { AgentEvent } from '../../pkg/api/event.js';
import {
  CONTROL_PATH,
  MAX_EVENT_BYTES,
  MODEL_REPORT_PATH,
  WORKER_MESSAGE_BURST,
  WORKER_MESSAGES_PER_SECOND,
  WorkerCloseCode,
} from '../../pkg/api/worker-protocol.js';
import { busyFor, EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

const REFUSED = 'closing a worker channel: the worker broke the protocol';

interface Closed {
  code: number;
  reason: string;
}

describe('security: the worker channel is untrusted input', function () {
  this.timeout(240_000);
  let h: Harness;
  let env: Record<string, string>;
  let bystander: EventClient;

  /** Dials the channel as the prober's worker, sends `frames` once open, and resolves with how the server closed it. */
  function dial(frames: (string | Buffer)[], opts: { binary?: boolean } = {}): Promise<Closed> {
    const ws = new WebSocket(new URL(CONTROL_PATH, h.url).toString().replace(/^http/, 'ws'), {
      headers: { authorization: `Bearer ${env.AGENTPLANE_AGENT_TOKEN}` },
    });
    ws.on('open', () => {
      for (const f of frames) ws.send(f, { binary: opts.binary ?? false });
    });
    ws.on('error', () => undefined); // the close below says what happened
    return new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  const hello = JSON.stringify({ type: 'hello', runningTaskId: 1, resumed: true });
  const text = (content: string, taskId = 1) => JSON.stringify({ type: 'event', taskId, event: { type: 'text', payload: { content } } });

  /** The server still serves everyone: the probe, the API, and the other agent is still at work. */
  async function stillServing(): Promise<void> {
    expect((await h.api('GET', '/healthz')).status).to.equal(200);
    const by = await h.api('GET', '/api/v1/agents/bystander');
    expect(by.status).to.equal(200);
    expect(by.body.taskStatus).to.equal('InProgress');
  }

  /** The structured log line of a refusal: the agent's namespace and name, the code and why. */
  function refusalLogged(code: number, why: string | RegExp): void {
    const lines = h.logs.filter((l) => l.includes(REFUSED)).map((l) => JSON.parse(l) as Record<string, unknown>);
    const found = lines.find((l) => l.code === code && (typeof why === 'string' ? String(l.why).includes(why) : why.test(String(l.why))));
    expect(found, `a log line for ${code} ${why}; got ${JSON.stringify(lines.map((l) => [l.code, l.why]))}`).to.not.equal(undefined);
    expect(found).to.deep.include({ namespace: 'default', name: 'prober' });
  }

  const proberEvents = async (): Promise<AgentEvent[]> => {
    const out: AgentEvent[] = [];
    let before: number | undefined;
    for (;;) {
      const r = await h.api<{ events: AgentEvent[] }>('GET', `/api/v1/agents/prober/events?limit=200${before ? `&before=${before}` : ''}`);
      out.unshift(...r.body.events);
      if (r.body.events.length < 200) return out;
      before = r.body.events[0].seq;
    }
  };

  const tokensOf = async (agent: string): Promise<number> => {
    const metrics = (await h.api('GET', '/metrics')).text;
    let n = 0;
    for (const line of metrics.split('\n'))
      if (line.startsWith('agentplane_model_tokens_total{') && line.includes(`agent="${agent}"`)) n += Number(line.split(' ').at(-1));
    return n;
  };
  const costTotal = async (): Promise<number> => {
    const line = (await h.api('GET', '/metrics')).text.split('\n').find((l) => l.startsWith('agentplane_task_cost_usd_total'));
    return Number(line?.split(' ').at(-1) ?? 0);
  };

  before(async () => {
    h = await startHarness();
    // The bystander's one tool waits for a file this test writes after the attacks: its task
    // runs through all of them and must still complete.
    const waiter = `node -e "const f=require('fs');const t=Date.now();const i=setInterval(()=>{if(f.existsSync('go')||Date.now()-t>200000)clearInterval(i)},100)"`;
    for (const [name, instructions] of [
      ['bystander', `@bash ${waiter}\n@say bystander done`],
      ['prober', `@bash ${busyFor(200)}\n@say prober done`],
    ]) {
      const r = await h.api('POST', '/api/v1/agents', { name, instructions });
      expect(r.status, r.text).to.equal(201);
    }
    bystander = new EventClient(`${h.url}/api/v1/agents/bystander/ws`);
    await bystander.until((evs) => evs.some((e) => e.type === 'tool_call'), 60_000);
    await eventually(async () => (await proberEvents()).some((e) => e.type === 'tool_call'), 60_000, 'the prober running its tool');
    // The prober's worker token: what a compromised worker, or a tool in a pod (whose container
    // environment holds it), has. Local tools no longer find it (test/security/sandbox.test.ts).
    env = { ...h.server.local!.issuedSecrets({ namespace: 'default', name: 'prober' })! };
    expect(env.AGENTPLANE_AGENT_TOKEN).to.have.length.above(20);
  });

  after(async () => {
    bystander?.close();
    await h?.close();
  });

  const malformed: [string, string, string][] = [
    ['malformed JSON', '{"type": "hello"', 'not JSON'],
    ['`null`', 'null', 'not a JSON object'],
    ['an event without its event', '{"type":"event","taskId":1}', 'event: event is required'],
    ['a hello with a task id of the wrong type', '{"type":"hello","runningTaskId":"1"}', 'runningTaskId must be an integer'],
    ['an unknown message type', '{"type":"shutdown"}', 'unknown message type "shutdown"'],
    [
      'a model_retry (the proxy’s event, never a worker’s)',
      JSON.stringify({ type: 'event', taskId: 1, event: { type: 'model_retry', payload: {} } }),
      'event.type must be one of',
    ],
  ];
  for (const [what, frame, why] of malformed) {
    it(`${what}: closed with ${WorkerCloseCode.invalid}, logged, and nobody else notices`, async () => {
      const closed = await dial([frame]);
      expect(closed.code).to.equal(WorkerCloseCode.invalid);
      expect(closed.reason).to.contain(why);
      refusalLogged(WorkerCloseCode.invalid, why);
      await stillServing();
    });
  }

  it(`a binary frame: closed with ${WorkerCloseCode.invalid}`, async () => {
    expect((await dial([Buffer.from(hello)], { binary: true })).code).to.equal(WorkerCloseCode.invalid);
    refusalLogged(WorkerCloseCode.invalid, 'binary');
    await stillServing();
  });

  it('a frame over 1 MiB: closed by ws’s maxPayload (1009), logged with the agent', async () => {
    const closed = await dial([`{"type":"hello","pad":"${'x'.repeat(2 * 1024 * 1024)}"}`]);
    // ws's own refusal, before the hub sees a byte of it.
    expect(closed.code).to.equal(1009);
    await eventually(
      async () => h.logs.some((l) => l.includes('worker channel error') && l.includes('"name":"prober"') && /payload/i.test(l)),
      5000,
      'the error logged',
    );
    await stillServing();
  });

  it(`out of order: an event before hello, a second hello, an event of a task never given: ${WorkerCloseCode.outOfOrder}`, async () => {
    expect(await dial([text('early')])).to.deep.equal({ code: WorkerCloseCode.outOfOrder, reason: 'event before hello' });
    expect((await dial([hello, hello])).code).to.equal(WorkerCloseCode.outOfOrder);
    const closed = await dial([hello, text('not mine', 99)]);
    expect(closed).to.deep.equal({ code: WorkerCloseCode.outOfOrder, reason: 'an event of task 99, which this worker was never given' });
    refusalLogged(WorkerCloseCode.outOfOrder, 'task 99');
    expect(
      (await proberEvents()).some((e) => e.task === 99),
      'nothing of task 99 stored',
    ).to.equal(false);
    await stillServing();
  });

  it('a 900 KB event (the reported attack) is stored cut to the event limit, ending with the marker', async () => {
    const huge = JSON.stringify({
      type: 'event',
      taskId: 1,
      event: { type: 'tool_result', payload: { id: 'fake', tool: 'Bash', output: 'A'.repeat(900_000), isError: false } },
    });
    // The channel stays open for a valid event; the real worker's reconnect replaces it (4409).
    const closed = dial([hello, huge]);
    const stored = await eventually(
      async () => (await proberEvents()).find((e) => e.type === 'tool_result' && (e.payload as { id: string }).id === 'fake'),
      10_000,
      'the event stored',
    );
    const payload = stored.payload as { output: string };
    expect(Buffer.byteLength(JSON.stringify(payload))).to.be.at.most(MAX_EVENT_BYTES);
    expect(payload.output.endsWith(TRUNCATED_MARKER)).to.equal(true);
    expect((await closed).code).to.equal(4409);
    await stillServing();
  });

  it(`a flood of small valid events: closed with ${WorkerCloseCode.flooding} after the burst; the others are served meanwhile`, async () => {
    const before = (await proberEvents()).length;
    const flood = [hello, ...Array.from({ length: 20_000 }, (_, i) => text(`flood ${i}`))];
    const closed = dial(flood);
    // The API answers while the flood is read.
    const t0 = Date.now();
    expect((await h.api('GET', '/api/v1/agents/bystander')).status).to.equal(200);
    expect(Date.now() - t0, 'an API read during the flood').to.be.below(5000);
    expect((await closed).code).to.equal(WorkerCloseCode.flooding);
    refusalLogged(WorkerCloseCode.flooding, 'too many messages');
    const stored = (await proberEvents()).length - before;
    // The burst, and what the bucket refilled while the flood was read.
    expect(stored, 'at most the burst of the flood stored').to.be.at.most(WORKER_MESSAGE_BURST + WORKER_MESSAGES_PER_SECOND);
    await stillServing();
  });

  it('invented usage is refused: the reports endpoint (404 here, no sidecars) and task_completed’s usage; metrics do not move', async () => {
    const tokens = await tokensOf('prober');
    const invented = { input_tokens: 1e9, output_tokens: 1e9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    // The agent's own model credential, as its tools read it.
    const posted = await fetch(new URL(MODEL_REPORT_PATH, h.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': env.ANTHROPIC_API_KEY },
      body: JSON.stringify({ type: 'usage', model: 'claude-opus-4-1', usage: invented }),
    });
    expect(posted.status).to.equal(404);
    expect(await posted.text()).to.contain('takes no reports');

    const claimed = { result: 'faked', cost_usd: 1e6, duration_ms: 1, turns: 1, stop_reason: 'end_turn', session_id: 's' };
    const withUsage = JSON.stringify({ type: 'event', taskId: 1, event: { type: 'task_completed', payload: { ...claimed, usage: invented } } });
    expect(await dial([hello, withUsage])).to.deep.include({ code: WorkerCloseCode.invalid });
    expect(await tokensOf('prober'), 'no tokens counted').to.equal(tokens);

    // A fake end with a wild cost: the task ends (the tool speaks for its agent), but its usage
    // is the meter's and its cost no more than those tokens could cost.
    const cost = await costTotal();
    const closed = dial([hello, JSON.stringify({ type: 'event', taskId: 1, event: { type: 'task_completed', payload: claimed } })]);
    const end = await eventually(async () => (await proberEvents()).find((e) => e.type === 'task_completed'), 10_000, 'the faked end stored');
    await closed;
    const p = end.payload as { cost_usd: number; usage?: { input_tokens: number; output_tokens: number } };
    expect(p.usage, 'the tokens the proxy metered').to.not.equal(undefined);
    expect(p.usage!.input_tokens).to.be.below(1e6);
    expect(p.cost_usd).to.be.below(1);
    expect((await costTotal()) - cost).to.be.below(1);
    expect(await tokensOf('prober')).to.equal(tokens);
  });

  it('the other agent’s task, running throughout, completes', async () => {
    writeFileSync(join(h.dataDir, 'workspaces', 'default', 'bystander', 'go'), '');
    const evs = await bystander.untilTaskEnd();
    const end = evs.find((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type))!;
    expect(end.type, JSON.stringify(end.payload)).to.equal('task_completed');
    expect((end.payload as { result: string }).result).to.contain('bystander done');
    expect((await h.api('GET', '/healthz')).status).to.equal(200);
  });
});

describe('security: a task past its event budget ends, and the agent goes on', function () {
  this.timeout(180_000);
  const BUDGET = 40;
  let h: Harness;

  before(async () => {
    // The default budget (10 000 events) takes long to reach; the mechanism is the same.
    h = await startHarness({ workerChannelLimits: { maxEventsPerTask: BUDGET } });
  });
  after(async () => {
    await h?.close();
  });

  it('ends the task with error{TooManyEvents}, stops its worker’s run of it, and the next task completes', async () => {
    const r = await h.api('POST', '/api/v1/agents', { name: 'chatty', instructions: `@bash ${busyFor(120)}\n@say never` });
    expect(r.status, r.text).to.equal(201);
    const ws = new EventClient(`${h.url}/api/v1/agents/chatty/ws`);
    await ws.until((evs) => evs.some((e) => e.type === 'tool_call'), 60_000);
    const env = { ...h.server.local!.issuedSecrets({ namespace: 'default', name: 'chatty' })! };
    const sock = new WebSocket(new URL(CONTROL_PATH, h.url).toString().replace(/^http/, 'ws'), {
      headers: { authorization: `Bearer ${env.AGENTPLANE_AGENT_TOKEN}` },
    });
    const cancels: unknown[] = [];
    sock.on('message', (d) => cancels.push(JSON.parse((d as Buffer).toString())));
    sock.on('error', () => undefined);
    await new Promise((resolve) => sock.on('open', resolve));
    sock.send(JSON.stringify({ type: 'hello', runningTaskId: 1, resumed: true }));
    for (let i = 0; i < BUDGET * 2; i++) sock.send(JSON.stringify({ type: 'event', taskId: 1, event: { type: 'text', payload: { content: `spam ${i}` } } }));
    const evs = await ws.untilTaskEnd(1);
    const end = evs.find((e) => e.task === 1 && ['task_completed', 'task_cancelled', 'error'].includes(e.type))!;
    expect(end.type).to.equal('error');
    expect(end.payload).to.deep.include({ reason: 'TooManyEvents' });
    expect((end.payload as { message: string }).message).to.contain(`at most ${BUDGET} events`);
    // The worker on the channel was told to stop the task.
    await eventually(async () => cancels.some((m) => (m as { type: string }).type === 'cancel'), 5000, 'a cancel sent');
    sock.close();
    // Stored: the budget's events and the end, nothing of the task after it.
    const stored = (await h.api<{ events: AgentEvent[] }>('GET', '/api/v1/agents/chatty/events?limit=200')).body.events.filter((e) => e.task === 1);
    expect(stored.at(-1)!.type).to.equal('error');
    expect(stored.length).to.be.at.most(BUDGET + 1);
    const agent = await h.api('GET', '/api/v1/agents/chatty');
    expect(agent.body.taskStatus).to.equal('Error');

    // The agent is not broken: its next task runs and completes.
    await eventually(
      async () => (await h.api('POST', '/api/v1/agents', { name: 'chatty', instructions: '@say back to normal' })).status === 200,
      60_000,
      'the next task accepted',
    );
    const next = await ws.untilTaskEnd(2);
    const done = next.find((e) => e.task === 2 && e.type === 'task_completed');
    expect(done, ws.types()).to.not.equal(undefined);
    ws.close();
  });
});
