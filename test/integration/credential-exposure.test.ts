// Credentials during a running task, looked for the way an attacker would (docs/security.md,
// threat model): another local user reads every command line on the host (`ps -eww`), and an
// agent's own tools read every environment in their sandbox (`/proc/*/environ`). Two agents
// busy at once, one of them using a connector with a stored secret, the real engine and the
// scripted model. No command line holds the model key, a model credential, a worker's control
// token or any stored secret; no environment does either, so the tools find none of them, not
// even their own agent's (the worker gets them over IPC and adds the credential itself).

import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { EventClient, eventually, type Harness, startHarness, TEST_API_KEY } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { agentEnvironment, processesWith } from '../support/processes.js';
import { PLACEHOLDER_API_KEY } from '../../pkg/worker/server-relay.js';

const CONNECTOR_TOKEN = 'mcp-tok-exposure-2b7d9e41c6a3';
const IDLE_SECRET = 'idle-secret-exposure-8f05c3e1d9b7';
/** Markers on the tools' command lines: the host scan runs while both are running. */
const HOLD = { bystander: 'hold-bystander-51c2', prober: 'hold-prober-93ad' };
const held = (name: keyof typeof HOLD, ms: number): string => `@bash node -e "setTimeout(() => {}, ${ms})" ${HOLD[name]}`;

describe('credentials during a running task: command lines and environments (integration)', function () {
  this.timeout(180_000);
  let h: Harness;
  let mcp: TestMcpServer;
  const env: Record<string, Record<string, string>> = {};
  const workerEnv: Record<string, Record<string, string>> = {};
  const holding: Record<string, number[]> = {};
  let proberEvents: AgentEvent[];

  before(async () => {
    mcp = createTestMcpServer({ token: CONNECTOR_TOKEN });
    await mcp.start();
    h = await startHarness();
    expect(h.server.local!.sandboxed, 'bubblewrap must be usable for these tests (.ci/run installs it)').to.equal(true);
    for (const [name, value, allowedUrls] of [
      ['echo-token', CONNECTOR_TOKEN, [mcp.url]],
      ['idle', IDLE_SECRET, ['https://elsewhere.example']],
    ] as const) {
      const r = await h.api('POST', '/api/v1/secrets', { name, data: { token: value }, allowedUrls });
      expect(r.status, r.text).to.equal(201);
    }
    const c = await h.api('POST', '/api/v1/connectors', { name: 'echo', url: mcp.url, authSecretName: 'echo-token', authSecretKey: 'token' });
    expect(c.status, c.text).to.equal(201);

    const started = [
      await h.api('POST', '/api/v1/agents', { name: 'bystander', instructions: `${held('bystander', 60_000)}\n@say done` }),
      await h.api('POST', '/api/v1/agents', {
        name: 'prober',
        connectors: ['echo'],
        instructions: [
          '@tool mcp__echo__echo {"text":"in the middle"}',
          // Every environment the tool can see, reduced to the credentials' lines.
          `@bash cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -aE '^(ANTHROPIC_API_KEY|AGENTPLANE_AGENT_TOKEN)=' | sort -u`,
          held('prober', 6000),
          '@say probed',
        ].join('\n'),
      }),
    ];
    for (const r of started) expect(r.status, r.text).to.equal(201);
    const ws = new EventClient(`${h.url}/api/v1/agents/prober/ws`);
    await eventually(async () => Object.values(HOLD).every((m) => processesWith(m).length > 0), 60_000, 'both agents running their tools');
    for (const name of ['bystander', 'prober']) {
      workerEnv[name] = agentEnvironment(h.dataDir, name);
      env[name] = { ...h.server.local!.issuedSecrets({ namespace: 'default', name })! };
    }
    const needles = {
      'the model key': TEST_API_KEY,
      'the connector token': CONNECTOR_TOKEN,
      'a stored secret no connector uses': IDLE_SECRET,
      ...Object.fromEntries(
        Object.entries(env).flatMap(([name, e]) => [
          [`${name}'s model credential`, e.ANTHROPIC_API_KEY],
          [`${name}'s control token`, e.AGENTPLANE_AGENT_TOKEN],
        ]),
      ),
    };
    for (const [what, needle] of Object.entries(needles)) holding[what] = processesWith(needle);
    proberEvents = await ws.untilTaskEnd();
    ws.close();
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
  });

  it('found each agent’s worker from the host: its environment holds no credential and no control token', () => {
    for (const name of ['bystander', 'prober']) {
      expect(env[name].ANTHROPIC_API_KEY, name).to.match(/^apmc_/);
      expect(env[name].AGENTPLANE_AGENT_TOKEN, name).to.have.length.above(20);
      expect(workerEnv[name].AGENTPLANE_WORKSPACE, name).to.contain(name);
      expect(Object.values(workerEnv[name]), name).not.to.include.members([env[name].ANTHROPIC_API_KEY, env[name].AGENTPLANE_AGENT_TOKEN]);
      expect(workerEnv[name], name).not.to.have.any.keys('ANTHROPIC_API_KEY', 'AGENTPLANE_AGENT_TOKEN');
    }
    expect(env.prober.ANTHROPIC_API_KEY).not.to.equal(env.bystander.ANTHROPIC_API_KEY);
  });

  it('no process command line on the host holds the model key, a credential, a control token or a stored secret (ps -eww)', () => {
    expect(Object.keys(holding)).to.have.length(7);
    for (const [what, pids] of Object.entries(holding)) expect(pids, `processes with ${what} on their command line`).to.deep.equal([]);
    expect(mcp.calls, 'the engine used the connector during the task').to.include('in the middle');
  });

  it('the tools see no credential and no control token, their own agent’s included, and nothing of the key', () => {
    expect(proberEvents.at(-1)!.type, JSON.stringify(proberEvents.map((e) => [e.type, e.payload]))).to.equal('task_completed');
    const out = proberEvents.filter((e) => e.type === 'tool_result').map((e) => (e.payload as { output: string }).output)[1];
    // The only key in their environments is the placeholder their engine sends to the worker's relay.
    expect(out.split('\n').filter(Boolean)).to.deep.equal([`ANTHROPIC_API_KEY=${PLACEHOLDER_API_KEY}`]);
    for (const secret of [
      TEST_API_KEY,
      CONNECTOR_TOKEN,
      IDLE_SECRET,
      env.prober.ANTHROPIC_API_KEY,
      env.prober.AGENTPLANE_AGENT_TOKEN,
      env.bystander.ANTHROPIC_API_KEY,
      env.bystander.AGENTPLANE_AGENT_TOKEN,
    ]) {
      expect(out).not.to.contain(secret);
    }
  });
});
