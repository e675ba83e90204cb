// The pure pieces behind clients of the peer project (komputer-ai): the cost sums, the field and
// route refusals, the oauth refusal on both APIs, the scripted model's compaction answer, a
// compaction held in a task's input, the meter's tokens by model and the worker's new event.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { expect } from 'chai';
import { costBreakdown, UNKNOWN_MODEL } from '../../pkg/api/agent-cost.js';
import { CONNECTOR_KIND, type Connector, type ConnectorSpec } from '../../pkg/api/connector.js';
import { ApiError } from '../../pkg/api/errors.js';
import type { AgentEvent, EventType } from '../../pkg/api/event.js';
import { explainPeerFields, PEER_AGENT_FIELDS } from '../../pkg/api/peer-fields.js';
import { agentTaskRequestSchema } from '../../pkg/api/agent.js';
import { validateSchema } from '../../pkg/api/validation.js';
import { parseWorkerMessage } from '../../pkg/api/worker-protocol-schema.js';
import { meteredEnd } from '../../pkg/controller/task-usage.js';
import { UsageMeter } from '../../pkg/modelproxy/meter.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { compactionOf, summaryTurn } from '../../pkg/scriptedmodel/compaction.js';
import { unsupportedMessage } from '../../pkg/server/unsupported.js';
import { TaskInput } from '../../pkg/worker/task-input.js';

const usage = (input: number, output: number, cacheRead = 0, cacheCreate = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheCreate,
});

let seq = 0;
const ev = (task: number, type: EventType, payload: unknown, timestamp = `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`): AgentEvent =>
  ({ seq: ++seq, agentName: 'a', namespace: 'default', task, type, timestamp, payload }) as AgentEvent;

describe('peer compatibility: cost breakdown', () => {
  const events = (): AgentEvent[] => {
    seq = 0;
    return [
      ev(1, 'task_started', { instructions: 'x'.repeat(250) }),
      ev(1, 'tool_call', { id: '1', tool: 'Bash', input: {} }),
      ev(1, 'task_completed', {
        result: 'ok',
        cost_usd: 0.5,
        duration_ms: 1200.4,
        turns: 2,
        stop_reason: 'end_turn',
        session_id: 's',
        usage: usage(100, 10),
        model_usage: { 'model-a': usage(100, 10) },
      }),
      // Two models: output weighs 5x input, so model-b's 20 output tokens (100) equal model-a's 100 input.
      ev(2, 'task_started', { instructions: 'second' }),
      ev(2, 'task_completed', {
        result: 'ok',
        cost_usd: 1,
        duration_ms: 10,
        turns: 1,
        stop_reason: 'end_turn',
        session_id: 's',
        usage: usage(100, 20),
        model_usage: { 'model-a': usage(100, 0), 'model-b': usage(0, 20) },
      }),
      // Before the meter counted by model: its tokens under "unknown".
      ev(3, 'task_started', { instructions: 'third' }),
      ev(3, 'task_completed', { result: 'ok', cost_usd: 0.25, duration_ms: 5, turns: 1, stop_reason: 'end_turn', session_id: 's', usage: usage(7, 3) }),
      ev(4, 'task_started', { instructions: 'cancelled' }),
      ev(4, 'task_cancelled', { reason: 'by request' }),
      ev(5, 'task_started', { instructions: 'running' }),
    ];
  };

  it('sums cost and tokens per task, splits a task over its models by price weight, and per model over the tasks', () => {
    const c = costBreakdown('a', 'default', events().reverse());
    expect(c).to.include({ agent: 'a', namespace: 'default', taskCount: 5, totalCost: 1.75, inputTokens: 207, outputTokens: 33 });
    expect(c.tasks.map((t) => [t.index, t.task, t.outcome])).to.deep.equal([
      [0, 1, 'completed'],
      [1, 2, 'completed'],
      [2, 3, 'completed'],
      [3, 4, 'cancelled'],
      [4, 5, 'running'],
    ]);
    const [t1, t2, , t4, t5] = c.tasks;
    expect(t1.instruction).to.equal(`${'x'.repeat(200)}…`);
    expect(t1).to.include({ costUSD: 0.5, durationMs: 1200, turns: 2, inputTokens: 100, outputTokens: 10, eventCount: 3 });
    expect(t2.models.map((m) => [m.model, m.costUSD])).to.deep.equal([
      ['model-a', 0.5],
      ['model-b', 0.5],
    ]);
    expect(t4).to.include({ costUSD: 0, outcome: 'cancelled' });
    expect(t4.models).to.deep.equal([]);
    expect(t5.completedAt).to.equal(undefined);
    expect(c.models.map((m) => [m.model, m.costUSD, m.taskCount, m.inputTokens, m.outputTokens])).to.deep.equal([
      ['model-a', 1, 2, 200, 10],
      ['model-b', 0.5, 1, 0, 20],
      [UNKNOWN_MODEL, 0.25, 1, 7, 3],
    ]);
  });

  it("limit keeps the newest tasks but not the totals; events adds each task's events", () => {
    const c = costBreakdown('a', 'default', events(), { limit: 2, events: true });
    expect(c.tasks.map((t) => t.task)).to.deep.equal([4, 5]);
    expect(c).to.include({ taskCount: 5, totalCost: 1.75 });
    expect(c.tasks[0].events!.map((e) => e.type)).to.deep.equal(['task_started', 'task_cancelled']);
    expect(costBreakdown('a', 'default', events()).tasks[0].events).to.equal(undefined);
  });

  it('reads what an end event says defensively: no negative, non-numeric or absent figures', () => {
    seq = 0;
    const c = costBreakdown('a', 'default', [ev(1, 'error', { message: 'x', reason: 'y', cost_usd: -3, usage: { input_tokens: 'many' } })]);
    expect(c.tasks[0]).to.include({ outcome: 'error', costUSD: 0, inputTokens: 0 });
    expect(costBreakdown('a', 'default', [])).to.include({ taskCount: 0, totalCost: 0 });
  });
});

