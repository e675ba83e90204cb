// The model-proxy sidecar's own parts, on loopback with the scripted model as the model API and
// a stand-in for the server's report endpoint: the credentials it accepts (files it re-reads),
// the key it sends (a rotated file is used without a restart), reports (a request's start, not
// waited for; usage before the response's end reaches the engine; the failure of a rejected
// key), and the server's reading of reports.

import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Counter, Histogram } from 'prom-client';

import { CredentialRegistry, ModelReports, startSidecar, UsageMeter } from '../../pkg/modelproxy/index.js';
import { parseReport } from '../../pkg/modelproxy/reports.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { type ScriptedModel, startScriptedModel } from '../../pkg/scriptedmodel/index.js';

const REPORT_DELAY_MS = 300;

describe('model-proxy sidecar', () => {
  let dir: string;
  let model: ScriptedModel;
  let reportServer: http.Server;
  const reports: { credential: string | undefined; body: Record<string, unknown>; at: number }[] = [];
  // What the stand-in says of budgets: whether they apply (every answer), and its answer to an admit.
  const budget: { flag: 'on' | 'off'; answer: Record<string, unknown>; holdMs: number } = { flag: 'off', answer: { allow: true }, holdMs: 0 };
  let sidecar: Awaited<ReturnType<typeof startSidecar>>;

  const ask = async (credential: string, prompt: string, stream = true) => {
    const res = await fetch(`${sidecar.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': credential, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 100, stream, messages: [{ role: 'user', content: prompt }] }),
    });
    return { status: res.status, text: await res.text(), endedAt: Date.now() };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sidecar-'));
    mkdirSync(join(dir, 'key'));
    mkdirSync(join(dir, 'agents', 'ada'), { recursive: true });
    writeFileSync(join(dir, 'key', 'ANTHROPIC_API_KEY'), 'sk-test-one\n');
    writeFileSync(join(dir, 'agents', 'ada', 'model-credential'), 'apmc_ada');
    // Mounted into the sidecar only: its reports carry it, never the engine's model credential.
    writeFileSync(join(dir, 'agents', 'ada', 'report-credential'), 'apmr_ada\n');
    model = await startScriptedModel({ apiKey: 'sk-test-one' });
    // The server's report endpoint, slow on purpose: the response must wait for it.
    reportServer = http.createServer((req, res) => {
      let b = '';
      req.on('data', (c: Buffer) => (b += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(b) as Record<string, unknown>;
        reports.push({ credential: req.headers['x-api-key'] as string | undefined, body, at: Date.now() });
        if (body.type === 'admit') {
          const answer = JSON.stringify(budget.answer);
          return void setTimeout(
            () => res.writeHead(200, { 'content-type': 'application/json', 'x-agentplane-budget': budget.flag }).end(answer),
            budget.holdMs,
          );
        }
        setTimeout(() => res.writeHead(204, { 'x-agentplane-budget': budget.flag }).end(), REPORT_DELAY_MS);
      });
    });
    await new Promise<void>((r) => reportServer.listen(0, '127.0.0.1', r));
    sidecar = await startSidecar({
      namespace: 'team-a',
      serverUrl: `http://127.0.0.1:${(reportServer.address() as AddressInfo).port}`,
      port: 0,
      keyDir: join(dir, 'key'),
      credentialsDir: join(dir, 'agents'),
      upstream: model.url,
      logger: createLogger({ level: 'silent' }),
    });
  });

  after(async () => {
    await sidecar?.close();
    reportServer?.close();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a credential that is not one of its pod’s agents’', async () => {
    const r = await ask('apmc_someone_else', '@say hi');
    expect(r.status).to.equal(401);
    expect(r.text).to.contain('authentication_error');
    expect(model.requests).to.have.length(0);
  });

  it('forwards an agent’s stream with the key, and reports its usage before the stream ends', async () => {
    reports.length = 0;
    const r = await ask('apmc_ada', '@say hello from the pod');
    expect(r.status).to.equal(200);
    expect(r.text).to.contain('text_delta').and.to.contain('message_stop');
    expect(model.requests.at(-1)!.apiKey).to.equal('sk-test-one');
    // An agent not heard of yet: the sidecar asks whether its budgets allow the request (the
    // answer says none apply: not asked again). Then the request's start (not waited for: the
    // model answered before that report's answer), then its usage.
    expect(reports.map((x) => [x.credential, x.body.type])).to.deep.equal([
      ['apmr_ada', 'admit'],
      ['apmr_ada', 'requested'],
      ['apmr_ada', 'usage'],
    ]);
    expect(model.requests.at(-1)!.receivedAt - reports[1].at).to.be.below(REPORT_DELAY_MS);
    const usage = reports[2];
    expect((usage.body.usage as { output_tokens: number }).output_tokens).to.be.greaterThan(0);
    // The stream's end waited for the usage report's answer.
    expect(r.endedAt - usage.at).to.be.at.least(REPORT_DELAY_MS - 20);
  });

  it('counts a non-streamed response too', async () => {
    reports.length = 0;
    const r = await ask('apmc_ada', '@say plain json', false);
    expect(r.status).to.equal(200);
    expect(reports.map((x) => x.body.type)).to.deep.equal(['requested', 'usage']);
  });

  it('sends a rotated key without a restart, and reports the rejection of a bad one', async () => {
    reports.length = 0;
    writeFileSync(join(dir, 'key', 'ANTHROPIC_API_KEY'), 'sk-test-revoked\n');
    await new Promise((r) => setTimeout(r, 1100));
    const r = await ask('apmc_ada', '@say never');
    expect(r.status).to.equal(401);
    expect(model.requests.at(-1)!.apiKey).to.equal('sk-test-revoked');
    await new Promise((res) => setTimeout(res, 100));
    expect(reports.map((x) => x.body.type)).to.deep.equal(['requested', 'failed']);
    expect(reports[1].body.error).to.deep.include({ reason: 'ModelCredentialRejected' });
    expect((reports[1].body.error as { message: string }).message).to.contain('mirrored into namespace team-a');
    writeFileSync(join(dir, 'key', 'ANTHROPIC_API_KEY'), 'sk-test-one\n');
  });

  it('asks before each request of an agent with a budget: a held answer holds the request, a refusal never reaches the model', async () => {
    budget.flag = 'on';
    await new Promise((r) => setTimeout(r, 1100)); // the restored key file is read again
    expect((await ask('apmc_ada', '@say learns the flag')).status).to.equal(200);
    reports.length = 0;
    budget.holdMs = 800;
    const seen = model.requests.length;
    const held = await ask('apmc_ada', '@say after the hold');
    expect(held.status).to.equal(200);
    expect(reports.map((x) => x.body.type).slice(0, 2)).to.deep.equal(['admit', 'requested']);
    expect(model.requests[seen].receivedAt - reports[0].at, 'the model saw it only after the answer').to.be.at.least(780);
    budget.holdMs = 0;
    budget.answer = { allow: false, message: "the agent's budget is spent (10 of 5 tokens): the task is stopped" };
    const refused = await ask('apmc_ada', '@say never');
    expect(refused.status).to.equal(400);
    expect(refused.text).to.contain('the task is stopped');
    expect(model.requests.length, 'the refused request never reached the model').to.equal(seen + 1);
    budget.answer = { allow: true };
    budget.flag = 'off';
    await ask('apmc_ada', '@say learns it is off again');
    reports.length = 0;
    expect((await ask('apmc_ada', '@say no admit')).status).to.equal(200);
    expect(reports.map((x) => x.body.type)).to.deep.equal(['requested', 'usage']);
  });

  it('stops accepting a credential once its file is gone (the runtime took it back)', async () => {
    unlinkSync(join(dir, 'agents', 'ada', 'model-credential'));
    await new Promise((r) => setTimeout(r, 1100));
    expect((await ask('apmc_ada', '@say hi')).status).to.equal(401);
  });
});

