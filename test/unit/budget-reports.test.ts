// The server's side of budgets for pods' model-proxy sidecars (docs/budgets.md "In the cluster
// home"): a sidecar asks with an `admit` report before each request of an agent with a budget,
// and the server's budget guard answers: allow, refuse (the task ended, reason BudgetExceeded),
// or hold until the budget is raised. Real registry (SQLite), informer, meter and guard; the
// agent controller's two task calls are recorded.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { type Agent, type AgentSpec, PAUSED } from '../../pkg/api/agent.js';
import { findCondition } from '../../pkg/api/condition.js';
import type { EventDraft } from '../../pkg/api/event.js';
import { BudgetGuard } from '../../pkg/controller/budget-guard.js';
import { CredentialRegistry, ModelReports, UsageMeter } from '../../pkg/modelproxy/index.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';

const usage = (n: number) => ({ input_tokens: n, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });

describe('budget admit reports (the server’s side of the sidecar)', function () {
  this.timeout(15_000);
  let dir: string;
  let state: SqliteState;
  let agents: Registry<Agent>;
  let informer: Informer<Agent>;
  const logger = createLogger({ level: 'silent' });
  const events: EventDraft[] = [];
  const failures: { message: string; reason: string }[] = [];
  const credentials = new CredentialRegistry();
  const metrics = new Metrics();
  const meter = new UsageMeter(metrics);
  let reports: ModelReports;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-budget-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
    informer = new Informer(agents, logger);
    await informer.start();
    const guard = new BudgetGuard({
      agents,
      cache: informer,
      usage: meter,
      tasks: {
        taskEvent: async (_ref, _uid, draft) => void events.push(draft),
        failTask: async (_ref, _uid, error) => void failures.push(error),
      },
      metrics,
      logger,
      pollMs: 50,
    });
    reports = new ModelReports({ credentials, meter, taskDeadlineMs: 60_000, budgets: guard });
  });
  after(() => {
    informer.stop();
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A busy agent (its first task assigned) with `budget`, its report credential and `spent` tokens metered. */
  async function agentWith(name: string, budget: AgentSpec['budget'], spent: number): Promise<{ agent: Agent; credential: string }> {
    const agent = await agents.create({
      apiVersion: '',
      kind: '',
      metadata: { name, namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
      spec: { instructions: 'work', ...(budget ? { budget } : {}) } as AgentSpec,
      status: undefined as unknown as Agent['status'],
    });
    const ref = { namespace: 'default', name };
    credentials.issue(ref, agent.metadata.uid);
    const credential = credentials.issueReport(ref)!;
    meter.taskStarted(ref, agent.metadata.uid);
    if (spent) expect(await reports.apply(credential, { type: 'usage', model: 'claude-sonnet-4-5', usage: usage(spent) })).to.include({ status: 204 });
    await waitFor(() => informer.get('default', name)?.metadata.resourceVersion === agent.metadata.resourceVersion);
    return { agent, credential };
  }

  it('an agent without a budget: allowed, and its answers say budgets do not apply (no more admits)', async () => {
    const { credential } = await agentWith('free', undefined, 500);
    expect(await reports.apply(credential, { type: 'admit' })).to.deep.equal({ status: 200, budgeted: false, answer: { allow: true } });
    expect(await reports.apply(credential, { type: 'requested' })).to.deep.equal({ status: 204, budgeted: false });
  });

  it('Stop: under the limit allowed (a warning past 80%), at it refused, the task ended with reason BudgetExceeded', async () => {
    const { credential } = await agentWith('stopper', { maxTokens: 100, onExceed: 'Stop' }, 85);
    expect(await reports.apply(credential, { type: 'admit' })).to.deep.equal({ status: 200, budgeted: true, answer: { allow: true } });
    expect(events.map((e) => e.type)).to.deep.equal(['budget_warning']);
    expect(events[0].payload).to.deep.include({ scope: 'agent', limit: 'maxTokens', spent: 85, max: 100 });
    await reports.apply(credential, { type: 'usage', model: 'claude-sonnet-4-5', usage: usage(20) });
    const out = await reports.apply(credential, { type: 'admit' });
    expect(out).to.deep.equal({
      status: 200,
      budgeted: true,
      answer: { allow: false, message: "the agent's budget is spent (105 of 100 tokens): the task is stopped" },
    });
    expect(failures).to.deep.equal([{ message: "the agent's budget is spent (105 of 100 tokens): the task is stopped", reason: 'BudgetExceeded' }]);
  });

  it('Pause: the admit waits with the agent Paused until the budget is raised, then allows', async () => {
    events.length = 0;
    const { credential } = await agentWith('pauser', { maxTokens: 100, onExceed: 'Pause' }, 150);
    let settled: unknown;
    const pending = reports.apply(credential, { type: 'admit' }).then((o) => (settled = o));
    await waitFor(() => informer.get('default', 'pauser')?.status.status === 'Paused');
    expect(findCondition(informer.get('default', 'pauser')!.status.conditions, PAUSED)).to.deep.include({ status: 'True', reason: 'BudgetExceeded' });
    expect(events.map((e) => e.type)).to.deep.equal(['budget_exceeded']);
    await new Promise((r) => setTimeout(r, 300));
    expect(settled, 'still held').to.equal(undefined);
    await agents.update('default', 'pauser', (a) => {
      a.spec.budget = { maxTokens: 1000, onExceed: 'Pause' };
    });
    expect(await pending).to.deep.equal({ status: 200, budgeted: true, answer: { allow: true } });
    await waitFor(() => informer.get('default', 'pauser')?.status.status !== 'Paused');
    expect(findCondition(informer.get('default', 'pauser')!.status.conditions, PAUSED)?.status).to.equal('False');
  });

  it('Pause: a held admit the sidecar gives up ends the hold (refused), and the agent is no longer Paused', async () => {
    const { credential } = await agentWith('quitter', { maxCostUsd: 0.0001, onExceed: 'Pause' }, 1000);
    const gone = new AbortController();
    const pending = reports.apply(credential, { type: 'admit' }, gone.signal);
    await waitFor(() => informer.get('default', 'quitter')?.status.status === 'Paused');
    gone.abort();
    const out = (await pending) as { answer: { allow: boolean } };
    expect(out.answer.allow).to.equal(false);
    await waitFor(() => informer.get('default', 'quitter')?.status.status !== 'Paused');
  });
});

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
