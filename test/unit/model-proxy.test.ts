// The model proxy against real upstreams: the scripted model server, and plain node:http
// listeners where a test needs exact control of timing or headers. Nothing is mocked.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { ModelRetryPayload } from '../../pkg/api/event.js';
import { CredentialRegistry, type ModelGrant, ModelProxy, type RetryPolicy, UsageMeter } from '../../pkg/modelproxy/index.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { type ScriptedModel, startScriptedModel } from '../../pkg/scriptedmodel/index.js';

const REAL_KEY = 'sk-ant-real-9c2e4a61b7d03f58';
const PREFIX = '/internal/v1/model';
const ref = { namespace: 'default', name: 'alpha' };
const TOOLS = [{ name: 'Bash', description: 'run', input_schema: { type: 'object', properties: {} } }];
const body = (prompt: string, stream = false) =>
  JSON.stringify({ model: 'claude-test', max_tokens: 100, stream, tools: TOOLS, messages: [{ role: 'user', content: prompt }] });

interface Rig {
  url: string;
  proxy: ModelProxy;
  credentials: CredentialRegistry;
  meter: UsageMeter;
  metrics: Metrics;
  credential: string;
  retries: ModelRetryPayload[];
  failures: { grant: ModelGrant; message: string; reason: string }[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const closeServer = (s: Server): Promise<void> =>
  new Promise((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

async function rig(upstream: string, opts: { apiKey?: string; retry?: Partial<RetryPolicy> } = {}): Promise<Rig> {
  const credentials = new CredentialRegistry();
  const metrics = new Metrics();
  const meter = new UsageMeter(metrics);
  const retries: ModelRetryPayload[] = [];
  const failures: Rig['failures'] = [];
  const proxy = new ModelProxy({
    upstream,
    apiKey: opts.apiKey ?? REAL_KEY,
    credentials,
    meter,
    logger: createLogger({ level: 'silent' }),
    retry: { baseDelayMs: 20, ...opts.retry },
    events: {
      retry: (_g, p) => void retries.push(p),
      failed: (grant, e) => void failures.push({ grant, ...e }),
    },
  });
  const server = createServer((req, res) => void proxy.handle(req, res, (req.url ?? '').slice(PREFIX.length)));
  const url = `${await listen(server)}${PREFIX}`;
  const credential = credentials.issue(ref, 'uid-1');
  return {
    url,
    proxy,
    credentials,
    meter,
    metrics,
    credential,
    retries,
    failures,
    close: async () => {
      proxy.close();
      await closeServer(server);
    },
  };
}

const post = (r: Rig, path: string, payload: string, headers: Record<string, string> = {}) =>
  fetch(`${r.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': r.credential, ...headers },
    body: payload,
  });

describe('model proxy', function () {
  this.timeout(20_000);
  let model: ScriptedModel;
  let r: Rig;
  beforeEach(async () => {
    model = await startScriptedModel({ apiKey: REAL_KEY });
    r = await rig(model.url);
  });
  afterEach(async () => {
    await r.close();
    await model.close();
  });

  describe('credentials', () => {
    it('refuses a missing, wrong or revoked credential with 401 and never calls the model', async () => {
      const none = await fetch(`${r.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('@say hi') });
      expect(none.status).to.equal(401);
      expect(((await none.json()) as { error: { type: string } }).error.type).to.equal('authentication_error');
      expect((await post(r, '/v1/messages', body('@say hi'), { 'x-api-key': `${r.credential.slice(0, -1)}x` })).status).to.equal(401);
      expect((await post(r, '/v1/messages', body('@say hi'), { 'x-api-key': REAL_KEY })).status).to.equal(401);
      r.credentials.revoke(ref);
      expect((await post(r, '/v1/messages', body('@say hi'))).status).to.equal(401);
      expect(model.requests).to.have.length(0);
    });

    it('a new credential for the agent replaces the old one', async () => {
      const old = r.credential;
      const fresh = r.credentials.issue(ref, 'uid-2');
      expect((await post(r, '/v1/messages', body('@say hi'), { 'x-api-key': old })).status).to.equal(401);
      expect((await post(r, '/v1/messages', body('@say hi'), { 'x-api-key': fresh })).status).to.equal(200);
    });

    it('swaps the credential (x-api-key or Bearer) for the model key', async () => {
      const a = await post(r, '/v1/messages', body('@say one'));
      expect(a.status).to.equal(200);
      const b = await post(r, '/v1/messages', body('@say two'), { 'x-api-key': '', authorization: `Bearer ${r.credential}` });
      expect(b.status).to.equal(200);
      expect(model.requests.map((q) => q.apiKey)).to.deep.equal([REAL_KEY, REAL_KEY]);
      expect(JSON.stringify(model.requests)).not.to.contain(r.credential);
    });
  });

  describe('forwarding', () => {
    it('returns a JSON message with its status, headers and usage', async () => {
      const res = await post(r, '/v1/messages', body('@say hello there'));
      expect(res.status).to.equal(200);
      expect(res.headers.get('request-id')).to.match(/^req_/);
      const msg = (await res.json()) as { content: { text: string }[]; usage: { input_tokens: number } };
      expect(msg.content[0].text).to.equal('hello there');
      expect(msg.usage.input_tokens).to.be.greaterThan(0);
    });

    it('forwards count_tokens', async () => {
      const res = await post(r, '/v1/messages/count_tokens', body('count me please'));
      expect(res.status).to.equal(200);
      expect(((await res.json()) as { input_tokens: number }).input_tokens).to.be.greaterThan(0);
      expect(model.requests[0].path).to.equal('/v1/messages/count_tokens');
    });

    it('streams server-sent events byte for byte', async () => {
      const res = await post(r, '/v1/messages?beta=true', body('@say streamed words', true));
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.contain('text/event-stream');
      const text = await res.text();
      expect(text).to.match(/^event: message_start\n/);
      expect(text).to.contain('"text":"streamed words"');
      expect(text.trimEnd()).to.match(/event: message_stop\ndata: \{"type":"message_stop"\}$/);
    });

    it('passes a model 4xx error body and status through, without retrying', async () => {
      const res = await post(r, '/v1/messages', body('@fail 400 invalid_request_error prompt is too long'));
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } });
      expect(model.requests).to.have.length(1);
      expect(r.retries).to.deep.equal([]);
    });

    it('answers 404 outside /v1/ without calling the model', async () => {
      expect((await post(r, '/v2/other', body('x'))).status).to.equal(404);
      expect(model.requests).to.have.length(0);
    });
  });

  describe('token usage', () => {
    it('counts a stream’s and a JSON response’s usage per task and in the metric', async () => {
      r.meter.taskStarted(ref, 'uid-1');
      await (await post(r, '/v1/messages', body('@say first answer', true))).text();
      await (await post(r, '/v1/messages', body('@say second answer'))).text();
      const usage = r.meter.taskEnded(ref, 'uid-1');
      expect(usage, 'task usage').to.not.equal(undefined);
      expect(usage!.input_tokens).to.be.greaterThan(0);
      // Each answer's output is ceil(chars/4): "first answer" 3, "second answer" 4.
      expect(usage!.output_tokens).to.equal(7);
      expect(r.meter.taskEnded(ref, 'uid-1'), 'taken once').to.equal(undefined);
      const metric = await r.metrics.registry.getSingleMetricAsString('agentplane_model_tokens_total');
      expect(metric).to.contain('agentplane_model_tokens_total{namespace="default",agent="alpha",model="claude-test",kind="output"} 7');
      expect(metric).to.match(/kind="input"\} [1-9]/);
    });

    it("removes a deleted agent's series from the metric, and only its own", async () => {
      const usage = { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
      const beta = { namespace: 'default', name: 'beta' };
      r.meter.record({ ref, uid: 'uid-1' }, 'claude-a', usage);
      r.meter.record({ ref, uid: 'uid-1' }, 'claude-b', usage);
      r.meter.record({ ref: beta, uid: 'uid-2' }, 'claude-a', usage);
      const series = async () =>
        (await r.metrics.registry.getSingleMetricAsString('agentplane_model_tokens_total'))
          .split('\n')
          .filter((l) => l.startsWith('agentplane_model_tokens_total{'));
      expect(await series()).to.have.length(6);
      await r.meter.dropSeries(ref);
      expect(await series()).to.deep.equal([
        'agentplane_model_tokens_total{namespace="default",agent="beta",model="claude-a",kind="input"} 3',
        'agentplane_model_tokens_total{namespace="default",agent="beta",model="claude-a",kind="output"} 2',
      ]);
      await r.meter.dropSeries(ref); // idempotent
      expect(await series()).to.have.length(2);
    });
  });

  describe('failures', () => {
    it('retries 529 with backoff, reporting each retry, then returns the success', async () => {
      const res = await post(r, '/v1/messages', body('@fail 529 overloaded_error busy x2\n@say recovered'));
      expect(res.status).to.equal(200);
      expect(((await res.json()) as { content: { text: string }[] }).content[0].text).to.equal('recovered');
      expect(model.requests).to.have.length(3);
      expect(r.retries.map((x) => [x.attempt, x.of, x.status, x.delayMs])).to.deep.equal([
        [1, 8, 529, 20],
        [2, 8, 529, 40],
      ]);
      expect(r.retries[1].message).to.match(/^model overloaded, retry 2 of 8 in 40 ms \(busy\)$/);
      expect(r.failures).to.deep.equal([]);
    });

    it('gives up after the retries allowed, passing the last error on and reporting the failure', async () => {
      await r.close();
      r = await rig(model.url, { retry: { maxRetries: 2 } });
      const res = await post(r, '/v1/messages', body('@fail 500 api_error upstream broke'));
      expect(res.status).to.equal(500);
      expect(((await res.json()) as { error: { message: string } }).error.message).to.equal('upstream broke');
      expect(model.requests).to.have.length(3);
      expect(r.failures.map((f) => f.reason)).to.deep.equal(['ModelUnavailable']);
      expect(r.failures[0].message).to.contain('upstream broke').and.to.contain('2 retries');
    });

    it('does not retry past the task’s deadline', async () => {
      await r.close();
      r = await rig(model.url, { retry: { baseDelayMs: 400, taskDeadlineMs: 1000 } });
      r.meter.taskStarted(ref, 'uid-1');
      const res = await post(r, '/v1/messages', body('@fail 503 overloaded_error down'));
      expect(res.status).to.equal(503);
      // 400 ms fits the deadline; 800 more would not.
      expect(r.retries.map((x) => x.delayMs)).to.deep.equal([400]);
      expect(r.failures.map((f) => f.reason)).to.deep.equal(['ModelUnavailable']);
    });

    it('reports a rejected model key (401) as ModelCredentialRejected and passes the 401 on', async () => {
      await r.close();
      r = await rig(model.url, { apiKey: 'sk-ant-wrong' });
      const res = await post(r, '/v1/messages', body('@say hi'));
      expect(res.status).to.equal(401);
      await res.text();
      expect(model.requests).to.have.length(1);
      expect(r.retries).to.deep.equal([]);
      expect(r.failures.map((f) => [f.reason, f.grant.ref.name, f.grant.uid])).to.deep.equal([['ModelCredentialRejected', 'alpha', 'uid-1']]);
      expect(r.failures[0].message).to.contain('the model credential was rejected');
    });

    it('retries a refused connection', async () => {
      const dead = createServer();
      const deadUrl = await listen(dead);
      await closeServer(dead);
      await r.close();
      r = await rig(deadUrl, { retry: { maxRetries: 2 } });
      const res = await post(r, '/v1/messages', body('@say hi'));
      expect(res.status).to.equal(504);
      expect(r.retries.map((x) => x.status)).to.deep.equal([0, 0]);
      expect(r.failures[0].message).to.match(/could not be reached after 2 retries: .*ECONNREFUSED/);
    });
  });
});