describe('peer compatibility: refusals that say what instead', () => {
  it('names fields the peer has and agentplane does not, and leaves other causes alone', () => {
    const causes = explainPeerFields(
      validateSchema(agentTaskRequestSchema, { name: 'a', instructions: 'x', podSpec: {}, bogus: 1, model: '' }),
      PEER_AGENT_FIELDS,
    );
    expect(causes.find((c) => c.field === 'podSpec')!.message).to.match(/^is not supported by agentplane: pod settings come from/);
    expect(causes.find((c) => c.field === 'bogus')!.message).to.equal('is not a known field');
    expect(causes.find((c) => c.field === 'model')!.message).to.not.contain('supported');
  });

  it('names the peer routes agentplane does not serve, and only those', () => {
    expect(unsupportedMessage('GET', '/api/v1/offices')).to.match(/^agentplane does not support offices/);
    expect(unsupportedMessage('POST', '/api/v1/schedules/x/trigger')).to.equal(undefined); // served (docs/schedules.md)
    expect(unsupportedMessage('POST', '/api/v1/agents/x/wake')).to.contain('"lifecycle": "Wake"');
    expect(unsupportedMessage('GET', '/api/v1/agents/x/wake')).to.equal(undefined);
    expect(unsupportedMessage('PATCH', '/api/v1/connectors/c')).to.contain('updating a connector');
    expect(unsupportedMessage('GET', '/api/v1/officesx')).to.equal(undefined);
    expect(unsupportedMessage('GET', '/api/v1/nothing')).to.equal(undefined);
  });

  it('refuses authType "oauth" saying why, also through the connector strategy (the aggregated API)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-peer-'));
    const state = new SqliteState(path.join(dir, 'state.db'));
    try {
      const connectors = new Registry<Connector>(state.store<Connector>(CONNECTOR_KIND), connectorStrategy);
      const draft: Connector = {
        apiVersion: '',
        kind: '',
        metadata: { name: 'gh', namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
        spec: { url: 'https://mcp.example.com/mcp', authType: 'oauth' } as unknown as ConnectorSpec,
        status: undefined as unknown as Connector['status'],
      };
      const err = await connectors.create(draft).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ApiError);
      expect((err as ApiError).details.causes).to.have.length(1);
      expect((err as ApiError).details.causes![0].field).to.equal('spec.authType');
      expect((err as ApiError).details.causes![0].message).to.contain('"oauth", which agentplane does not support yet');
    } finally {
      state.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('peer compatibility: compaction', () => {
  const summaryPrompt =
    'CRITICAL: Respond with TEXT ONLY.\n\nYour task is to create a detailed summary of the conversation so far.\n\nAdditional Instructions:\nkeep the file names\n\nREMINDER: Do NOT call any tools.';
  const body = (last: unknown) => ({
    model: 'm',
    tools: [{ name: 'Bash' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Fix the build\n@bash make\n@say fixed' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: {} }] },
      last,
    ],
  });

  it("the scripted model tells the engine's compaction request from a turn, with its instructions, and answers a summary without directives", () => {
    const req = body({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'ok' },
        { type: 'text', text: summaryPrompt },
      ],
    });
    expect(compactionOf(req)).to.deep.equal({ instructions: 'keep the file names' });
    const turn = summaryTurn(req, 'keep the file names');
    expect(turn.kind).to.equal('message');
    const text = turn.kind === 'message' && turn.content[0].type === 'text' ? turn.content[0].text : '';
    expect(text).to.match(
      /^<analysis>[\s\S]*<\/analysis>\n<summary>\n1\. Primary Request and Intent: Fix the build\n2\. Summary instructions followed: keep the file names\n<\/summary>$/,
    );
    expect(text).to.not.contain('@');
    expect(
      compactionOf(
        body({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'create a detailed summary of the conversation so far' }] }),
      ),
      "a tool's output is no request",
    ).to.equal(undefined);
    expect(compactionOf(body({ role: 'user', content: 'Fix it' }))).to.equal(undefined);
    expect(compactionOf({ messages: [{ role: 'user', content: summaryPrompt.replace(/Additional[\s\S]*?\n\n/, '') }] })).to.deep.equal({ instructions: '' });
  });

  it("a compaction waits in the task's input as a follow-up does (the task ends once the engine took it), without a user_message", async () => {
    const input = new TaskInput('the task');
    const reported: string[] = [];
    input.onFollowUp((c) => reported.push(c));
    const it = input[Symbol.asyncIterator]();
    input.seen(((await it.next()).value as SDKUserMessage).uuid);
    expect(input.compact('keep names')).to.equal(true);
    expect(input.pending).to.equal(true);
    const compact = (await it.next()).value as SDKUserMessage;
    expect(compact.message.content).to.equal('/compact keep names');
    input.seen(compact.uuid);
    expect(input.pending).to.equal(false);
    expect(input.compact()).to.equal(true);
    expect(((await it.next()).value as SDKUserMessage).message.content).to.equal('/compact');
    expect(reported).to.deep.equal([]);
    input.close();
    expect(input.compact('late')).to.equal(false);
  });

  it('a worker may report context_compacted; its shape is checked', () => {
    const msg = (payload: unknown) => JSON.stringify({ type: 'event', taskId: 1, event: { type: 'context_compacted', payload } });
    expect(parseWorkerMessage(msg({ trigger: 'manual', pre_tokens: 10, post_tokens: 4 }))).to.have.property('message');
    expect(parseWorkerMessage(msg({ trigger: 'auto', pre_tokens: 10 }))).to.have.property('message');
    expect((parseWorkerMessage(msg({ trigger: 'now', pre_tokens: 10 })) as { error: string }).error).to.contain('trigger');
    expect((parseWorkerMessage(msg({ trigger: 'auto' })) as { error: string }).error).to.contain('pre_tokens');
  });
});

