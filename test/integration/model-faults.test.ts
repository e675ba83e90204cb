// The model endpoint failing for good: 429, 500 and 529 on every request, or no answer at all
// (docs/reliability.md "Model endpoint faults"). Each task is retried as the policy allows
// (model_retry events), then ends once, `error` with reason ModelUnavailable and a message that
// says what the model answered; the service stays ready and the next task works. A 403, like a
// 401, ends the task at once; a template's own deadline cuts its tasks' retries short.

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { runTask } from '../support/agents.js';
import { type Harness, startHarness } from '../support/harness.js';

interface Retry {
  attempt: number;
  of: number;
  status: number;
  message: string;
}

describe('model endpoint faults (integration)', function () {
  this.timeout(180_000);
  let h: Harness;
  before(async () => {
    // Two retries, 100 ms then 200 ms apart; a request with no response headers after 2 s is a timeout.
    h = await startHarness({ modelRetry: { baseDelayMs: 100, maxRetries: 2, responseTimeoutMs: 2000 } });
  });
  after(async () => {
    await h?.close();
  });

  const endsWithError = (evs: AgentEvent[]): { message: string; reason: string } => {
    const ends = evs.filter((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type));
    expect(
      ends.map((e) => e.type),
      JSON.stringify(evs.map((e) => [e.type, e.payload])),
    ).to.deep.equal(['error']);
    return ends[0].payload as { message: string; reason: string };
  };

  const cases: [number, string, RegExp][] = [
    [429, 'rate_limit_error', /^model rate limit reached, retry 1 of 2 in 100 ms/],
    [500, 'api_error', /^model error 500, retry 1 of 2 in 100 ms/],
    [529, 'overloaded_error', /^model overloaded, retry 1 of 2 in 100 ms/],
  ];
  for (const [status, type, retryText] of cases) {
    it(`${status} on every request: retried twice, then error ModelUnavailable saying so; still ready`, async () => {
      const evs = await runTask(h, `fails-${status}`, `@fail ${status} ${type} upstream says no (${status})\n@say never`);
      const retries = evs.filter((e) => e.type === 'model_retry').map((e) => e.payload as Retry);
      expect(retries.map((r) => [r.attempt, r.of, r.status])).to.deep.equal([
        [1, 2, status],
        [2, 2, status],
      ]);
      expect(retries[0].message).to.match(retryText);
      const end = endsWithError(evs);
      expect(end.reason).to.equal('ModelUnavailable');
      expect(end.message).to.equal(`the model is unavailable (HTTP ${status}: upstream says no (${status})); gave up after 2 retries`);
      expect((await h.api('GET', '/readyz')).status).to.equal(200);
    });
  }

  it('no answer within the response timeout: retried twice, then error ModelUnavailable; still ready', async () => {
    const evs = await runTask(h, 'silent', '@delay 6000\n@say too late');
    const retries = evs.filter((e) => e.type === 'model_retry').map((e) => e.payload as Retry);
    expect(retries.map((r) => [r.attempt, r.status])).to.deep.equal([
      [1, 0],
      [2, 0],
    ]);
    expect(retries[0].message).to.match(/^model request timed out or failed to connect, retry 1 of 2 in 100 ms \(no response within 2000 ms\)/);
    const end = endsWithError(evs);
    expect(end.reason).to.equal('ModelUnavailable');
    expect(end.message).to.equal('the model could not be reached after 2 retries: no response within 2000 ms');
    expect((await h.api('GET', '/readyz')).status).to.equal(200);
  });

  it('403 from the model: no retry, the task ends at once with error ModelCredentialRejected, like a 401', async () => {
    const t0 = Date.now();
    const evs = await runTask(h, 'forbidden', '@fail 403 permission_error this key may not use the model\n@say never');
    expect(Date.now() - t0).to.be.below(30_000);
    expect(evs.filter((e) => e.type === 'model_retry')).to.deep.equal([]);
    const end = endsWithError(evs);
    expect(end.reason).to.equal('ModelCredentialRejected');
    expect(end.message).to.equal(
      "the model credential was rejected (HTTP 403 from the model API: this key may not use the model); check the server's ANTHROPIC_API_KEY",
    );
  });

  it('the service takes the next task as usual', async () => {
    const evs = await runTask(h, 'fails-500', '@say fine again');
    expect(evs.at(-1)!.type, JSON.stringify(evs.map((e) => [e.type, e.payload]))).to.equal('task_completed');
    expect((await h.api('GET', '/healthz')).status).to.equal(200);
  });
});

describe('a template’s model task deadline (integration)', function () {
  this.timeout(180_000);
  let h: Harness;
  before(async () => {
    // Backoff 1 s, 2 s, 4 s: three retries take 7 s, within the server's default deadline (10
    // min) and well past the 2 s of template "quick".
    h = await startHarness({ templates: [{ name: 'quick', modelTaskDeadlineSeconds: 2 }, 'roomy'], modelRetry: { baseDelayMs: 1000 } });
  });
  after(async () => {
    await h?.close();
  });

  it('a task of a template without one retries within the server’s deadline and completes', async () => {
    const evs = await runTask(h, 'patient', '@fail 529 overloaded_error busy for the roomy one x3\n@say made it', 'default', { templateRef: 'roomy' });
    expect(evs.filter((e) => e.type === 'model_retry').map((e) => (e.payload as Retry).attempt)).to.deep.equal([1, 2, 3]);
    expect(evs.at(-1)!.type, JSON.stringify(evs.map((e) => [e.type, e.payload]))).to.equal('task_completed');
  });

  it('a task of template "quick" (2 s) gives up once a retry would wait past it: error ModelUnavailable', async () => {
    const evs = await runTask(h, 'hasty', '@fail 529 overloaded_error busy for the quick one x3\n@say never', 'default', { templateRef: 'quick' });
    const retries = evs.filter((e) => e.type === 'model_retry');
    expect(retries.length, 'fewer retries than the three the model needed').to.be.below(3);
    const ends = evs.filter((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type));
    expect(
      ends.map((e) => e.type),
      JSON.stringify(evs.map((e) => [e.type, e.payload])),
    ).to.deep.equal(['error']);
    const end = ends[0].payload as { message: string; reason: string };
    expect(end.reason).to.equal('ModelUnavailable');
    expect(end.message).to.match(/^the model is unavailable \(HTTP 529: busy for the quick one\); gave up after [0-2] retr(y|ies)$/);
  });
});