describe('model reports (the server’s side)', () => {
  const ref = { namespace: 'team-a', name: 'ada' };
  const credentials = new CredentialRegistry();
  const counted: string[] = [];
  // Template "quick" gives its tasks 2 s; others have the server's 60 s.
  const meter = new UsageMeter({ modelTokens: { inc: (l: Record<string, string>, n: number) => void counted.push(`${l.agent}/${l.kind}=${n}`) } } as never, {
    deadlineMs: (t) => (t === 'quick' ? 2000 : undefined),
  });
  const failed: string[] = [];
  const failures: string[] = [];
  const retried: number[] = [];
  const reports = new ModelReports({
    credentials,
    meter,
    taskDeadlineMs: 60_000,
    events: {
      retry: (_g, p) => void retried.push(p.attempt),
      failed: (g, e) => {
        failed.push(`${g.ref.name}:${e.reason}`);
        failures.push(e.message);
      },
    },
  });
  const modelCredential = credentials.issue(ref, 'uid-1');
  const credential = credentials.issueReport(ref)!;

  it('applies a report of a report credential it issued to that agent’s task', async () => {
    meter.taskStarted(ref, 'uid-1');
    const usage = { input_tokens: 3, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    expect(await reports.apply(credential, { type: 'usage', model: 'm', usage })).to.deep.equal({ status: 204, budgeted: false });
    expect(meter.taskEnded(ref, 'uid-1')).to.deep.equal(usage);
    expect(counted).to.deep.equal(['ada/input=3', 'ada/output=5']);
    expect((await reports.apply(credential, { type: 'failed', error: { message: 'x', reason: 'ModelCredentialRejected' } })).status).to.equal(204);
    expect(failed).to.deep.equal(['ada:ModelCredentialRejected']);
  });

  it('times a task’s first model request when the first “requested” report comes, once per task', async () => {
    const firstModelRequest = new Histogram({ name: 'first_request_seconds', help: 'test', registers: [] });
    const modelTokens = new Counter({ name: 'tokens', help: 'test', labelNames: ['namespace', 'agent', 'model', 'kind'], registers: [] });
    const timing = new UsageMeter({ modelTokens, firstModelRequest });
    const timed = new ModelReports({ credentials, meter: timing, taskDeadlineMs: 60_000 });
    const count = async () => (await firstModelRequest.get()).values.find((v) => v.metricName === 'first_request_seconds_count')?.value ?? 0;
    expect((await timed.apply(credential, { type: 'requested' })).status, 'no task handed over yet').to.equal(204);
    expect(await count()).to.equal(0);
    timing.taskStarted(ref, 'uid-1');
    await timed.apply(credential, { type: 'requested' });
    await timed.apply(credential, { type: 'requested' }); // the tool loop's next request
    expect(await count()).to.equal(1);
    timing.taskStarted(ref, 'uid-1');
    await timed.apply(credential, { type: 'requested' });
    expect(await count()).to.equal(2);
  });

  it('ends a task when a retry would wait past its template’s deadline, which the sidecar cannot know', async () => {
    const retry = (attempt: number, delayMs: number) => ({ type: 'retry', payload: { attempt, of: 8, delayMs, status: 529, message: 'model overloaded' } });
    failed.length = 0;
    meter.taskStarted(ref, 'uid-1', 'default');
    expect((await reports.apply(credential, retry(1, 5000))).status).to.equal(204);
    expect(retried, 'within the server’s 60 s: a retry').to.deep.equal([1]);
    expect(failed).to.deep.equal([]);
    meter.taskStarted(ref, 'uid-1', 'quick');
    expect((await reports.apply(credential, retry(1, 1000))).status).to.equal(204);
    expect((await reports.apply(credential, retry(2, 2000))).status).to.equal(204);
    expect(retried, 'the second wait would end past the 2 s deadline').to.deep.equal([1, 1]);
    expect(failed).to.deep.equal(['ada:ModelUnavailable']);
    expect(failures.at(-1)).to.equal("the model is unavailable (HTTP 529); gave up after 1 retry: the task's model deadline (2 s) would pass");
  });

  it('refuses the agent’s model credential (what its tools can read): only the sidecar’s report credential posts', async () => {
    meter.taskStarted(ref, 'uid-1');
    const invented = { input_tokens: 1e9, output_tokens: 1e9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    expect(await reports.apply(modelCredential, { type: 'usage', model: 'm', usage: invented })).to.deep.equal({
      status: 401,
      message: "a valid report credential (a pod's model-proxy sidecar's) is required",
    });
    expect(meter.taskEnded(ref, 'uid-1'), 'nothing counted').to.equal(undefined);
    expect(credentials.authenticate(credential), 'nor is the report credential a model credential').to.equal(undefined);
  });

  it('keeps the report credential across a restart (adopt) and a warm-pool hand-over (rebind); a re-issue replaces it', () => {
    const other = new CredentialRegistry();
    const slot = { namespace: 'team-a', name: '.slot-1' };
    other.adopt(slot, 'uid-s', 'apmc_slot', 'apmr_slot');
    expect(other.authenticateReport('apmr_slot')?.ref).to.deep.equal(slot);
    expect(other.rebind(slot, ref, 'uid-2')).to.equal(true);
    expect(other.authenticateReport('apmr_slot')).to.deep.equal({ ref, uid: 'uid-2' });
    other.issue(ref, 'uid-3');
    expect(other.authenticateReport('apmr_slot'), 'a new worker’s credentials replace the old').to.equal(undefined);
    expect(() => other.adopt(ref, 'uid-3', 'apmc_x', 'apmc_not_a_report')).to.throw(/report credential/);
  });

  it('refuses an unknown or revoked credential (401) and a malformed report (400), naming the field', async () => {
    expect((await reports.apply('apmr_nope', { type: 'usage' })).status).to.equal(401);
    expect(parseReport({ type: 'usage', model: 'm', usage: { input_tokens: -1 } })).to.equal('usage.usage.input_tokens must be a non-negative integer');
    expect(parseReport({ type: 'failed', error: { message: 'x', reason: 'Whatever' } })).to.match(/reason/);
    expect(parseReport({ type: 'retry', payload: { attempt: 1, of: 8, delayMs: 10, status: 529 } })).to.match(/message/);
    expect(parseReport([])).to.match(/JSON object/);
    expect(await reports.apply(credential, { type: 'nope' })).to.deep.equal({ status: 400, message: 'type must be requested, admit, usage, retry or failed' });
    credentials.revoke(ref);
    expect((await reports.apply(credential, { type: 'usage', model: 'm', usage: {} })).status).to.equal(401);
  });
});