describe('peer compatibility: tokens by model', () => {
  it("the meter counts a task's tokens by the model each response named; a worker cannot claim model_usage", () => {
    const meter = new UsageMeter(new Metrics());
    const ref = { namespace: 'default', name: 'a' };
    const grant = { ref, uid: 'u1' };
    meter.taskStarted(ref, 'u1');
    expect(meter.taskModels(ref, 'u1')).to.equal(undefined);
    meter.record(grant, 'model-a', usage(10, 1));
    meter.record(grant, 'model-b', usage(5, 2));
    meter.record(grant, 'model-a', usage(1, 1));
    const byModel = meter.taskModels(ref, 'u1');
    expect(byModel).to.deep.equal({ 'model-a': usage(11, 2), 'model-b': usage(5, 2) });
    expect(meter.taskModels(ref, 'other-uid')).to.equal(undefined);
    const total = meter.taskEnded(ref, 'u1');
    expect(total).to.deep.equal(usage(16, 4));

    const claimed = {
      type: 'task_completed' as const,
      payload: { result: '', cost_usd: 0, duration_ms: 0, turns: 0, stop_reason: 'end_turn', session_id: '', model_usage: { lie: usage(1e9, 0) } },
    };
    expect(meteredEnd(claimed, { usage: total, byModel }).payload.model_usage).to.deep.equal(byModel);
    expect(meteredEnd(claimed, { usage: undefined, byModel: undefined }).payload).to.not.have.property('model_usage');
    expect(meteredEnd(claimed, undefined).payload).to.not.have.property('model_usage');
  });
});
