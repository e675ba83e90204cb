// OpenTelemetry traces, embedded home (docs/tracing.md): a real server process with OTEL_* set
// exports to a real OpenTelemetry Collector (test/support/otel-collector.ts) while a task runs
// a Bash tool call and an MCP tool call through the real engine; the test reads the spans the
// collector decoded and checks one connected trace per task, in order, with the task's
// attributes and no secret. With OTEL_* unset nothing is traced.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startScriptedModel, type ScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { eventually, TEST_API_KEY } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { collectorBinary, type ReceivedSpan, startCollector, type TestCollector } from '../support/otel-collector.js';
import { freePort, type ServerProcess, startServerProcess } from '../support/server-process.js';

const MCP_TOKEN = 'mcp-secret-token-1c9f0d';
const INSTRUCTIONS = '@bash echo traced-by-otel\n@tool mcp__echo__echo {"text":"hi"}\n@say done';

describe('tracing (integration)', function () {
  this.timeout(20 * 60_000);
  let collector: TestCollector;
  let model: ScriptedModel;
  let mcp: TestMcpServer;

  before(async () => {
    collector = await startCollector(collectorBinary());
    model = await startScriptedModel({ apiKey: TEST_API_KEY });
    mcp = createTestMcpServer({ token: MCP_TOKEN });
    await mcp.start();
  });
  after(async () => {
    await mcp?.close();
    await model?.close();
    await collector?.close();
  });

  /** A server process with `env`, a connector to the MCP server, and the task run to its end. */
  async function runTracedTask(env: Record<string, string>, agent: string): Promise<{ server: ServerProcess; annotations: Record<string, string> }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'ap-trace-'));
    // No sandbox: bubblewrap gives the worker a network of its own, which reaches no collector (docs/tracing.md).
    const server = await startServerProcess({
      port: await freePort(),
      dataDir,
      model: { url: model.url, apiKey: TEST_API_KEY },
      args: ['--sandbox', 'none'],
      env: { AGENTPLANE_LOG_LEVEL: 'info', ...env },
    });
    after(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
      rmSync(dataDir, { recursive: true, force: true });
    });
    const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
      const r = await fetch(`${server.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
      return { status: r.status, body: await r.json() };
    };
    expect((await api('POST', '/api/v1/secrets', { name: 'echo-token', data: { token: MCP_TOKEN } })).status).to.equal(201);
    const c = await api('POST', '/api/v1/connectors', { name: 'echo', url: mcp.url, authSecretName: 'echo-token', authSecretKey: 'token' });
    expect(c.status).to.equal(201);
    const created = await api('POST', '/api/v1/agents', { name: agent, instructions: INSTRUCTIONS, connectors: ['echo'] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    let last: unknown;
    const done = await eventually(
      async () => {
        const a = (last = (await api('GET', `/api/v1/agents/${agent}`)).body);
        return a.taskStatus === 'Complete' || a.taskStatus === 'Failed' ? a : undefined;
      },
      90_000,
      'the task to end',
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(last)}\n${server.output.slice(-15).join('\n')}`);
    });
    expect(done.taskStatus, JSON.stringify(done)).to.equal('Complete');
    const raw = (await api('GET', `/apis/agentplane.io/v1alpha1/namespaces/default/agents/${agent}`)).body;
    return { server, annotations: raw.metadata?.annotations ?? {} };
  }

  for (const protocol of ['http/protobuf', 'http/json']) {
    describe(`OTLP ${protocol}`, () => {
      const agent = `traced-${protocol.replace('/', '-')}`;
      let server: ServerProcess;
      let traceId = '';
      let spans: ReceivedSpan[] = [];
      const one = (name: string): ReceivedSpan => {
        const found = spans.filter((s) => s.name === name);
        expect(found, `spans named ${name}: ${spans.map((s) => s.name).join(', ')}`).to.have.length(1);
        return found[0];
      };

      before(async () => {
        const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_TRACES_SAMPLER: 'parentbased_always_on' };
        const run = await runTracedTask(env, agent);
        server = run.server;
        const traceparent = run.annotations['agentplane.io/traceparent'];
        expect(traceparent, 'the agent carries its task trace').to.match(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
        traceId = traceparent.split('-')[1]!;
        // Every span of the task: the worker's come with its next export (about a second).
        spans = await eventually(
          async () => {
            const mine = collector.spans.filter((s) => s.traceId === traceId);
            const names = new Set(mine.map((s) => s.name));
            const complete = ['agentplane.dispatch', 'agentplane.task', 'execute_tool Bash', 'execute_tool mcp__echo__echo'].every((n) => names.has(n));
            return complete && mine.some((s) => s.name.startsWith('chat ')) ? mine : undefined;
          },
          60_000,
          'the task spans at the collector',
        );
        await new Promise((r) => setTimeout(r, 1500)); // stragglers of the same trace
        spans = collector.spans.filter((s) => s.traceId === traceId);
      });

      it('is one trace with one root, the API request, and every other span parented inside it', () => {
        const roots = spans.filter((s) => !s.parentSpanId);
        expect(roots.map((s) => s.name)).to.deep.equal(['POST /api/v1/agents']);
        const ids = new Set(spans.map((s) => s.spanId));
        for (const s of spans) if (s.parentSpanId) expect(ids.has(s.parentSpanId), `${s.name}'s parent is in the trace`).to.equal(true);
        expect(roots[0].attributes).to.include({ 'agentplane.namespace': 'default', 'agentplane.agent': agent, 'http.response.status_code': 201 });
      });

      it('chains request -> dispatch -> task in the worker -> model requests and tool calls, in order', () => {
        const root = one('POST /api/v1/agents');
        const dispatch = one('agentplane.dispatch');
        const task = one('agentplane.task');
        const bash = one('execute_tool Bash');
        const echo = one('execute_tool mcp__echo__echo');
        const chats = spans.filter((s) => s.name.startsWith('chat '));
        expect(dispatch.parentSpanId).to.equal(root.spanId);
        expect(task.parentSpanId).to.equal(dispatch.spanId);
        expect(task.service).to.equal('agentplane-worker');
        expect(root.service).to.equal('agentplane');
        for (const s of [bash, echo, ...chats]) expect(s.parentSpanId, s.name).to.equal(task.spanId);
        expect(chats.length).to.be.at.least(3); // the Bash call, the MCP call, the last words
        const admission = spans.filter((s) => s.name === 'agentplane.admission');
        expect(admission.length).to.be.at.least(1);
        for (const s of admission) expect(s.parentSpanId).to.equal(root.spanId);
        const start = one('agentplane.worker.start');
        expect(start.parentSpanId).to.equal(root.spanId);
        const firstChat = chats.reduce((a, b) => (a.startNs < b.startNs ? a : b));
        const order = [root, dispatch, task, firstChat, bash, echo].map((s) => s.startNs);
        for (let i = 1; i < order.length; i++) expect(order[i] >= order[i - 1], `span ${i} starts after span ${i - 1}`).to.equal(true);
      });

      it('names the namespace, agent, task, model and tools', () => {
        const task = one('agentplane.task');
        expect(task.attributes).to.include({
          'agentplane.namespace': 'default',
          'agentplane.agent': agent,
          'agentplane.task': 1,
          'gen_ai.operation.name': 'invoke_agent',
        });
        expect(task.attributes['gen_ai.request.model']).to.be.a('string').and.not.equal('');
        expect(one('agentplane.dispatch').attributes).to.include({ 'agentplane.agent': agent, 'agentplane.task': 1 });
        expect(one('execute_tool Bash').attributes).to.include({ 'gen_ai.tool.name': 'Bash', 'gen_ai.operation.name': 'execute_tool' });
        expect(one('execute_tool mcp__echo__echo').attributes).to.include({ 'gen_ai.tool.name': 'mcp__echo__echo', 'agentplane.mcp.server': 'echo' });
        for (const chat of spans.filter((s) => s.name.startsWith('chat '))) {
          expect(chat.attributes).to.include({ 'agentplane.agent': agent, 'gen_ai.provider.name': 'anthropic', 'gen_ai.operation.name': 'chat' });
          expect(chat.attributes['gen_ai.request.model']).to.be.a('string');
        }
      });

      it('records no secret and not the instructions in any attribute', () => {
        const secrets = [MCP_TOKEN, TEST_API_KEY, 'traced-by-otel', INSTRUCTIONS, 'Bearer', 'ap-'];
        for (const s of spans) {
          for (const [k, v] of Object.entries(s.attributes)) {
            for (const secret of secrets) expect(String(v), `${s.name} ${k}`).to.not.include(secret);
            expect(k.toLowerCase(), `${s.name} ${k}`).to.not.match(/authorization|api.key|token|instructions/);
          }
        }
      });

      it('writes the trace id on the log lines of the traced work', () => {
        const lines = server.output.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { trace_id?: string; msg?: string });
        const traced = lines.filter((l) => l.trace_id === traceId).map((l) => l.msg);
        // The controller's, and the worker's (its lines come through the server's output).
        expect(traced, server.output.slice(-30).join('\n')).to.include.members(['task dispatched', 'task started', 'task ended']);
      });
    });
  }

  describe('with OTEL_* unset', () => {
    it('traces nothing: no traceparent on the agent, no trace id in the logs, nothing at the collector', async () => {
      const before = collector.spans.length;
      const env = Object.fromEntries(
        Object.keys(process.env)
          .filter((k) => k.startsWith('OTEL_'))
          .map((k) => [k, '']),
      );
      const { server, annotations } = await runTracedTask(env, 'untraced');
      expect(annotations).to.not.have.property('agentplane.io/traceparent');
      expect(server.output.some((l) => l.includes('"trace_id"'))).to.equal(false);
      await new Promise((r) => setTimeout(r, 2000));
      expect(collector.spans.slice(before).filter((s) => s.attributes['agentplane.agent'] === 'untraced')).to.deep.equal([]);
    });
  });
});
