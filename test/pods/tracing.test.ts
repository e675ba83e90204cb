// OpenTelemetry traces, cluster home (docs/tracing.md): agentplane registered on the local
// cluster with OTEL_* pointing at a real OpenTelemetry Collector listening on the node's IP
// (where pods reach the host), the agent's worker a pod that gets the same settings in its
// ConfigMap. The task's spans, the server's and the worker pod's, make one connected trace, with
// a Bash call and an MCP call (a real MCP server on the host, reached through the server's
// connector gateway as pods reach it).

import { expect } from 'chai';
import { eventually } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { collectorBinary, type ReceivedSpan, startCollector, type TestCollector } from '../support/otel-collector.js';
import { type Agentplane, type Cluster, clusterUp, describeFailure, registerAgentplane } from '../support/pods.js';

const NS = 'pods-tracing';
const MCP_TOKEN = 'pods-mcp-token-5b2e8a';

describe('e2e: a task traced across the server and its worker pod', function () {
  this.timeout(300_000);
  let c: Cluster | undefined;
  let ap: Agentplane;
  let collector: TestCollector | undefined;
  let mcp: TestMcpServer | undefined;

  before(async function () {
    this.timeout(45 * 60_000);
    const bin = collectorBinary();
    c = await clusterUp();
    collector = await startCollector(bin, c.gateway);
    mcp = createTestMcpServer({ token: MCP_TOKEN });
    await mcp.start();
    ap = await registerAgentplane(c, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      // The MCP server listens on the host's loopback, where the server's gateway reaches it.
      AGENTPLANE_ALLOW_PRIVATE_CONNECTOR_URLS: 'true',
    });
    await c.kubectl(['create', 'namespace', NS]);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && c) console.log(await describeFailure(c, NS), '\ncollector:', collector?.output.slice(-20).join('\n'));
  });
  after(async function () {
    this.timeout(120_000);
    await c?.down();
    await collector?.close();
    await mcp?.close();
  });

  it("gives one trace: the request as root, the dispatch under it, the worker pod's task under the dispatch, its model requests and tool calls under the task", async () => {
    const secret = await ap.rest('POST', `/api/v1/secrets?namespace=${NS}`, { name: 'echo-token', data: { token: MCP_TOKEN } });
    expect(secret.status, JSON.stringify(secret.body)).to.equal(201);
    const connector = await ap.rest('POST', `/api/v1/connectors?namespace=${NS}`, {
      name: 'echo',
      url: mcp!.url,
      authSecretName: 'echo-token',
      authSecretKey: 'token',
    });
    expect(connector.status, JSON.stringify(connector.body)).to.equal(201);
    const instructions = '@bash echo in-a-pod\n@tool mcp__echo__echo {"text":"from a pod"}\n@say done';
    const created = await ap.rest('POST', '/api/v1/agents', { name: 'traced', namespace: NS, instructions, connectors: ['echo'] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    await eventually(
      async () => {
        const a = (await ap.rest('GET', `/api/v1/agents/traced?namespace=${NS}`)).body;
        return a.taskStatus === 'Complete' || a.taskStatus === 'Failed' ? a : undefined;
      },
      240_000,
      'the task to end',
    );
    const agent = await c!.json<{ metadata: { annotations?: Record<string, string> } }>(['get', 'agent', 'traced', '-n', NS]);
    const traceparent = agent.metadata.annotations?.['agentplane.io/traceparent'];
    expect(traceparent).to.match(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const traceId = traceparent!.split('-')[1];
    const spans = await eventually(
      async () => {
        const mine = collector!.spans.filter((s) => s.traceId === traceId);
        const names = new Set(mine.map((s) => s.name));
        const all = ['agentplane.task', 'execute_tool Bash', 'execute_tool mcp__echo__echo'].every((n) => names.has(n));
        return all && mine.some((s) => s.name.startsWith('chat ')) ? mine : undefined;
      },
      60_000,
      "the worker pod's spans at the collector",
    );
    const one = (name: string): ReceivedSpan => {
      const found = spans.filter((s) => s.name === name);
      expect(found, `spans named ${name}: ${spans.map((s) => s.name).join(', ')}`).to.have.length(1);
      return found[0];
    };
    const root = one('POST /api/v1/agents');
    expect(spans.filter((s) => !s.parentSpanId)).to.deep.equal([root]);
    const dispatch = one('agentplane.dispatch');
    const task = one('agentplane.task');
    expect(one('agentplane.worker.start').parentSpanId).to.equal(root.spanId);
    expect(dispatch.parentSpanId).to.equal(root.spanId);
    expect(task.parentSpanId).to.equal(dispatch.spanId);
    expect(task.service).to.equal('agentplane-worker'); // exported by the worker pod itself
    expect(task.attributes).to.include({ 'agentplane.namespace': NS, 'agentplane.agent': 'traced', 'agentplane.task': 1 });
    expect(one('execute_tool Bash').parentSpanId).to.equal(task.spanId);
    const echo = one('execute_tool mcp__echo__echo');
    expect(echo.parentSpanId).to.equal(task.spanId);
    expect(echo.attributes).to.include({ 'gen_ai.tool.name': 'mcp__echo__echo', 'agentplane.mcp.server': 'echo' });
    expect(mcp!.calls).to.deep.equal(['from a pod']);
    for (const chat of spans.filter((s) => s.name.startsWith('chat '))) expect(chat.parentSpanId).to.equal(task.spanId);
    expect(one('agentplane.worker.start').attributes).to.include({ 'agentplane.runtime': 'kubernetes' });
  });
});
