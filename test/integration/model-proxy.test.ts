// The model key stays in the server (docs/security.md "Model proxy"): a real agent's real tools
// look for it everywhere they can (their environment, every process they can see, the
// workspace) and find only the per-agent credential. Token usage reaches task_completed and the
// metrics; a model that fails is retried visibly, and a rejected key ends the task readably.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { PLACEHOLDER_API_KEY } from '../../pkg/worker/server-relay.js';
import { CREDENTIAL_PREFIX } from '../../pkg/modelproxy/index.js';
import { runTask } from '../support/agents.js';
import { EventClient, eventually, type Harness, startHarness, TEST_API_KEY } from '../support/harness.js';

const outputs = (evs: AgentEvent[]): string[] => evs.filter((e) => e.type === 'tool_result').map((e) => (e.payload as { output: string }).output);

/** Every file's contents under `dir`, joined. */
function readAll(dir: string): string {
  let all = '';
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) all += readAll(p);
    else if (st.isFile()) all += readFileSync(p, 'latin1');
  }
  return all;
}

describe('model proxy (integration)', function () {
  let h: Harness;
  before(async () => {
    h = await startHarness({ modelRetry: { baseDelayMs: 300 } });
  });
  after(async () => {
    await h?.close();
  });

  describe('an agent looking for the model key', () => {
    let evs: AgentEvent[];
    let out: string[];
    before(async () => {
      evs = await runTask(
        h,
        'snoop',
        [
          '@bash env',
          `@bash tr '\\0' '\\n' < /proc/self/environ`,
          '@bash grep -a ANTHROPIC /proc/*/environ 2>/dev/null; echo searched',
          '@bash env > env-copy.txt; echo saved',
          '@say done',
        ].join('\n'),
      );
      out = outputs(evs);
      expect(out, JSON.stringify(out)).to.have.length(4);
    });

    it('the task completes', () => {
      expect(evs.at(-1)!.type).to.equal('task_completed');
    });

    it('finds the worker’s relay and a placeholder, never the key or a credential, in any process it can see', () => {
      // The engine's environment, which its tools inherit: the worker's relay to the proxy, and a
      // placeholder the relay replaces with the agent's credential (docs/security.md "Tool sandbox").
      expect(out[2]).to.match(/ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/internal\/v1\/model/);
      expect(out[2]).to.contain(`ANTHROPIC_API_KEY=${PLACEHOLDER_API_KEY}`);
      for (const o of out) expect(o).not.to.contain(TEST_API_KEY).and.not.to.contain(CREDENTIAL_PREFIX);
    });

    it('the events, the workspace and the logs hold no key', async () => {
      const all = await h.api('GET', '/api/v1/agents/snoop/events?limit=200');
      expect(all.text).to.contain('tool_result');
      expect(all.text).not.to.contain(TEST_API_KEY);
      const ws = readAll(h.server.local!.workspace({ namespace: 'default', name: 'snoop' }));
      expect(ws).to.contain('ANTHROPIC_BASE_URL'); // env-copy.txt is there
      expect(ws).not.to.contain(TEST_API_KEY);
      expect(h.logs.join('\n')).not.to.contain(TEST_API_KEY);
    });

    it('the model still got the real key, added by the proxy', () => {
      const reqs = h.model.requests.filter((r) => r.lastUserText.includes('/proc/self/environ'));
      expect(reqs.length).to.be.greaterThan(0);
      expect(reqs.map((r) => r.apiKey)).to.satisfy((keys: string[]) => keys.every((k) => k === TEST_API_KEY));
    });

    it('task_completed carries the task’s token usage, and the metric counts it', async () => {
      const done = evs.at(-1)!.payload as { usage?: { input_tokens: number; output_tokens: number } };
      expect(done.usage, JSON.stringify(done)).to.include.keys('input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens');
      expect(done.usage!.input_tokens).to.be.greaterThan(0);
      expect(done.usage!.output_tokens).to.be.greaterThan(0);
      const metrics = await h.api('GET', '/metrics');
      expect(metrics.text).to.match(/agentplane_model_tokens_total\{namespace="default",agent="snoop",model="[^"]+",kind="output"\} [1-9]/);
    });

    it('deleting the agent removes its token series from /metrics (the last probe of snoop)', async () => {
      expect((await h.api('DELETE', '/api/v1/agents/snoop?namespace=default')).status).to.equal(200);
      await eventually(async () => (await h.api('GET', '/api/v1/agents/snoop?namespace=default')).status === 404, 15_000, 'snoop gone');
      expect((await h.api('GET', '/metrics')).text).to.not.contain('agent="snoop"');
    });
  });

  // After the probes: these restart the server with other model settings.
  describe('when the model fails', () => {
    it('an overloaded model is retried with model_retry events, then the task completes', async () => {
      const evs = await runTask(h, 'patient', '@fail 529 overloaded_error the model is busy x2\n@say recovered after retries');
      const retries = evs.filter((e) => e.type === 'model_retry').map((e) => e.payload as { attempt: number; of: number; status: number; message: string });
      expect(retries.map((p) => [p.attempt, p.of, p.status])).to.deep.equal([
        [1, 8, 529],
        [2, 8, 529],
      ]);
      expect(retries[1].message).to.match(/^model overloaded, retry 2 of 8 in 600 ms/);
      const end = evs.at(-1)!;
      expect(end.type).to.equal('task_completed');
      expect((end.payload as { result: string }).result).to.equal('recovered after retries');
    });

    it('a model that stays down ends the task with a readable error', async () => {
      await h.restart({ modelRetry: { baseDelayMs: 100, maxRetries: 2 } });
      const evs = await runTask(h, 'unlucky', '@fail 503 overloaded_error the model is down\n@say never');
      expect(evs.filter((e) => e.type === 'model_retry')).to.have.length(2);
      const end = evs.at(-1)!;
      expect(end.type, JSON.stringify(evs.map((e) => [e.type, e.payload]))).to.equal('error');
      expect(end.payload).to.deep.include({ reason: 'ModelUnavailable' });
      expect((end.payload as { message: string }).message).to.contain('the model is down');
      expect(
        evs.filter((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type)),
        'one end',
      ).to.have.length(1);
    });

    it('a rejected model key ends the task within 30 s with an error saying so', async () => {
      await h.restart({ model: { apiKey: 'sk-ant-revoked-0000', baseUrl: h.model.url } });
      const t0 = Date.now();
      const r = await h.api('POST', '/api/v1/agents', { name: 'locked-out', instructions: '@say hello' });
      expect(r.status).to.equal(201);
      const ws = new EventClient(`${h.url}/api/v1/agents/locked-out/ws`);
      try {
        const evs = await ws.untilTaskEnd();
        expect(Date.now() - t0).to.be.below(30_000);
        const end = evs.at(-1)!;
        expect(end.type).to.equal('error');
        expect(end.payload).to.deep.include({ reason: 'ModelCredentialRejected' });
        expect((end.payload as { message: string }).message).to.contain('the model credential was rejected');
        expect(h.model.requests.at(-1)!.apiKey).to.equal('sk-ant-revoked-0000');
        // The engine's own end of the task (cancelled) is not a second end.
        await new Promise((res) => setTimeout(res, 1500));
        const all = (await h.api('GET', '/api/v1/agents/locked-out/events?limit=200')).body.events as AgentEvent[];
        expect(all.filter((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type))).to.have.length(1);
      } finally {
        ws.close();
      }
    });
  });
});