describe('model proxy against a hand-written upstream', function () {
  this.timeout(20_000);
  let upstream: Server;
  let seen: IncomingHttpHeaders[];
  let handler: (res: import('node:http').ServerResponse, n: number) => void;
  let r: Rig;
  before(async () => {
    seen = [];
    upstream = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => handler(res, seen.length));
    });
    r = await rig(await listen(upstream));
  });
  after(async () => {
    await r.close();
    await closeServer(upstream);
  });
  beforeEach(() => (seen.length = 0));

  it('passes the first event of a stream on before the model has finished', async () => {
    let finish!: () => void;
    const finished = new Promise<void>((res) => (finish = res));
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":5,"output_tokens":1}}}\n\n');
      void finished.then(() => {
        res.write('event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":9}}\n\n');
        res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n');
      });
    };
    r.meter.taskStarted(ref, 'uid-1');
    const res = await post(r, '/v1/messages', '{}');
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).to.contain('message_start'); // the upstream has not finished: it waits for us
    expect(first).not.to.contain('message_delta');
    finish();
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).to.contain('message_stop');
    expect(r.meter.taskEnded(ref, 'uid-1')).to.deep.equal({ input_tokens: 5, output_tokens: 9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  });

  it('forwards the headers the SDK relies on, never hop-by-hop ones or the agent credential', async () => {
    handler = (res) => res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_1', 'x-custom': 'kept' }).end('{}');
    const res = await post(r, '/v1/messages?beta=true', '{}', {
      'anthropic-beta': 'tools-2024',
      'x-stainless-lang': 'js',
      'user-agent': 'claude-cli/2',
      'proxy-authorization': 'Basic c2VjcmV0',
      accept: 'application/json',
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('request-id')).to.equal('req_1');
    expect(res.headers.get('x-custom')).to.equal('kept');
    const h = seen[0];
    expect(h['anthropic-version']).to.equal('2023-06-01');
    expect(h['anthropic-beta']).to.equal('tools-2024');
    expect(h['x-stainless-lang']).to.equal('js');
    expect(h['user-agent']).to.equal('claude-cli/2');
    expect(h.accept).to.equal('application/json');
    expect(h['x-api-key']).to.equal(REAL_KEY);
    expect(h).not.to.have.property('proxy-authorization');
    expect(h).not.to.have.property('authorization');
    expect(JSON.stringify(h)).not.to.contain(r.credential);
  });

  it('honours retry-after on a 429', async () => {
    handler = (res, n) =>
      n === 1
        ? res
            .writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' })
            .end('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}')
        : res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    r.retries.length = 0;
    const t0 = Date.now();
    const res = await post(r, '/v1/messages', '{}');
    expect(res.status).to.equal(200);
    expect(Date.now() - t0).to.be.at.least(950);
    expect(r.retries.map((x) => [x.status, x.delayMs])).to.deep.equal([[429, 1000]]);
    expect(r.retries[0].message).to.match(/^model rate limit reached, retry 1 of 8 in 1 s \(slow down\)$/);
  });
});
